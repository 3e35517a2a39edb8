package dev.idgen.client;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.grpc.Status;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Logger;

/**
 * What one source holds and shares between its rooms: the lease being handed out ({@code current}), the
 * ranges queued behind it, the outcomes callers must see (exhausted, rejections, the last retryable
 * failure) and the counters behind {@code stats()}; installing the next range as the current lease,
 * dropping ranges, and becoming strict. The base of the chain {@code SourceState} → {@link LeaseExpiry}
 * → {@link Refiller} → {@link Waiters} → {@link LeasedIdSource}: one object per source, split by concern.
 * The design (refill rule, lease size, expiry, strict sequences) is in docs/client.md, "Inside a source".
 *
 * <p>Threads: any caller's thread, the client's executor (call callbacks, expiry, retry and deadline
 * tasks). One lock, {@code lock}, guards everything here but {@code current}, {@code strict} and the
 * leases' indexes; every room of the chain uses this same lock, reached as {@code this.lock}, so Error
 * Prone checks each access against it (a lock shared between separate objects could not be checked).
 * It is held only for in-memory bookkeeping: nothing calls gRPC or the executor, or completes a future,
 * while holding it (a direct executor could call back into the source on the same thread). Waiting
 * callers wait on {@code changed}.
 *
 * <p>{@code current} is volatile because the fast path reads it without the lock; it is written only
 * under the lock, and a lease is published complete (its range and refill mark are final). {@code strict}
 * is volatile because slow paths read it before they take the lock; it is set once, under the lock,
 * before {@code current} is replaced by an empty lease, so a caller that finds that lease empty sees it.
 */
@ThreadSafe
abstract class SourceState {
  static final Logger logger = Logger.getLogger(LeasedIdSource.class.getName());

  /**
   * A range received from a server: waiting in {@code queue} for its turn, then the current lease
   * ({@code currentRange}) until replaced, and until then possibly dropped when it expires.
   */
  @SuppressWarnings("ClassCanBeStatic") // inner, so that its fields can be @GuardedBy the source's lock
  final class Range {
    final long first;
    final long count;
    final long stride;
    /** Whether the range has a {@code valid_for}; if so it expires at {@code expiresAt} (ticker time). */
    final boolean expires;
    final long expiresAt;
    /**
     * Set once the source no longer holds the range: replaced, expired, or the source closed. Read and
     * written only through the source's {@code isGone} and {@code markGone}.
     */
    @GuardedBy("SourceState.this.lock") private boolean gone;
    /**
     * The task scheduled for its expiry, cancelled on close. Read and written only through the
     * source's {@code expiryTask} and {@code setExpiryTask}.
     */
    @GuardedBy("SourceState.this.lock") private ScheduledFuture<?> expiryTask;

    Range(long first, long count, long stride, boolean expires, long expiresAt) {
      this.first = first;
      this.count = count;
      this.stride = stride;
      this.expires = expires;
      this.expiresAt = expiresAt;
    }

    boolean dueAt(long now) {
      return expires && now - expiresAt >= 0;
    }
  }

  // A range's mutable fields, for the source that holds it. Every Range is created by (and only ever
  // held by) this source, so SourceState.this.lock of a range is this.lock; Error Prone cannot relate
  // the two, hence these accessors: their callers must hold this.lock, which is checked.
  @GuardedBy("lock")
  @SuppressWarnings("GuardedBy") // r's enclosing instance is this source: r's lock is this.lock
  final boolean isGone(Range r) {
    return r.gone;
  }

  @GuardedBy("lock")
  @SuppressWarnings("GuardedBy") // r's enclosing instance is this source: r's lock is this.lock
  final void markGone(Range r) {
    r.gone = true;
  }

  @GuardedBy("lock")
  @SuppressWarnings("GuardedBy") // r's enclosing instance is this source: r's lock is this.lock
  final ScheduledFuture<?> expiryTask(Range r) {
    return r.expiryTask;
  }

  @GuardedBy("lock")
  @SuppressWarnings("GuardedBy") // r's enclosing instance is this source: r's lock is this.lock
  final void setExpiryTask(Range r, ScheduledFuture<?> task) {
    r.expiryTask = task;
  }

  final String sequence;

  final ClientSettings settings;

  final Endpoints endpoints;

  final ScheduledExecutorService executor;

  /** The lease being handed out; replaced only under {@code lock}, read without it. */
  volatile Lease current = Lease.empty();

  final ReentrantLock lock = new ReentrantLock();

  /** Signalled when ranges arrive, a request ends, or the source closes. */
  final Condition changed = lock.newCondition();

  @GuardedBy("lock") final ArrayDeque<Range> queue = new ArrayDeque<>();

  @GuardedBy("lock") long queuedIds;

  /** The range {@code current} was made of; null for the empty lease and once it expired. */
  @GuardedBy("lock") Range currentRange;

  /**
   * Request the next lease when the IDs left fall to this: half of what was held at the last arrival,
   * plus what was handed out while the request it answered was on its way.
   */
  @GuardedBy("lock") long threshold;

  @GuardedBy("lock") boolean closed;

  /**
   * Set for good, under the lock, once a range said the sequence is {@code ORDERING_STRICT}; read by
   * the slow paths without it. See "Strict sequences: no cache" in docs/client.md.
   */
  volatile boolean strict;

  /** The strict requests not finished yet, for close(). */
  @GuardedBy("lock") final Set<StrictRequest> strictRequests = new HashSet<>();

  // Outcomes callers need to see.
  /** Set for good once a server said the sequence is exhausted. */
  @GuardedBy("lock") Failure exhausted;

  /**
   * The last non-retryable failure, and how many there were. A waiter reports those that came after
   * it began to wait; a caller that begins to wait reports one that nobody reported yet.
   */
  @GuardedBy("lock") Failure rejection;

  @GuardedBy("lock") long rejections;

  @GuardedBy("lock") long reportedRejections;

  /** The last retryable failure since the last success, for the message of a timed-out wait. */
  @GuardedBy("lock") Failure lastRetryable;

  /** The lowest per-call limit a server named (COUNT_ABOVE_LIMIT): a lease is never larger. */
  @GuardedBy("lock") long serverLimit = Long.MAX_VALUE;

  /** IDs that waiting callers still need: a lease is never smaller (unless a server's limit is). */
  @GuardedBy("lock") long waitingDemand;

  @GuardedBy("lock") int waiting;

  // Stats.
  /** IDs of leases that were current and are used up. */
  @GuardedBy("lock") long retiredIds;

  @GuardedBy("lock") long leases;

  @GuardedBy("lock") long waits;

  @GuardedBy("lock") long waitNanos;

  @GuardedBy("lock") long failedCalls;

  /** IDs dropped unused because their range expired (or, strict, because nobody asked for them in time). */
  @GuardedBy("lock") long idsExpired;

  /**
   * IDs taken from leases (counted in their {@code used()}) for callers that may still drop them: a bulk
   * caller that left the fast path holds its IDs until it returns or fails, a waiting {@code nextAsync()}
   * caller until its future took its ID. Taken under the lock, so {@code stats()} never sees an ID both
   * served and then not: {@code idsServed} counts an ID once nothing can drop it, and never goes down.
   */
  @GuardedBy("lock") long inHand;

  /**
   * Of the IDs counted in {@code idsExpired}, those taken from a lease and then dropped before their caller
   * got them (a bulk caller's whose lease expired meanwhile, say): not served.
   */
  @GuardedBy("lock") long takenThenExpired;

  /**
   * IDs taken for a {@code nextAsync()} caller whose future did not take them (cancelled meanwhile), and
   * queued again: served once taken again, not twice.
   */
  @GuardedBy("lock") long givenBack;

  /** IDs strict requests handed to their callers. */
  @GuardedBy("lock") long strictServed;

  /** {@code n} IDs in hand reached their caller: served from now on. */
  @GuardedBy("lock")
  final void handedOverLocked(long n) {
    inHand -= n;
  }

  /** Drops {@code n} IDs in hand, which their caller will not get: a gap, counted as expired, never served. */
  @GuardedBy("lock")
  final void dropTakenLocked(long n) {
    inHand -= n;
    idsExpired += n;
    takenThenExpired += n;
  }

  /** The lease being handed out, for tests that check its state. */
  final Lease currentLease() {
    return current;
  }

  /**
   * On close: drops everything the source holds (the current lease through {@link Lease#expire()}, so
   * that a thread that read it before gets no ID of it from now on), and collects the expiry tasks to
   * cancel once unlocked.
   */
  @GuardedBy("lock")
  final void dropAllLocked(List<ScheduledFuture<?>> expiryTasks) {
    current.expire();
    retiredIds += current.used();
    current = Lease.empty();
    if (currentRange != null) {
      forgetLocked(currentRange, expiryTasks);
      currentRange = null;
    }
    for (Range r : queue) {
      forgetLocked(r, expiryTasks);
    }
    queue.clear();
    queuedIds = 0;
  }

  /** On close: the range is gone, and its expiry task, if any, is to be cancelled once unlocked. */
  @GuardedBy("lock")
  private void forgetLocked(Range r, List<ScheduledFuture<?>> expiryTasks) {
    markGone(r);
    ScheduledFuture<?> task = expiryTask(r);
    if (task != null) {
      expiryTasks.add(task);
    }
  }

  @GuardedBy("lock")
  final IdGenClientException exhaustedLocked() {
    return exhaustedFailure(exhausted);
  }

  final IdGenClientException exhaustedFailure(Failure f) {
    return failure(IdGenClientException.Reason.EXHAUSTED, f.status(), "the sequence is exhausted: " + f.describe(),
        f.cause());
  }

  @GuardedBy("lock")
  final IdGenClientException rejectedLocked() {
    reportedRejections = rejections;
    return failure(IdGenClientException.Reason.REJECTED, rejection.status(),
        "the lease request failed: " + rejection.describe(), rejection.cause());
  }

  @GuardedBy("lock")
  final IdGenClientException timedOutLocked() {
    return timedOut("no lease arrived", lastRetryable);
  }

  /** {@code TIMED_OUT}: {@code what} (e.g. "no lease arrived") and the last retryable failure, if any. */
  final IdGenClientException timedOut(String what, Failure last) {
    String waited = what + " within " + TimeUnit.NANOSECONDS.toMillis(settings.waitDeadlineNanos())
        + " ms (the client's wait deadline)";
    if (last == null) {
      return failure(IdGenClientException.Reason.TIMED_OUT, null,
          waited + "; the request in flight has not answered yet", null);
    }
    return failure(IdGenClientException.Reason.TIMED_OUT, last.status(),
        waited + "; last failure: " + last.describe(), last.cause());
  }

  final IdGenClientException failure(
      IdGenClientException.Reason reason, Status status, String message, Throwable cause) {
    return new IdGenClientException(sequence, reason, status, message, cause);
  }

  /**
   * Makes the next queued range the current lease, with its refill mark, and says whether a request
   * should be launched now. Only when the current lease is used up. Queued ranges that are due by the
   * ticker are dropped first; if none is left, the current lease stays (used up) and only the refill
   * rule is checked.
   */
  @GuardedBy("lock")
  final boolean installNextLocked() {
    dropDueQueuedLocked();
    Range r = queue.pollFirst();
    if (r == null) {
      return requestLocked(false);
    }
    queuedIds -= r.count;
    retiredIds += current.used();
    if (currentRange != null) {
      markGone(currentRange);
    }
    currentRange = r;
    long left = r.count + queuedIds;
    // After taking index i of r, left - (i + 1) IDs are left: the mark is the first i where that is
    // at most the threshold. Before r, or beyond it: no mark in this lease (checked now, or at the
    // next install).
    long mark = left - threshold - 1;
    current = new Lease(
        r.first, r.stride, r.count, mark >= 0 && mark < r.count ? mark : -1, r.expires, r.expiresAt);
    return requestLocked(false);
  }

  /**
   * The sequence is strict: from now on nothing is cached (docs/client.md, "Strict sequences: no cache"). Drops what the
   * source holds and returns how many IDs that was; wakes the callers that wait, which go on with
   * strict requests of their own.
   */
  @GuardedBy("lock")
  final long becomeStrictLocked() {
    strict = true; // before current is replaced: a caller that finds the new lease empty sees it
    long dropped = current.expire();
    retiredIds += current.used();
    current = Lease.empty();
    if (currentRange != null) {
      markGone(currentRange);
      currentRange = null;
    }
    for (Range q : queue) {
      markGone(q);
      dropped += q.count;
    }
    queue.clear();
    queuedIds = 0;
    threshold = 0;
    changed.signalAll();
    return dropped;
  }

  /**
   * Drops the queued ranges that are due by the ticker (read only if a queued range expires at all),
   * and returns how many IDs that dropped.
   */
  @GuardedBy("lock")
  final long dropDueQueuedLocked() {
    long dropped = 0;
    long now = 0;
    boolean read = false;
    for (Iterator<Range> it = queue.iterator(); it.hasNext(); ) {
      Range r = it.next();
      if (!r.expires) {
        continue;
      }
      if (!read) {
        now = settings.ticker().nanos();
        read = true;
      }
      if (r.dueAt(now)) {
        it.remove();
        markGone(r);
        queuedIds -= r.count;
        dropped += r.count;
      }
    }
    idsExpired += dropped;
    return dropped;
  }

  @GuardedBy("lock")
  final long idsLeftLocked() {
    return queuedIds + current.remaining();
  }

  /**
   * IDs of leases handed out so far: taken, and no longer in a caller's hands that may drop them. Every
   * term changes under the lock but {@code current.used()}, which only lock-free takes that can no longer
   * be dropped raise: the value never goes down.
   */
  @GuardedBy("lock")
  final long leasedServedLocked() {
    return retiredIds + current.used() - inHand - takenThenExpired - givenBack;
  }

  SourceState(String sequence, ClientSettings settings, Endpoints endpoints, ScheduledExecutorService executor) {
    this.sequence = Objects.requireNonNull(sequence, "sequence");
    this.settings = settings;
    this.endpoints = endpoints;
    this.executor = executor;
  }

  /**
   * Decides to request a lease if none is in flight and the refill rule holds (or {@code force}: a
   * caller has nothing left), and sizes it. Returns whether the caller must launch it (see {@link
   * Refiller}).
   */
  @GuardedBy("lock")
  abstract boolean requestLocked(boolean force);
}
