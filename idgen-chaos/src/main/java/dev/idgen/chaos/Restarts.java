package dev.idgen.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Server restarts that run beside the fault thread (an owner kill's: a server's start takes tens of seconds on
 * a busy machine), on one thread of their own. The fault thread waits for them ({@link #awaitAll}) before a
 * fault that starts, stops, kills or cuts a server, and at the end; a restart that failed fails the run there.
 *
 * <p>Threads: submitted and awaited by the fault thread only (its list of restarts under way); run on the
 * single {@code chaos-restart} thread, so that two restarts never overlap.
 */
final class Restarts {
  /** How long the fault thread waits for a restart (three starts of at most 120 s each). */
  private static final long RESTART_WAIT_SECONDS = 400;

  private final ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "chaos-restart");
    t.setDaemon(true);
    return t;
  });
  private final List<Future<?>> pending = new ArrayList<>();

  /** Runs {@code restart} on the restarts' thread and returns at once. */
  void submit(FaultContext.Step restart) {
    pending.add(executor.submit(() -> {
      restart.run();
      return null;
    }));
  }

  /**
   * Waits for the restarts under way (each at most {@value #RESTART_WAIT_SECONDS} s); a restart that failed
   * fails the run here, as it would have on the fault thread.
   */
  void awaitAll() throws Exception {
    try {
      for (Future<?> f : pending) {
        try {
          f.get(RESTART_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
          throw e.getCause() instanceof Exception cause ? cause : e;
        }
      }
    } finally {
      pending.clear();
    }
  }

  void shutdownNow() {
    executor.shutdownNow();
  }

  /** Interrupts the restarts and waits at most 30 s for them to end; false if they did not. */
  boolean shutdownAndWait() throws InterruptedException {
    executor.shutdownNow();
    return executor.awaitTermination(30, TimeUnit.SECONDS);
  }
}
