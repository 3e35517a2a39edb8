package dev.idgen.bench.loadgen;

/**
 * A caller on its own thread (client mode: next() blocks only when the source is empty); its counters are
 * that thread's until {@link #await} joined it.
 */
abstract class ThreadCaller extends Caller {
  private final Thread thread;

  ThreadCaller(String name, Phase phase) {
    super(phase);
    thread = new Thread(this::loop, name);
    thread.setDaemon(true);
  }

  abstract void loop();

  void pauseAfterError() {
    try {
      Thread.sleep(ERROR_PAUSE_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  void start() {
    thread.start();
  }

  @Override
  boolean await(long millis) throws InterruptedException {
    thread.join(millis);
    return !thread.isAlive();
  }
}
