package dev.idgen.server.lifecycle;

import com.google.errorprone.annotations.ThreadSafe;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.annotation.Nullable;

/**
 * A task run every {@code interval} on a daemon thread of its own (the components' reloaders and monitors),
 * first after one interval, with a fixed delay between runs. Closing stops it. Thread-safe.
 */
@ThreadSafe
public final class PeriodicTask implements AutoCloseable {
  private final ScheduledExecutorService scheduler;

  private PeriodicTask(String threadName, Duration interval, Runnable task) {
    scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, threadName);
      t.setDaemon(true);
      return t;
    });
    long nanos = interval.toNanos();
    scheduler.scheduleWithFixedDelay(task, nanos, nanos, TimeUnit.NANOSECONDS);
  }

  /** Starts running {@code task}; it must not throw (an exception would end the schedule). */
  public static PeriodicTask every(Duration interval, String threadName, Runnable task) {
    return new PeriodicTask(threadName, interval, task);
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
  }

  /** Closes {@code task} if a component started one (null: it never started). */
  public static void closeIfStarted(@Nullable PeriodicTask task) {
    if (task != null) {
      task.close();
    }
  }
}
