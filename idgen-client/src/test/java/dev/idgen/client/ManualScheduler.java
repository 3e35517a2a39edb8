package dev.idgen.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * An executor on a {@link FakeTicker}'s time: {@code execute}d tasks run on the calling thread (so
 * that, with in-process servers on direct executors, a lease request completes before the call that
 * started it returns, as with {@link InlineScheduler}); scheduled tasks run only when the test calls
 * {@link #runDue()} (or {@link #advance(Duration)}), on the test's thread, once the ticker has reached
 * their time. Tests thus decide exactly when an expiry task runs, with no sleeping.
 */
final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {
  private final FakeTicker ticker;
  private final List<Task> pending = new ArrayList<>();
  private int scheduled;
  private volatile boolean shutdown;

  ManualScheduler(FakeTicker ticker) {
    this.ticker = ticker;
  }

  /** A task scheduled on ticker time. */
  private final class Task implements ScheduledFuture<Object> {
    final Runnable command;
    final long dueNanos;
    boolean cancelled;
    boolean done;

    Task(Runnable command, long dueNanos) {
      this.command = command;
      this.dueNanos = dueNanos;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(dueNanos - ticker.nanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      synchronized (ManualScheduler.this) {
        if (done || cancelled) {
          return false;
        }
        cancelled = true;
        pending.remove(this);
        return true;
      }
    }

    @Override
    public boolean isCancelled() {
      synchronized (ManualScheduler.this) {
        return cancelled;
      }
    }

    @Override
    public boolean isDone() {
      synchronized (ManualScheduler.this) {
        return done || cancelled;
      }
    }

    @Override
    public Object get() {
      throw new UnsupportedOperationException();
    }

    @Override
    public Object get(long timeout, TimeUnit unit) {
      throw new UnsupportedOperationException();
    }
  }

  /** Advances the ticker, then runs the tasks that are due. */
  void advance(Duration d) {
    ticker.advance(d);
    runDue();
  }

  /**
   * Runs, in time order on this thread, every scheduled task whose time the ticker has reached,
   * including those that tasks schedule meanwhile; returns how many ran.
   */
  int runDue() {
    int ran = 0;
    for (;;) {
      Task next = null;
      synchronized (this) {
        long now = ticker.nanos();
        for (Task t : pending) {
          if (now - t.dueNanos >= 0 && (next == null || t.dueNanos - next.dueNanos < 0)) {
            next = t;
          }
        }
        if (next == null) {
          return ran;
        }
        pending.remove(next);
        next.done = true;
      }
      next.command.run();
      ran++;
    }
  }

  /** Tasks scheduled and neither run nor cancelled yet. */
  synchronized int pending() {
    return pending.size();
  }

  /** Tasks ever scheduled. */
  synchronized int scheduled() {
    return scheduled;
  }

  @Override
  public void execute(Runnable command) {
    command.run();
  }

  @Override
  public synchronized ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    Task t = new Task(command, ticker.nanos() + unit.toNanos(delay));
    pending.add(t);
    scheduled++;
    return t;
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    throw new UnsupportedOperationException();
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
    throw new UnsupportedOperationException();
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
    throw new UnsupportedOperationException();
  }

  @Override
  public void shutdown() {
    shutdown = true;
  }

  @Override
  public List<Runnable> shutdownNow() {
    shutdown = true;
    synchronized (this) {
      List<Runnable> left = new ArrayList<>();
      pending.forEach(t -> left.add(t.command));
      pending.clear();
      return left;
    }
  }

  @Override
  public boolean isShutdown() {
    return shutdown;
  }

  @Override
  public boolean isTerminated() {
    return shutdown;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return shutdown;
  }
}
