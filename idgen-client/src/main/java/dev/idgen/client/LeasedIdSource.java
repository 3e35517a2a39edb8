package dev.idgen.client;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Level;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * The {@link IdSource} of one sequence in one client: leased ranges held in memory, handed out
 * lock-free, and refilled in the background through {@code IdGen.Allocate}.
 *
 * <h2>Fast path</h2>
 * The range being handed out is a {@link Lease} in the volatile field {@code current}, carrying its
 * own atomic index. {@link #next()} reads the field, takes an index with one {@code getAndAdd}, and
 * if the index is inside the lease computes the ID: no lock, no allocation. A caller that finds the
 * lease used up takes the slow path below, which replaces the lease under the lock after re-checking
 * that nobody replaced it meanwhile (as Hazelcast's {@code AutoBatcher} does).
 *
 * <h2>Refill rule</h2>
 * Ranges received from the server wait in {@code queue} behind {@code current}. Each time a range
 * arrives the source notes half of what it then holds, {@code threshold}; as soon as the IDs left
 * (current lease plus queue) fall to {@code threshold} and no request is in flight, it requests the
 * next lease. "IDs left" is not counted on the fast path: when a range becomes the current lease the
 * index at which what is left reaches {@code threshold} is computed once ({@link Lease#refillAt}),
 * and the one thread that takes that index asks the source (under the lock) to check and request.
 * Every install, every completed request, and every caller that finds nothing left checks too, so a
 * missed mark only delays a request. With a steady rate this settles at holding about two leases and
 * requesting the next one whenever a lease is started, so a lease's whole lifetime covers the
 * request's round trip.
 *
 * <h2>Lease size</h2>
 * At each new request the source measures its own rate since the previous request (IDs handed out
 * over {@link Ticker} time) and asks for {@code rate × lifetime} IDs, clamped to
 * {@code [minLeaseSize, maxLeaseSize]} and to at most four times the previous size (one short burst
 * does not lease a million IDs), and at least what waiting bulk callers still need; never more than
 * the lowest per-call limit a server named (see Requests).
 *
 * <p>The lifetime is {@code min(leaseLifetime, valid_for / 2)}, {@code valid_for} being that of the
 * last range received that had one (none yet: {@code leaseLifetime}). By the refill rule a lease is
 * requested about when the one before it is started: it waits about one lifetime in the queue, then
 * is used for another, and so is used up about two lifetimes after its request was sent. Capping the
 * lifetime at half of {@code valid_for} is what lets a lease be used up at the measured rate before
 * it expires, instead of expiring in the queue (a {@code valid_for} of 2 s with a lease lifetime of
 * 5 s: leases of {@code rate × 1 s}, not {@code rate × 5 s}). With the defaults (a lease lifetime of
 * 5 s, servers' {@code valid_for} of 10 s) the cap does not bind. At a steady rate such a lease runs
 * out about as it expires, so jitter in the rate, or a rate that falls, drops its last few IDs (a
 * gap, counted). The floor stays {@code minLeaseSize}: a source slower than
 * {@code minLeaseSize / lifetime} lets part of each lease expire. A range without {@code valid_for}
 * (an older server) leaves the last cap in place, erring on the side of smaller leases while servers
 * of both kinds answer.
 *
 * <h2>Lease expiry</h2>
 * A server may stamp a range with {@code valid_for}: unused IDs of the range must be dropped once
 * that long has passed since the request was sent, because {@code AdvanceSequence} waits that long
 * after every server confirmed a new floor before it promises that no client stub hands out an ID at
 * or below the floor any more. Each attempt notes the {@link Ticker} reading just before its call is
 * started ({@code LeaseCall.sentNanos}); each range of that call expires at {@code sent + valid_for},
 * or never if {@code valid_for} is unset or zero (older servers). A negative {@code valid_for} makes
 * the range malformed: ignored, with a warning, like a range with no IDs. A range that expires stops
 * being handed out in three places:
 * <ul>
 *   <li>For each range that expires, a task is scheduled on the client's executor (as retries are)
 *       for its expiry. It runs under the lock, reads the ticker (a task that finds its range not due
 *       yet by the ticker schedules itself again) and drops every range that is due: the current
 *       lease through {@link Lease#expire()}, one {@code getAndAdd} that moves its index past the end,
 *       so that every {@code take} after it, on the fast path or in a bulk {@code fill}, gets no ID
 *       of it, while those before it had their IDs in time; queued ranges by removing them. It then
 *       does what a caller that found the lease used up would do: installs the next queued range, or
 *       checks the refill rule, which requests the next lease when nothing is left (callers that wait
 *       get that lease). The task of a range that is gone by then (used up and replaced, or the
 *       source closed) does nothing; tasks are not cancelled when their range is used up, only on
 *       close.</li>
 *   <li>Installing a queued range as the current lease first drops the queued ranges that are due
 *       by the ticker, even if their task has not run yet.</li>
 *   <li>A range that arrives already due is dropped at once. A call whose ranges all arrived
 *       expired does not trigger the usual check for the next request when it completes (it would
 *       only repeat itself, in a loop); callers that find nothing left still request.</li>
 *   <li>A bulk caller ({@code fill}, {@code next(n)}) that left the fast path (one take from the
 *       current lease did not serve it: it took from several leases, or waited for one) checks, just
 *       before it returns, under the lock, every lease it took IDs from ({@code Waiter.taken}): the
 *       IDs of a lease that has expired by then ({@link Lease#expired()}, or due by the ticker, which
 *       also covers a lease replaced before it expired, whose task does nothing) are dropped, the
 *       others moved to the front of its array, and it takes fresh IDs in their place, within its wait
 *       deadline (if that has passed, it fails {@code TIMED_OUT} instead). A current lease found due
 *       is expired there and then, as its task would. A bulk caller that fails writes
 *       {@link #NO_ID} where it had written an ID it dropped, so that its array holds no expired ID.
 *       Without this, IDs taken just before a wait for the next lease would be returned up to the
 *       wait deadline later, long after their lease expired.</li>
 * </ul>
 * The IDs dropped are a gap, never a duplicate; {@link IdSourceStats#idsExpired()} counts them, and
 * nothing is logged above {@code FINE}. An idle source thus lets its lease expire and renews it, at
 * {@code minLeaseSize} once its measured rate is nothing, every {@code valid_for}, so that its next
 * caller does not wait.
 *
 * <p>The fast path is unchanged: no clock read and no new volatile read; a lease expires through the
 * counter {@code next()} already increments. An ID is handed out when its index is taken: a
 * {@code take} linearized just before the task's {@code getAndAdd} still got an ID in time, even if
 * its thread returns it a little later: only a little, since a caller that took IDs and then waited
 * checks them again before it returns (above). The IDs such a caller drops are counted in
 * {@code idsExpired} and, its take having counted them in the lease's {@code used()}, in
 * {@code takenThenExpired}, which {@code idsServed} subtracts. The task runs when the executor gets to
 * it, so a busy or paused executor thread delays the expiry of the current lease by as much (installs
 * and returning bulk callers check the ticker themselves).
 *
 * <h2>Requests</h2>
 * At most one request is in flight: {@code inFlight} stays set from the decision to request through
 * retries until the call completes or fails for good. Calls start on the client's executor and their
 * callbacks run there too. A failure is judged by the server's {@code ErrorInfo} reason, or by its code
 * when it has none ({@link ServerError}): {@code UNAVAILABLE}, {@code DEADLINE_EXCEEDED},
 * {@code CANCELLED} (by a server that stopped mid-call), {@code ABORTED} and a
 * {@code RESOURCE_EXHAUSTED} that is not an old server's exhaustion (gRPC's limits, a proxy's rate
 * limit) are retried on another endpoint after a randomized, growing back-off, at least the server's
 * {@code RetryInfo} delay up to the largest back-off (a retry asks for new IDs, so it can waste IDs but
 * never duplicate one; the ranges a call streamed before it failed were leased to this source alone,
 * and are queued and used like any other); {@code SEQUENCE_EXHAUSTED} makes the source
 * exhausted for good once the ranges streamed before it are used; {@code COUNT_ABOVE_LIMIT} (a lease
 * larger than a server's {@code max-ids-per-call}) is asked again at once for the limit it names, and
 * no lease is larger from then on; any other status is reported to the callers waiting at that moment,
 * without retry (a later caller that finds nothing left asks again).
 *
 * <h2>Callers that do not block</h2>
 * {@link #tryNext()} takes the fast path and, when the lease is used up, what the slow path does short
 * of waiting (install the next queued range, report a failure, request a lease), then returns empty.
 * {@link #nextAsync()} returns a completed future on the fast path; otherwise the caller becomes an
 * {@code AsyncWaiter} in {@code asyncWaiters}, counted in {@code waits} and {@code waitingDemand} like
 * a blocked caller. Every event that may serve or fail waiters (ranges received, a call completed or
 * failed, an expiry, close) runs {@code serveAsyncLocked} under the lock, which takes IDs for the
 * waiters in arrival order (before any caller that comes later, since it runs under the same lock as
 * the queueing) or fails them, as a blocked caller would be; their futures are completed after the
 * lock is released, so dependent stages never run under it. Each waiter has a task on the executor
 * for its wait deadline.
 *
 * <h2>Strict sequences: no cache</h2>
 * A sequence created with {@code ORDERING_STRICT} promises that every ID handed out is larger than
 * every ID whose {@code Allocate} completed before the call that hands it out started, whichever
 * server either reached. An ID is only that new for a caller who asked before the {@code Allocate}
 * that leased it was sent: an ID held in memory is, by construction, older than the IDs of any call
 * that starts later, here or in another process, so handing it to a later caller would break the
 * promise. Everything above (leases held ahead, refills, prefetching) is therefore off for such a
 * sequence.
 *
 * <p>The servers stamp every range of a strict sequence with {@code ordering = ORDERING_STRICT}
 * (older servers leave it unset: per-server). The source learns it from the first response, with no
 * extra round trip: that is the response to the request {@link #start()} makes when the source is
 * created, whose IDs nobody asked for yet. When a range says strict, the source sets {@code strict}
 * for good (a sequence's ordering never changes) and drops everything it holds: that range and the
 * rest of its call, the current lease (through {@link Lease#expire()}, so that takes linearized after
 * it get nothing) and the queue; the IDs dropped are a gap, counted in
 * {@link IdSourceStats#idsExpired()}. From then on {@link #requestLocked} never requests, so there is
 * no refill and no prefetch.
 *
 * <p>Instead each caller's request is a {@code StrictRequest}: {@code Allocate} calls for exactly
 * the caller's count (a {@code next()} asks for 1, a {@code next(n)} or {@code fill} for {@code n}),
 * started on the executor after the caller asked, and each response's IDs go to that caller only:
 * into the request's own array, copied to the caller once it is finished (so a late callback never
 * writes into an array its caller already got back), and never kept for anyone else. IDs of a
 * response beyond the count asked for (a server never sends any) are ignored. Concurrent callers make
 * concurrent calls, one each, without the one-request-in-flight rule of leases. A request splits
 * into several calls, one after the other, only where one call may not carry it all
 * ({@code maxLeaseSize}, or a server's {@code COUNT_ABOVE_LIMIT}); each of those is started after the
 * caller asked too. Failures are judged by {@link ServerError} as for leases: retryable ones
 * ({@code UNAVAILABLE} with {@code OWNER_UNAVAILABLE} while a strict sequence's owner is taken over,
 * among them) are retried on another endpoint after the same back-off, honouring {@code RetryInfo} up
 * to the largest back-off, until the caller's wait deadline, which then fails it {@code TIMED_OUT}
 * with the last such status; {@code SEQUENCE_EXHAUSTED} makes the source exhausted; anything else is
 * reported to that caller ({@code REJECTED}). A range that arrives after its {@code valid_for} is
 * dropped and asked for again: at once if the call brought usable IDs too, else after a back-off (a
 * call whose ranges all arrive expired would otherwise be repeated at once, in a loop). A request may
 * keep a range long after it arrived, waiting for the next call of a split request or for a retry
 * through a take-over, so its ranges ({@code StrictRequest.ranges}) are checked again once every ID
 * arrived, and before the IDs of a failed request are written by {@code fill}: those that expired
 * meanwhile are dropped (a gap, in {@code idsExpired}), and asked for again, or not written.
 *
 * <p>The fast path is unchanged: in strict mode {@code current} is an empty lease, so {@code next()}
 * falls through to the slow path, which reads {@code strict}. {@link #tryNext()} returns empty
 * without calling (the source never holds an ID it could hand out without waiting);
 * {@link #nextAsync()} completes with its own call. Callers that were waiting for the first response
 * when the source learned the ordering go on with a request of their own, within their original
 * deadline ({@code awaitLease} returns null to blocked callers, {@code serveAsyncLocked} hands the
 * {@code nextAsync} ones over). A bulk caller among them drops the cached IDs it took before it waited
 * (leased before it asked, maybe, so not new enough; counted as expired) and asks for its whole count.
 *
 * <h2>Threads</h2>
 * Everything but {@code current} and the leases' indexes is guarded by {@code lock} (a lease's
 * {@code takenAtExpiry} too), held only for in-memory bookkeeping. Nothing calls into gRPC or the
 * executor while holding it (a direct executor or an in-process transport could otherwise call back
 * into the source on the same thread): methods that decide to request under the lock return
 * {@code true}, and their caller launches the request after unlocking; expiry tasks are scheduled,
 * and cancelled, after unlocking too. Callers that find nothing left wait on {@code changed}, bounded
 * by the wait deadline.
 */
@ThreadSafe
final class LeasedIdSource implements IdSource {
  private static final Logger logger = Logger.getLogger(LeasedIdSource.class.getName());

  /**
   * A range received from a server: waiting in {@code queue} for its turn, then the current lease
   * ({@code currentRange}) until replaced, and until then possibly dropped when it expires.
   */
  @SuppressWarnings("ClassCanBeStatic") // inner, so that its fields can be @GuardedBy the source's lock
  private final class Range {
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
    @GuardedBy("LeasedIdSource.this.lock") private boolean gone;
    /**
     * The task scheduled for its expiry, cancelled on close. Read and written only through the
     * source's {@code expiryTask} and {@code setExpiryTask}.
     */
    @GuardedBy("LeasedIdSource.this.lock") private ScheduledFuture<?> expiryTask;

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
  // held by) this source, so LeasedIdSource.this.lock of a range is this.lock; Error Prone cannot relate
  // the two, hence these accessors: their callers must hold this.lock, which is checked.

  @GuardedBy("lock")
  @SuppressWarnings("GuardedBy") // r's enclosing instance is this source: r's lock is this.lock
  private boolean isGone(Range r) {
    return r.gone;
  }

  @GuardedBy("lock")
  @SuppressWarnings("GuardedBy") // r's enclosing instance is this source: r's lock is this.lock
  private void markGone(Range r) {
    r.gone = true;
  }

  @GuardedBy("lock")
  @SuppressWarnings("GuardedBy") // r's enclosing instance is this source: r's lock is this.lock
  private ScheduledFuture<?> expiryTask(Range r) {
    return r.expiryTask;
  }

  @GuardedBy("lock")
  @SuppressWarnings("GuardedBy") // r's enclosing instance is this source: r's lock is this.lock
  private void setExpiryTask(Range r, ScheduledFuture<?> task) {
    r.expiryTask = task;
  }

  /**
   * A caller of {@link #nextAsync()} that found nothing left: completed when a lease arrives or its wait
   * fails. Its {@code future} is completed only outside the source's lock.
   */
  private static final class AsyncWaiter {
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
  private static final long NO_ID = -1;

  final String sequence;
  final ClientSettings settings;
  final Endpoints endpoints;
  final ScheduledExecutorService executor;
  private final Runnable attemptTask = this::attempt;

  /** The lease being handed out; replaced only under {@code lock}, read without it. */
  private volatile Lease current = Lease.empty();

  final ReentrantLock lock = new ReentrantLock();
  /** Signalled when ranges arrive, a request ends, or the source closes. */
  private final Condition changed = lock.newCondition();

  @GuardedBy("lock") private final ArrayDeque<Range> queue = new ArrayDeque<>();
  @GuardedBy("lock") private long queuedIds;
  /** The range {@code current} was made of; null for the empty lease and once it expired. */
  @GuardedBy("lock") private Range currentRange;
  /** Request the next lease when the IDs left fall to this: half of what was held at the last arrival. */
  @GuardedBy("lock") private long threshold;
  @GuardedBy("lock") boolean closed;
  /**
   * Set for good, under the lock, once a range said the sequence is {@code ORDERING_STRICT}; read by
   * the slow paths without it. See "Strict sequences" in the class comment.
   */
  private volatile boolean strict;
  /** The strict requests not finished yet, for close(). */
  @GuardedBy("lock") final Set<StrictRequest> strictRequests = new HashSet<>();

  // The request: decided, being attempted, or waiting for a retry.
  @GuardedBy("lock") private boolean inFlight;
  @GuardedBy("lock") private long requestCount;
  @GuardedBy("lock") private int failedAttempts;
  @GuardedBy("lock") private int lastEndpoint = -1;
  @GuardedBy("lock") private LeaseCall active;
  /** IDs the {@code active} attempt delivered so far. */
  @GuardedBy("lock") private long activeDelivered;
  /** Of those, IDs of ranges that had already expired when they arrived. */
  @GuardedBy("lock") private long activeExpiredOnArrival;
  @GuardedBy("lock") private ScheduledFuture<?> retry;

  // Outcomes callers need to see.
  /** Set for good once a server said the sequence is exhausted. */
  @GuardedBy("lock") Failure exhausted;
  /**
   * The last non-retryable failure, and how many there were. A waiter reports those that came after
   * it began to wait; a caller that begins to wait reports one that nobody reported yet.
   */
  @GuardedBy("lock") private Failure rejection;
  @GuardedBy("lock") private long rejections;
  @GuardedBy("lock") private long reportedRejections;
  /** The last retryable failure since the last success, for the message of a timed-out wait. */
  @GuardedBy("lock") private Failure lastRetryable;

  // Lease sizing.
  @GuardedBy("lock") private long leaseSize;
  @GuardedBy("lock") private long requests;
  @GuardedBy("lock") private long lastRequestNanos;
  @GuardedBy("lock") private long servedAtLastRequest;
  /** The {@code valid_for} of the last range that had one, 0 before any: caps the lifetime. */
  @GuardedBy("lock") private long validForNanos;
  /** The lowest per-call limit a server named (COUNT_ABOVE_LIMIT): a lease is never larger. */
  @GuardedBy("lock") long serverLimit = Long.MAX_VALUE;
  /** IDs that waiting callers still need: a lease is never smaller (unless a server's limit is). */
  @GuardedBy("lock") private long waitingDemand;
  @GuardedBy("lock") private int waiting;
  /** Callers of {@link #nextAsync()} waiting for a lease, in arrival order. */
  @GuardedBy("lock") private final ArrayDeque<AsyncWaiter> asyncWaiters = new ArrayDeque<>();

  // Stats.
  /** IDs of leases that were current and are used up. */
  @GuardedBy("lock") private long retiredIds;
  @GuardedBy("lock") long leases;
  @GuardedBy("lock") long waits;
  @GuardedBy("lock") long waitNanos;
  @GuardedBy("lock") long failedCalls;
  /** IDs dropped unused because their range expired (or, strict, because nobody asked for them in time). */
  @GuardedBy("lock") long idsExpired;
  /**
   * Of those, IDs that were taken from a lease (counted in its {@code used()}) by a bulk caller and dropped
   * before it returned, because their lease expired meanwhile: not served.
   */
  @GuardedBy("lock") private long takenThenExpired;
  /** IDs strict requests handed to their callers. */
  @GuardedBy("lock") long strictServed;

  LeasedIdSource(
      String sequence, ClientSettings settings, Endpoints endpoints, ScheduledExecutorService executor) {
    this.sequence = Objects.requireNonNull(sequence, "sequence");
    this.settings = settings;
    this.endpoints = endpoints;
    this.executor = executor;
    this.leaseSize = settings.minLeaseSize();
  }

  /** Requests the first lease, so that the first callers are less likely to wait. */
  void start() {
    boolean launch;
    lock.lock();
    try {
      launch = requestLocked(true);
    } finally {
      lock.unlock();
    }
    if (launch) {
      launch();
    }
  }

  @Override
  public String sequence() {
    return sequence;
  }

  @Override
  public long next() {
    Lease l = current;
    long i = l.take(1);
    if (i < l.count) {
      if (i == l.refillAt) {
        refillMarkReached(null, 0);
      }
      return l.id(i);
    }
    return nextSlow();
  }

  private long nextSlow() {
    if (strict) {
      long[] id = new long[1];
      StrictRequest.fill(this, id, 0, 1, System.nanoTime() + settings.waitDeadlineNanos(), false);
      return id[0];
    }
    Waiter w = new Waiter();
    try {
      for (;;) {
        Lease l = awaitLease(w, 1);
        if (l == null) {
          break; // the source learned that the sequence is strict while this caller waited
        }
        long i = l.take(1);
        if (i < l.count) {
          if (i == l.refillAt) {
            refillMarkReached(w, 0);
          }
          return l.id(i);
        }
      }
    } finally {
      w.done();
    }
    long[] id = new long[1];
    StrictRequest.fill(this, id, 0, 1, w.deadlineOr(System.nanoTime() + settings.waitDeadlineNanos()), w.counted);
    return id[0];
  }

  @Override
  public OptionalLong tryNext() {
    Lease l = current;
    long i = l.take(1);
    if (i < l.count) {
      if (i == l.refillAt) {
        refillMarkReached(null, 0);
      }
      return OptionalLong.of(l.id(i));
    }
    OptionalLong id = OptionalLong.empty();
    boolean launch = false;
    lock.lock();
    try {
      for (;;) {
        if (closed) {
          throw failure(IdGenClientException.Reason.CLOSED, null, "the IdGenClient is closed", null);
        }
        l = current;
        i = l.take(1);
        if (i < l.count) {
          id = OptionalLong.of(l.id(i));
          // |=: an install on an earlier pass may have decided a request (and set inFlight) already.
          launch |= i == l.refillAt && requestLocked(false);
          break;
        }
        if (!queue.isEmpty()) {
          launch |= installNextLocked();
          continue;
        }
        if (exhausted != null) {
          throw exhaustedLocked();
        }
        if (strict) {
          break; // holds nothing, ever: only a call of its own serves a caller, which tryNext cannot wait for
        }
        if (rejections != reportedRejections) {
          throw rejectedLocked();
        }
        launch |= requestLocked(true);
        break;
      }
    } finally {
      lock.unlock();
      if (launch) {
        launch();
      }
    }
    return id;
  }

  @Override
  public CompletableFuture<Long> nextAsync() {
    Lease l = current;
    long i = l.take(1);
    if (i < l.count) {
      if (i == l.refillAt) {
        refillMarkReached(null, 0);
      }
      return CompletableFuture.completedFuture(l.id(i));
    }
    return nextAsyncSlow();
  }

  private CompletableFuture<Long> nextAsyncSlow() {
    if (strict) {
      CompletableFuture<Long> f = new CompletableFuture<>();
      StrictRequest.complete(this, f, System.nanoTime() + settings.waitDeadlineNanos(), false);
      return f;
    }
    AsyncWaiter w = null;
    boolean launch = false;
    lock.lock();
    try {
      for (;;) {
        if (closed) {
          return CompletableFuture.failedFuture(
              failure(IdGenClientException.Reason.CLOSED, null, "the IdGenClient is closed", null));
        }
        Lease l = current;
        long i = l.take(1);
        if (i < l.count) {
          launch |= i == l.refillAt && requestLocked(false);
          return CompletableFuture.completedFuture(l.id(i));
        }
        if (!queue.isEmpty()) {
          launch |= installNextLocked();
          continue;
        }
        if (exhausted != null) {
          return CompletableFuture.failedFuture(exhaustedLocked());
        }
        if (strict) {
          break; // w stays null: a strict request, once unlocked
        }
        if (rejections != reportedRejections) {
          // The last request failed while nobody waited: this caller is the first to hear.
          return CompletableFuture.failedFuture(rejectedLocked());
        }
        w = new AsyncWaiter(rejections);
        asyncWaiters.addLast(w);
        waits++;
        waitingDemand++;
        launch |= requestLocked(true);
        break;
      }
    } finally {
      lock.unlock();
      if (launch) {
        launch();
      }
    }
    if (w == null) {
      CompletableFuture<Long> f = new CompletableFuture<>();
      StrictRequest.complete(this, f, System.nanoTime() + settings.waitDeadlineNanos(), false);
      return f;
    }
    scheduleAsyncTimeout(w);
    return w.future;
  }

  /** Schedules {@code w}'s wait deadline; if the executor refuses, the wait is bounded by close() only. */
  private void scheduleAsyncTimeout(AsyncWaiter w) {
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
  private boolean serveAsyncLocked(List<Runnable> after) {
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
        after.add(() -> w.future.complete(id));
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

  /** Fails every waiting {@link #nextAsync()} caller with {@code e}, once unlocked. */
  @GuardedBy("lock")
  private void failAsyncLocked(IdGenClientException e, List<Runnable> after) {
    for (AsyncWaiter w : asyncWaiters) {
      leaveAsyncLocked(w, after);
      after.add(() -> w.future.completeExceptionally(e));
    }
    asyncWaiters.clear();
  }

  @Override
  public long[] next(int count) {
    if (count < 0) {
      throw new IllegalArgumentException("count: " + count + " (expected: >= 0)");
    }
    long[] ids = new long[count];
    fill(ids, 0, count);
    return ids;
  }

  @Override
  public void fill(long[] ids, int from, int to) {
    Objects.checkFromToIndex(from, to, ids.length);
    int pos = from;
    Lease l = current;
    Waiter w = null;
    try {
      while (pos < to) {
        long need = to - pos;
        long i = l.take(need);
        if (i < l.count) {
          int start = pos;
          long got = Math.min(need, l.count - i);
          for (long k = 0; k < got; k++) {
            ids[pos++] = l.id(i + k);
          }
          if (l.refillAt >= i && l.refillAt < i + got) {
            refillMarkReached(w, to - pos);
          }
          if (w == null) {
            if (pos == to) {
              return; // the fast path: one take from the current lease, nothing else
            }
          } else {
            w.took(l, start, pos);
            if (pos == to) {
              pos = keepUnexpired(w, ids, from, pos, false);
              if (pos == to) {
                return;
              }
            }
          }
        }
        if (strict) {
          break;
        }
        if (w == null) {
          w = new Waiter();
          if (pos > from) {
            w.took(l, from, pos);
          }
        }
        l = awaitLease(w, to - pos);
        if (l == null) {
          break; // the source learned that the sequence is strict while this caller waited
        }
      }
    } catch (IdGenClientException e) {
      if (w != null) {
        Arrays.fill(ids, keepUnexpired(w, ids, from, pos, true), pos, NO_ID);
      }
      throw e;
    } finally {
      if (w != null) {
        w.done();
      }
    }
    if (pos < to) {
      if (w != null && pos > from) {
        // The caller waited with cached IDs, leased perhaps before it asked: not new enough for a strict
        // sequence. Dropped (its strict request asks for them too); NO_ID in their places until then.
        dropTaken(pos - from);
        Arrays.fill(ids, from, pos, NO_ID);
        pos = from;
      }
      long deadline = System.nanoTime() + settings.waitDeadlineNanos();
      StrictRequest.fill(this, ids, pos, to, w == null ? deadline : w.deadlineOr(deadline), w != null && w.counted);
    }
  }

  /**
   * Before a bulk caller that left the fast path returns, or fails ({@code failing}): drops the IDs it
   * took from leases that have expired since ({@link Lease#expired()}: by their task, on close or once the
   * source became strict; or due by the ticker, which covers leases replaced before they expired, whose
   * task does nothing), and moves those it keeps to the front of {@code ids[from..pos)}. Returns where
   * they end. A current lease due by the ticker is expired first, as its task will (nobody may take from
   * it after). Unless failing, if it dropped IDs once the caller's wait deadline passed, it fails the
   * caller {@code TIMED_OUT} rather than ask again. See "Lease expiry" in the class comment.
   */
  private int keepUnexpired(Waiter w, long[] ids, int from, int pos, boolean failing) {
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
        if (!failing && System.nanoTime() - w.deadline() >= 0) {
          timedOut = timedOutLocked();
        }
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

  /** Counts {@code n} IDs taken from leases and dropped before the caller returned them (see keepUnexpired). */
  private void dropTaken(long n) {
    lock.lock();
    try {
      dropTakenLocked(n);
    } finally {
      lock.unlock();
    }
  }

  @GuardedBy("lock")
  private void dropTakenLocked(long n) {
    idsExpired += n;
    takenThenExpired += n;
  }

  @Override
  public IdSourceStats stats() {
    lock.lock();
    try {
      return IdSourceStats.builder(sequence).idsServed(leasedServedLocked() + strictServed)
          .leases(leases).leaseSize(strict ? 0 : leaseSize).idsHeld(idsLeftLocked()).waits(waits)
          .waitTime(Duration.ofNanos(waitNanos)).failedCalls(failedCalls).idsExpired(idsExpired)
          .strictOrdering(strict).build();
    } finally {
      lock.unlock();
    }
  }

  /** The lease being handed out, for tests that check its state. */
  Lease currentLease() {
    return current;
  }

  /**
   * Cancels the call in flight, any scheduled retry and expiry tasks, drops what the source holds (a
   * gap, never a duplicate; the current lease through {@link Lease#expire()}, so that a thread that
   * read it before gets nothing more from it), and fails waiting and later callers with
   * {@link IdGenClientException.Reason#CLOSED}.
   */
  void close() {
    LeaseCall a;
    ScheduledFuture<?> f;
    List<ScheduledFuture<?>> expiryTasks = new ArrayList<>();
    List<Runnable> after = new ArrayList<>();
    List<StrictRequest> requests;
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      requests = new ArrayList<>(strictRequests);
      strictRequests.clear();
      // Expired, not only replaced: a thread that read it before gets no ID of it from now on.
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
      inFlight = false;
      a = active;
      active = null;
      f = retry;
      retry = null;
      changed.signalAll();
      serveAsyncLocked(after); // fails them: closed
    } finally {
      lock.unlock();
    }
    after.forEach(Runnable::run);
    if (a != null) {
      a.cancel();
    }
    if (f != null) {
      f.cancel(false);
    }
    for (ScheduledFuture<?> t : expiryTasks) {
      t.cancel(false);
    }
    for (StrictRequest q : requests) {
      q.end(IdGenClientException.Reason.CLOSED);
    }
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

  // ---- slow path ------------------------------------------------------------------------------

  /** IDs a bulk caller took from {@code lease} into {@code ids[from..to)} of its array. */
  private record Taken(Lease lease, int from, int to) {}

  /**
   * The state of one caller on the slow path: whether, since when and for how many IDs it waits; for a
   * bulk caller, what it took. Used by that caller's thread only.
   */
  private final class Waiter {
    final long createdNanos = System.nanoTime();
    /** What a bulk caller took from leases since it left the fast path, in array order; null if nothing. */
    List<Taken> taken;
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

  /**
   * Returns a lease that had IDs left when looked at (the caller takes from it and comes back if
   * others were faster), installing the next queued range if the current lease is used up, or waits
   * for a range to arrive. Returns null once the source is strict: the caller then makes a strict
   * request.
   */
  private Lease awaitLease(Waiter w, long need) {
    for (;;) {
      boolean launch = false;
      lock.lock();
      try {
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
              launch = true;
              break;
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
            launch = true;
            break;
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
            throw failure(IdGenClientException.Reason.INTERRUPTED, null,
                "interrupted while waiting for a lease", e);
          } finally {
            waiting--;
          }
        }
      } finally {
        lock.unlock();
      }
      if (launch) {
        launch();
      }
    }
  }

  @GuardedBy("lock")
  private IdGenClientException exhaustedLocked() {
    return exhaustedFailure(exhausted);
  }

  IdGenClientException exhaustedFailure(Failure f) {
    return failure(IdGenClientException.Reason.EXHAUSTED, f.status(), "the sequence is exhausted: " + f.describe(),
        f.cause());
  }

  @GuardedBy("lock")
  private IdGenClientException rejectedLocked() {
    reportedRejections = rejections;
    return failure(IdGenClientException.Reason.REJECTED, rejection.status(),
        "the lease request failed: " + rejection.describe(), rejection.cause());
  }

  @GuardedBy("lock")
  private IdGenClientException timedOutLocked() {
    return timedOut("no lease arrived", lastRetryable);
  }

  /** {@code TIMED_OUT}: {@code what} (e.g. "no lease arrived") and the last retryable failure, if any. */
  IdGenClientException timedOut(String what, Failure last) {
    String waited = what + " within " + TimeUnit.NANOSECONDS.toMillis(settings.waitDeadlineNanos())
        + " ms (the client's wait deadline)";
    if (last == null) {
      return failure(IdGenClientException.Reason.TIMED_OUT, null,
          waited + "; the request in flight has not answered yet", null);
    }
    return failure(IdGenClientException.Reason.TIMED_OUT, last.status(),
        waited + "; last failure: " + last.describe(), last.cause());
  }

  IdGenClientException failure(
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
  private boolean installNextLocked() {
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
   * The sequence is strict: from now on nothing is cached (see the class comment). Drops what the
   * source holds and returns how many IDs that was; wakes the callers that wait, which go on with
   * strict requests of their own.
   */
  @GuardedBy("lock")
  private long becomeStrictLocked() {
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

  // ---- expiry ---------------------------------------------------------------------------------

  /**
   * Drops the queued ranges that are due by the ticker (read only if a queued range expires at all),
   * and returns how many IDs that dropped.
   */
  @GuardedBy("lock")
  private long dropDueQueuedLocked() {
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
  private void scheduleExpiry(Range r) {
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
   * caller that found the lease used up would. See "Lease expiry" in the class comment.
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
  private boolean dropDueLocked(long dropped, long now, List<Runnable> after) {
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

  /**
   * The thread that took a lease's refill mark: check the rule, and request if it holds. If that
   * thread is a waiting caller ({@code w}), it first updates what it still needs, which the request
   * is sized to cover.
   */
  private void refillMarkReached(Waiter w, long stillNeeded) {
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

  @GuardedBy("lock")
  private long idsLeftLocked() {
    return queuedIds + current.remaining();
  }

  /** IDs of leases handed out so far. */
  @GuardedBy("lock")
  private long leasedServedLocked() {
    return retiredIds + current.used() - takenThenExpired;
  }

  // ---- requests -------------------------------------------------------------------------------

  /**
   * Decides to request a lease if none is in flight and the refill rule holds (or {@code force}: a
   * caller has nothing left), and sizes it. Returns whether the caller must {@link #launch()} it.
   */
  @GuardedBy("lock")
  private boolean requestLocked(boolean force) {
    if (closed || exhausted != null || inFlight || strict) {
      return false;
    }
    if (!force && idsLeftLocked() > threshold) {
      return false;
    }
    inFlight = true;
    failedAttempts = 0;
    lastEndpoint = -1;
    requestCount = nextLeaseSizeLocked();
    return true;
  }

  /** The lease size for a new request: see the class comment. */
  @GuardedBy("lock")
  private long nextLeaseSizeLocked() {
    long now = settings.ticker().nanos();
    long served = leasedServedLocked();
    if (requests > 0) {
      long consumed = served - servedAtLastRequest;
      long elapsed = now - lastRequestNanos;
      long lifetime = settings.leaseLifetimeNanos();
      if (validForNanos > 0) {
        lifetime = Math.min(lifetime, validForNanos / 2);
      }
      double desired;
      if (consumed <= 0) {
        desired = 0;
      } else if (elapsed <= 0) {
        desired = Double.POSITIVE_INFINITY;
      } else {
        desired = Math.ceil((double) consumed * lifetime / elapsed);
      }
      long growthCap = leaseSize > settings.maxLeaseSize() / 4 ? settings.maxLeaseSize() : leaseSize * 4;
      leaseSize = (long) Math.max((double) settings.minLeaseSize(), Math.min((double) growthCap, desired));
    }
    requests++;
    lastRequestNanos = now;
    servedAtLastRequest = served;
    return Math.min(Math.min(settings.maxLeaseSize(), serverLimit), Math.max(leaseSize, waitingDemand));
  }

  /** Hands the request decided under the lock to the executor. */
  private void launch() {
    try {
      executor.execute(attemptTask);
    } catch (RejectedExecutionException e) {
      executorRejected(e);
    }
  }

  /** One attempt of the request in flight, on the executor. */
  private void attempt() {
    LeaseCall a;
    lock.lock();
    try {
      if (closed || !inFlight || active != null) {
        return;
      }
      int endpoint = endpoints.pick(failedAttempts == 0 ? -1 : lastEndpoint);
      lastEndpoint = endpoint;
      a = new LeaseCall(endpoint, requestCount);
      active = a;
      activeDelivered = 0;
      activeExpiredOnArrival = 0;
      retry = null;
    } finally {
      lock.unlock();
    }
    a.start(endpoints, settings);
  }

  /**
   * Queues a range and serves the {@link #nextAsync()} callers that wait; once unlocked, schedules the
   * range's expiry task, completes their futures, and launches a request if one was decided.
   */
  private void received(LeaseCall a, IdRange r) {
    List<Runnable> after = new ArrayList<>();
    boolean launch;
    Range expiring;
    lock.lock();
    try {
      expiring = queueLocked(a, r);
      launch = serveAsyncLocked(after);
    } finally {
      lock.unlock();
    }
    if (expiring != null) {
      scheduleExpiry(expiring);
    }
    after.forEach(Runnable::run);
    if (launch) {
      launch();
    }
  }

  /** Queues a range; returns it if its expiry task must be scheduled (once unlocked), else null. */
  @GuardedBy("lock")
  private Range queueLocked(LeaseCall a, IdRange r) {
    if (closed || active != a) {
      return null;
    }
    if (strict || r.getOrdering() == Ordering.ORDERING_STRICT) {
      // Nobody asked for these IDs before this call was sent: never handed out (see the class comment).
      long dropped = Math.max(0, r.getCount());
      if (!strict) {
        dropped += becomeStrictLocked();
        logger.log(Level.FINE, "sequence ''{0}'' is ORDERING_STRICT: no IDs are cached for it from now on",
            sequence);
      }
      idsExpired += dropped;
      return null;
    }
    long validFor = AllocateCall.validForOf(r);
    if (r.getCount() < 1 || r.getStride() < 1 || validFor < 0) {
      logger.log(Level.WARNING, "sequence ''{0}'': ignoring a malformed range from {1}: {2}",
          new Object[] {sequence, endpoints.get(a.endpoint).name, r});
      return null;
    }
    activeDelivered += r.getCount();
    if (validFor > 0) {
      validForNanos = validFor;
    }
    boolean expires = validFor > 0 && validFor <= AllocateCall.MAX_VALID_FOR_NANOS;
    Range range = new Range(r.getFirst(), r.getCount(), r.getStride(), expires, expires ? a.sentNanos + validFor : 0);
    if (expires && range.dueAt(settings.ticker().nanos())) {
      // Expired on arrival (valid_for shorter than the call took): never handed out.
      markGone(range);
      idsExpired += range.count;
      activeExpiredOnArrival += range.count;
      logger.log(Level.FINE, "sequence ''{0}'': dropped a range of {1} IDs from {2} that expired on arrival",
          new Object[] {sequence, range.count, endpoints.get(a.endpoint).name});
      return null;
    }
    queue.addLast(range);
    queuedIds += range.count;
    threshold = idsLeftLocked() / 2;
    if (waiting > 0) {
      changed.signalAll();
    }
    return expires ? range : null;
  }

  private void completed(LeaseCall a) {
    boolean launch;
    List<Runnable> after = new ArrayList<>();
    lock.lock();
    try {
      if (closed || active != a) {
        return;
      }
      active = null;
      inFlight = false;
      lastRetryable = null;
      if (activeDelivered > 0) {
        leases++;
      }
      if (waiting > 0) {
        changed.signalAll();
      }
      // Much may have been used while the call was in flight (a mark taken meanwhile was ignored).
      // Unless everything the call delivered had expired on arrival: asking again at once would only
      // repeat that, in a loop; a caller that finds nothing left still asks (and waits for it).
      launch = (activeDelivered == 0 || activeExpiredOnArrival < activeDelivered) && requestLocked(false);
      launch |= serveAsyncLocked(after);
    } finally {
      lock.unlock();
    }
    after.forEach(Runnable::run);
    if (launch) {
      launch();
    }
  }

  private void failed(LeaseCall a, Throwable t) {
    ServerError error = ServerError.of(t, a.count);
    Status status = error.status();
    long delay = -1;
    boolean launch;
    List<Runnable> after = new ArrayList<>();
    lock.lock();
    try {
      if (closed || active != a) {
        return;
      }
      active = null;
      failedCalls++;
      if (activeDelivered > 0) {
        leases++;
      }
      Failure f = new Failure(status, endpoints.get(a.endpoint).name, t);
      switch (error.outcome()) {
        case EXHAUSTED -> {
          exhausted = f;
          inFlight = false;
          logger.log(Level.FINE, "sequence ''{0}'' is exhausted: {1}", new Object[] {sequence, f.describe()});
        }
        case CLAMP -> {
          // A server's max-ids-per-call below the lease size: ask again at once for what it allows, and
          // never for more from now on (the lowest limit any server named).
          serverLimit = Math.min(serverLimit, error.limit());
          requestCount = Math.min(requestCount, serverLimit);
          delay = 0;
          logger.log(Level.FINE, "sequence ''{0}'': {1}; asking for {2} IDs instead",
              new Object[] {sequence, f.describe(), requestCount});
        }
        case RETRY -> {
          lastRetryable = f;
          endpoints.markFailed(a.endpoint);
          failedAttempts++;
          delay = AllocateCall.retryDelayNanos(settings, failedAttempts, error);
          logger.log(Level.FINE, "sequence ''{0}'': Allocate failed with {1}; retrying in {2} µs",
              new Object[] {sequence, f.describe(), delay / 1000});
        }
        case REJECT -> {
          rejection = f;
          rejections++;
          inFlight = false;
          logger.log(Level.FINE, "sequence ''{0}'': Allocate failed with {1}; not retried",
              new Object[] {sequence, f.describe()});
        }
      }
      if (waiting > 0) {
        changed.signalAll();
      }
      launch = serveAsyncLocked(after);
    } finally {
      lock.unlock();
    }
    after.forEach(Runnable::run);
    if (launch) {
      launch();
    }
    if (delay >= 0) {
      scheduleRetry(delay);
    }
  }

  private void scheduleRetry(long delayNanos) {
    ScheduledFuture<?> f;
    try {
      f = executor.schedule(attemptTask, delayNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      executorRejected(e);
      return;
    }
    lock.lock();
    try {
      if (closed) {
        f.cancel(false);
      } else if (active == null) {
        retry = f;
      }
    } finally {
      lock.unlock();
    }
  }

  private void executorRejected(RejectedExecutionException e) {
    List<Runnable> after = new ArrayList<>();
    lock.lock();
    try {
      if (closed) {
        return;
      }
      inFlight = false;
      rejection = new Failure(
          Status.UNAVAILABLE.withDescription("the client's executor rejected the lease request (is it shut down?)")
              .withCause(e),
          "the client's executor", e);
      rejections++;
      if (waiting > 0) {
        changed.signalAll();
      }
      serveAsyncLocked(after); // fails them all (rejected); requests nothing, none is left
    } finally {
      lock.unlock();
    }
    after.forEach(Runnable::run);
  }

  /** One {@code Allocate} call for a lease: its callbacks go to the source, under its lock. */
  private final class LeaseCall extends AllocateCall {
    LeaseCall(int endpoint, long count) {
      super(LeasedIdSource.this.sequence, endpoint, count);
    }

    @Override
    public void onNext(IdRange range) {
      received(this, range);
    }

    @Override
    public void onError(Throwable t) {
      failed(this, t);
    }

    @Override
    public void onCompleted() {
      completed(this);
    }
  }
}
