package dev.idgen.client;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;

/**
 * Lease expiry: the task each range with a {@code valid_for} has on the client's executor, and what it
 * does when it runs (drop every range that is due, then install the next range or request one, and serve
 * or fail the callers that wait). Why ranges expire and the other places that drop them: docs/client.md,
 * "Lease expiry".
 *
 * <p>Threads: {@link #scheduleExpiry} runs on the thread that queued a range, after it released the lock
 * (scheduling never happens under it); the task runs on the executor and takes the source's lock. A task
 * whose range is gone by then does nothing; a task that runs early by the {@link Ticker} schedules
 * itself again. Tasks are cancelled only on close. The current lease is expired through {@link
 * Lease#expire()}, one atomic step on the index the fast path takes from, so the fast path needs no clock
 * read and no new volatile read.
 */
@ThreadSafe
abstract class LeaseExpiry extends SourceState {
  LeaseExpiry(String sequence, ClientSettings settings, Endpoints endpoints, ScheduledExecutorService executor) {
    super(sequence, settings, endpoints, executor);
  }

  /**
   * Serves or fails the waiting {@code nextAsync} callers (see {@link Waiters}); their futures are
   * completed by {@code after}, once unlocked. Returns whether the caller must {@link #launch()}.
   */
  @GuardedBy("lock")
  abstract boolean serveAsyncLocked(List<Runnable> after);

  /** Hands the request decided under the lock to the executor (see {@link Refiller}); never under the lock. */
  abstract void launch();

  /**
   * Drops one range the source holds: the current lease in one atomic step (see {@link
   * Lease#expire()}), or a queued range. Returns how many IDs that dropped.
   */
  @GuardedBy("lock")
  private long expireLocked(Range r) {
    long dropped;
    markGone(r);
    if (r == currentRange) {
      dropped = current.expire();
      currentRange = null;
    } else {
      queue.remove(r);
      queuedIds -= r.count;
      dropped = r.count;
    }
    idsExpired += dropped;
    return dropped;
  }

  /** Schedules the expiry task of a range that was queued, once the lock is released. */
  final void scheduleExpiry(Range r) {
    long delay = r.expiresAt - settings.ticker().nanos();
    ScheduledFuture<?> f;
    try {
      f = executor.schedule(() -> expiryDue(r, false), Math.max(0, delay), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // No task can drop the range later: drop it now (a gap, never a duplicate).
      expiryDue(r, true);
      return;
    }
    boolean cancel;
    lock.lock();
    try {
      cancel = closed || isGone(r);
      if (!cancel) {
        setExpiryTask(r, f);
      }
    } finally {
      lock.unlock();
    }
    if (cancel) {
      f.cancel(false);
    }
  }

  /**
   * The expiry task of {@code r} (or, {@code force}, its replacement when the executor refused it):
   * drops every range that is due, and then installs the next range or requests the next lease, as a
   * caller that found the lease used up would. See "Lease expiry" in docs/client.md.
   */
  private void expiryDue(Range r, boolean force) {
    boolean early;
    boolean launch = false;
    List<Runnable> after = new ArrayList<>();
    lock.lock();
    try {
      if (closed || isGone(r)) {
        return;
      }
      long now = settings.ticker().nanos();
      early = !force && !r.dueAt(now); // by the ticker: scheduled again below, once unlocked
      if (!early) {
        launch = dropDueLocked(force ? expireLocked(r) : 0, now, after);
      }
    } finally {
      lock.unlock();
    }
    after.forEach(Runnable::run);
    if (early) {
      scheduleExpiry(r);
    }
    if (launch) {
      launch();
    }
  }

  /**
   * Drops every range due at {@code now} (the current lease, queued ranges), then does what a caller
   * that found the lease used up would do: installs the next range or checks the refill rule, and
   * serves or fails the waiting callers ({@code after}, once unlocked). {@code dropped}: IDs the caller
   * dropped already, for the log. Returns whether the caller must {@link #launch()}.
   */
  @GuardedBy("lock")
  final boolean dropDueLocked(long dropped, long now, List<Runnable> after) {
    if (currentRange != null && currentRange.dueAt(now)) {
      dropped += expireLocked(currentRange);
    }
    dropped += dropDueQueuedLocked();
    if (dropped > 0 && logger.isLoggable(Level.FINE)) {
      logger.log(Level.FINE, "sequence ''{0}'': dropped {1} unused IDs of expired leases",
          new Object[] {sequence, dropped});
    }
    boolean launch = (current.remaining() == 0 && !queue.isEmpty()) ? installNextLocked() : requestLocked(false);
    launch |= serveAsyncLocked(after);
    if (waiting > 0) {
      changed.signalAll();
    }
    return launch;
  }
}
