package dev.idgen.client;

import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * An executor that runs {@code execute}d tasks on the calling thread (scheduled ones on its own
 * thread), so that with in-process servers on direct executors a lease request completes before the
 * call that started it returns: tests then see the source's decisions, not thread timing.
 */
final class InlineScheduler extends ScheduledThreadPoolExecutor {
  InlineScheduler() {
    super(1, r -> {
      Thread t = new Thread(r, "test-inline-scheduler");
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public void execute(Runnable command) {
    command.run();
  }
}
