package dev.idgen.client;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Callers that wait for a lease: blocked callers ({@link Waiter}: {@code next()}, {@code next(n)},
 * {@code fill}) and {@code nextAsync()} callers ({@link AsyncWaiter}), with their wait deadlines, the
 * demand they add to the next lease's size, and the check a bulk caller makes, before it returns, of
 * the IDs it took from leases that may have expired since (docs/client.md, "Lease expiry" and
 * "Callers that do not block").
 *
 * <p>Threads: a blocked caller waits on the source's {@code changed} condition, under the source's lock,
 * bounded by its deadline; its {@code Waiter} is used by its own thread only. {@code nextAsync()} waiters
 * are queued in {@code asyncWaiters}, under the lock; every event that may serve or fail them runs
 * {@link #serveAsyncLocked} under the lock, which serves them in arrival order, and their futures are
 * completed only after the lock is released (dependent stages never run under it). Each has a deadline
 * task on the executor; its {@code timeout} field is volatile because the task is scheduled outside the
 * lock and cancelled by whichever thread completes the future.
 *
 * <p>IDs that a caller here may still drop are taken under the lock and counted in {@code inHand} in the
 * same step, so that {@code stats()} counts them served only once they can no longer be dropped: a bulk
 * caller takes every ID of its slow path that way ({@link #awaitIds}) and settles them when it returns or
 * fails ({@link #keepUnexpired}); a {@code nextAsync()} caller's ID is settled once its future took it,
 * or given back to the source if the future was cancelled in between ({@code handOver}).
 */
@ThreadSafe
abstract class Waiters extends Refiller {
  Waiters(String sequence, ClientSettings settings, Endpoints endpoints, ScheduledExecutorService executor) {
    super(sequence, settings, endpoints, executor);
  }

  /**
   * A caller of {@link #nextAsync()} that found nothing left: completed when a lease arrives or its wait
   * fails. Its {@code future} is completed only outside the source's lock.
   */
  static final class AsyncWaiter {
    final CompletableFuture<Long> future = new CompletableFuture<>();
    final long startNanos = System.nanoTime();
    /** The source's {@code rejections} when it began to wait: later ones are reported to it. */
    final long rejectionsAtStart;
    /** The task for its wait deadline, once scheduled; cancelled when it is done. */
    volatile ScheduledFuture<?> timeout;

    AsyncWaiter(long rejectionsAtStart) {
      this.rejectionsAtStart = rejectionsAtStart;
    }

    /** Cancels the deadline task (if already scheduled: else whoever schedules it sees the future done). */
    void cancelTimeout() {
      ScheduledFuture<?> t = timeout;
      if (t != null) {
        t.cancel(false);
      }
    }
  }

  /** What a failed bulk call leaves where it had written an ID it then dropped: IDs are never negative. */
  static final long NO_ID = -1;

  /** Callers of {@link #nextAsync()} waiting for a lease, in arrival order. */
  @GuardedBy("lock") final ArrayDeque<AsyncWaiter> asyncWaiters = new ArrayDeque<>();

  /** Schedules {@code w}'s wait deadline; if the executor refuses, the wait is bounded by close() only. */
  final void scheduleAsyncTimeout(AsyncWaiter w) {
    ScheduledFuture<?> t;
    try {
      t = executor.schedule(() -> asyncTimedOut(w), settings.waitDeadlineNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The executor is shut down: the client is closing, which fails the waiter.
      return;
    }
    w.timeout = t;
    if (w.future.isDone()) { // served meanwhile: its completion may not have seen the task
      t.cancel(false);
    }
  }

  private void asyncTimedOut(AsyncWaiter w) {
    List<Runnable> after = new ArrayList<>();
    IdGenClientException e;
    lock.lock();
    try {
      if (!asyncWaiters.remove(w)) {
        return;
      }
      leaveAsyncLocked(w, after);
      e = timedOutLocked();
    } finally {
      lock.unlock();
    }
    w.future.completeExceptionally(e);
    after.forEach(Runnable::run);
  }

  /** Accounts for the end of {@code w}'s wait; its deadline task is cancelled once unlocked. */
  @GuardedBy("lock")
  private void leaveAsyncLocked(AsyncWaiter w, List<Runnable> after) {
    waitNanos += System.nanoTime() - w.startNanos;
    waitingDemand--;
    after.add(w::cancelTimeout);
  }

  /**
   * Serves the waiting {@link #nextAsync()} callers in arrival order from what the source holds, or
   * fails them as a blocked caller would be failed (closed, exhausted, a rejection since they began
   * to wait); what is left waits, with a request forced as a blocked caller forces one. The futures
   * are completed by {@code after}, once unlocked. Returns whether the caller must {@link #launch()}.
   */
  @GuardedBy("lock")
  @Override
  final boolean serveAsyncLocked(List<Runnable> after) {
    boolean launch = false;
    while (!asyncWaiters.isEmpty()) {
      AsyncWaiter w = asyncWaiters.peekFirst();
      if (w.future.isDone()) { // cancelled by its caller
        asyncWaiters.pollFirst();
        leaveAsyncLocked(w, after);
        continue;
      }
      if (closed) {
        failAsyncLocked(failure(IdGenClientException.Reason.CLOSED, null, "the IdGenClient is closed", null),
            after);
        return false;
      }
      if (strict) {
        // It began to wait before the source knew: it goes on with a call of its own, in its deadline.
        asyncWaiters.pollFirst();
        leaveAsyncLocked(w, after);
        long deadline = w.startNanos + settings.waitDeadlineNanos();
        after.add(() -> StrictRequest.complete(this, w.future, deadline, true));
        continue;
      }
      Lease l = current;
      long i = l.take(1);
      if (i < l.count) {
        asyncWaiters.pollFirst();
        leaveAsyncLocked(w, after);
        long id = l.id(i);
        inHand++; // until its future took it: it may be cancelled before
        after.add(() -> handOver(w, l, id));
        launch |= i == l.refillAt && requestLocked(false);
        continue;
      }
      if (!queue.isEmpty()) {
        launch |= installNextLocked();
        continue;
      }
      if (exhausted != null) {
        failAsyncLocked(exhaustedLocked(), after);
        return launch;
      }
      if (rejections != w.rejectionsAtStart) {
        IdGenClientException e = rejectedLocked();
        for (Iterator<AsyncWaiter> it = asyncWaiters.iterator(); it.hasNext(); ) {
          AsyncWaiter x = it.next();
          if (x.rejectionsAtStart != rejections) {
            it.remove();
            leaveAsyncLocked(x, after);
            after.add(() -> x.future.completeExceptionally(e));
          }
        }
        continue;
      }
      launch |= requestLocked(true);
      break;
    }
    return launch;
  }

  /**
   * Completes a served {@code nextAsync()} caller's future with the ID taken for it, once unlocked. If the
   * future was cancelled (or completed by someone else) since, the ID goes back to the source.
   */
  private void handOver(AsyncWaiter w, Lease l, long id) {
    if (!w.future.complete(id)) {
      giveBack(l, id);
      return;
    }
    lock.lock();
    try {
      handedOverLocked(1);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Queues an ID taken from {@code l} that its caller did not take, first, as a range of its own with
   * {@code l}'s expiry, and serves the callers that wait. Dropped instead (a counted gap) if the source
   * no longer serves from leases (closed, strict) or {@code l} has expired.
   */
  private void giveBack(Lease l, long id) {
    List<Runnable> after = new ArrayList<>();
    Range back = null;
    boolean launch = false;
    lock.lock();
    try {
      if (closed || strict || l.expired() || (l.expires && l.dueAt(settings.ticker().nanos()))) {
        dropTakenLocked(1);
      } else {
        back = new Range(id, 1, 1, l.expires, l.expiresAt);
        queue.addFirst(back);
        queuedIds++;
        handedOverLocked(1);
        givenBack++; // counted as served when taken again
        launch = serveAsyncLocked(after);
        if (waiting > 0) {
          changed.signalAll();
        }
      }
    } finally {
      lock.unlock();
    }
    if (back != null && back.expires) {
      scheduleExpiry(back);
    }
    after.forEach(Runnable::run);
    if (launch) {
      launch();
    }
  }

  /** Fails every waiting {@link #nextAsync()} caller with {@code e}, once unlocked. */
  @GuardedBy("lock")
  private void failAsyncLocked(IdGenClientException e, List<Runnable> after) {
    for (AsyncWaiter w : asyncWaiters) {
      leaveAsyncLocked(w, after);
      after.add(() -> w.future.completeExceptionally(e));
    }
    asyncWaiters.clear();
  }

  /**
   * Before a bulk caller that left the fast path returns, or fails ({@code failing}): drops the IDs it
   * took from leases that have expired since ({@link Lease#expired()}: by their task, on close or once the
   * source became strict; or due by the ticker, which covers leases replaced before they expired, whose
   * task does nothing), and moves those it keeps to the front of {@code ids[from..pos)}. Returns where
   * they end. A current lease due by the ticker is expired first, as its task will (nobody may take from
   * it after). Unless failing, if it dropped IDs once the caller's wait deadline passed, it fails the
   * caller {@code TIMED_OUT} rather than ask again. When the caller is done (failing, or nothing dropped:
   * it returns), the IDs it keeps are handed over: served from now on. See "Lease expiry" in
   * docs/client.md.
   */
  final int keepUnexpired(Waiter w, long[] ids, int from, int pos, boolean failing) {
    List<Taken> taken = w.taken;
    if (taken == null) {
      return pos;
    }
    boolean launch = false;
    List<Runnable> after = new ArrayList<>();
    IdGenClientException timedOut = null;
    int out = from;
    lock.lock();
    try {
      long now = 0;
      boolean read = false;
      if (currentRange != null && currentRange.expires) {
        now = settings.ticker().nanos();
        read = true;
        if (currentRange.dueAt(now)) {
          launch = dropDueLocked(0, now, after);
        }
      }
      long dropped = 0;
      int kept = 0;
      for (Taken t : taken) {
        Lease l = t.lease();
        boolean expired = l.expired();
        if (!expired && l.expires) {
          if (!read) {
            now = settings.ticker().nanos();
            read = true;
          }
          expired = l.dueAt(now);
        }
        int n = t.to() - t.from();
        if (expired) {
          dropped += n;
          continue;
        }
        if (out != t.from()) {
          System.arraycopy(ids, t.from(), ids, out, n);
          t = new Taken(l, out, out + n);
        }
        taken.set(kept++, t);
        out += n;
      }
      taken.subList(kept, taken.size()).clear();
      if (dropped > 0) {
        dropTakenLocked(dropped);
        w.held -= dropped;
        if (!failing && System.nanoTime() - w.deadline() >= 0) {
          timedOut = timedOutLocked();
        }
      }
      if (failing || dropped == 0) {
        handedOverLocked(w.held);
        w.held = 0;
      }
    } finally {
      lock.unlock();
    }
    after.forEach(Runnable::run);
    if (launch) {
      launch();
    }
    if (timedOut != null) {
      throw timedOut;
    }
    return out;
  }

  /**
   * Drops the IDs a bulk caller holds (the source became strict while it waited: they may be older than
   * its call); a gap, counted as expired.
   */
  final void dropHeld(Waiter w) {
    lock.lock();
    try {
      dropTakenLocked(w.held);
      w.held = 0;
      w.taken = null;
    } finally {
      lock.unlock();
    }
  }

  /** IDs a bulk caller took from {@code lease} into {@code ids[from..to)} of its array. */
  record Taken(Lease lease, int from, int to) {}

  /**
   * The state of one caller on the slow path: whether, since when and for how many IDs it waits; for a
   * bulk caller, what it took. Used by that caller's thread only.
   */
  final class Waiter {
    final long createdNanos = System.nanoTime();
    /** What a bulk caller took from leases since it left the fast path, in array order; null if nothing. */
    List<Taken> taken;
    /** Of those, how many it still holds (counted in the source's {@code inHand}): all it kept so far. */
    long held;
    boolean waiting;
    long startNanos;
    long deadlineNanos;
    long rejectionsAtStart;
    /** What this caller still needs, counted in {@code waitingDemand}. */
    long demand;
    /** Whether it ever waited (and was counted in {@code waits}); unlike {@code waiting}, never reset. */
    boolean counted;

    /** Its wait deadline if it waited, else {@code otherwise}. */
    long deadlineOr(long otherwise) {
      return counted ? deadlineNanos : otherwise;
    }

    /** Its wait deadline if it waited, else the wait deadline from when it left the fast path. */
    long deadline() {
      return deadlineOr(createdNanos + settings.waitDeadlineNanos());
    }

    /** Records that the caller took IDs of {@code l} into {@code [start, end)} of its array. */
    void took(Lease l, int start, int end) {
      if (taken == null) {
        taken = new ArrayList<>();
      }
      int last = taken.size() - 1;
      if (last >= 0 && taken.get(last).lease() == l && taken.get(last).to() == start) {
        taken.set(last, new Taken(l, taken.get(last).from(), end));
      } else {
        taken.add(new Taken(l, start, end));
      }
    }

    /** Accounts for the wait, if there was one; called once, when the caller leaves. */
    void done() {
      if (!waiting) {
        return;
      }
      waiting = false;
      long waited = System.nanoTime() - startNanos;
      lock.lock();
      try {
        waitNanos += waited;
        waitingDemand -= demand;
      } finally {
        lock.unlock();
      }
    }
  }

  /** Starts {@code w}'s wait for {@code need} IDs. */
  @GuardedBy("lock")
  private void startWaitingLocked(Waiter w, long need) {
    w.waiting = true;
    w.counted = true;
    w.startNanos = System.nanoTime();
    w.deadlineNanos = w.startNanos + settings.waitDeadlineNanos();
    w.rejectionsAtStart = rejections;
    w.demand = need;
    waitingDemand += need;
    waits++;
  }

  /** What {@link #leaseLocked} returns when it decided a request: unlock, launch it, and look again. */
  private static final Lease LAUNCH = Lease.empty();

  /**
   * Returns a lease that had IDs left when looked at (the caller takes from it and comes back if
   * others were faster), installing the next queued range if the current lease is used up, or waits
   * for a range to arrive. Returns null once the source is strict: the caller then makes a strict
   * request.
   */
  final Lease awaitLease(Waiter w, long need) {
    for (;;) {
      Lease l;
      lock.lock();
      try {
        l = leaseLocked(w, need);
      } finally {
        lock.unlock();
      }
      if (l != LAUNCH) {
        return l;
      }
      launch();
    }
  }

  /**
   * A bulk caller's slow path: takes IDs for {@code ids[pos..to)} under the lock, as many as the lease
   * it finds or waits for holds, and holds them ({@code inHand}) until it returns; returns where they
   * end, or {@code -1} once the source is strict (the caller then makes a strict request).
   */
  final int awaitIds(Waiter w, long[] ids, int pos, int to) {
    for (;;) { // bounded: each pass takes, or waits within the caller's deadline, or launches a request
      boolean launch = false;
      int end = pos;
      lock.lock();
      try {
        Lease l = leaseLocked(w, to - pos);
        if (l == LAUNCH) {
          launch = true;
        } else if (l == null) {
          end = -1;
        } else {
          long i = l.take(to - pos);
          if (i < l.count) { // else others were faster: look again
            long got = Math.min(to - pos, l.count - i);
            for (long k = 0; k < got; k++) {
              ids[end++] = l.id(i + k);
            }
            w.took(l, pos, end);
            w.held += got;
            inHand += got;
            if (l.refillAt >= i && l.refillAt < i + got) {
              // The mark: the request is sized to cover what this caller still needs.
              if (w.waiting) {
                waitingDemand += to - end - w.demand;
                w.demand = to - end;
              }
              launch = requestLocked(false);
            }
          }
        }
      } finally {
        lock.unlock();
      }
      if (launch) {
        launch();
      }
      if (end != pos) {
        return end;
      }
    }
  }

  /**
   * One look under the lock for {@link #awaitLease}: a lease with IDs left, null once strict, or
   * {@link #LAUNCH} after deciding a request; waits on {@code changed} in between, within the caller's
   * deadline. Throws what the caller fails with (closed, exhausted, rejected, timed out, interrupted).
   */
  @GuardedBy("lock")
  private Lease leaseLocked(Waiter w, long need) {
    for (;;) {
      Lease l = current;
      if (closed) {
        throw failure(IdGenClientException.Reason.CLOSED, null, "the IdGenClient is closed", null);
      }
      if (strict) {
        return null;
      }
      if (l.taken() < l.count) {
        return l;
      }
      if (!queue.isEmpty()) {
        if (installNextLocked()) {
          return LAUNCH;
        }
        continue;
      }
      if (exhausted != null) {
        throw exhaustedLocked();
      }
      if (!w.waiting) {
        startWaitingLocked(w, need);
        if (rejections != reportedRejections) {
          // The last request failed while nobody waited: this caller is the first to hear.
          throw rejectedLocked();
        }
      } else if (w.demand != need) {
        waitingDemand += need - w.demand;
        w.demand = need;
      }
      if (rejections != w.rejectionsAtStart) {
        throw rejectedLocked();
      }
      if (requestLocked(true)) {
        return LAUNCH;
      }
      long left = w.deadlineNanos - System.nanoTime();
      if (left <= 0) {
        throw timedOutLocked();
      }
      waiting++;
      try {
        changed.awaitNanos(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw failure(IdGenClientException.Reason.INTERRUPTED, null, "interrupted while waiting for a lease", e);
      } finally {
        waiting--;
      }
    }
  }

  /**
   * The thread that took a lease's refill mark: check the rule, and request if it holds. If that
   * thread is a waiting caller ({@code w}), it first updates what it still needs, which the request
   * is sized to cover.
   */
  final void refillMarkReached(Waiter w, long stillNeeded) {
    boolean launch;
    lock.lock();
    try {
      if (w != null && w.waiting) {
        waitingDemand += stillNeeded - w.demand;
        w.demand = stillNeeded;
      }
      launch = requestLocked(false);
    } finally {
      lock.unlock();
    }
    if (launch) {
      launch();
    }
  }
}
