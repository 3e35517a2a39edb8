package dev.idgen.client;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;

/**
 * The refill: the rule that decides when to request the next lease, its size, and the one request in
 * flight through its calls, retries with back-off and failover to another endpoint, until the ranges are
 * queued or the failure is reported. The rules are in docs/client.md ("Refill rule", "Lease size",
 * "Requests").
 *
 * <p>Threads: {@link #requestLocked} decides under the source's lock and only says whether to launch;
 * its caller calls {@link #launch()} once unlocked, which hands the attempt to the client's executor.
 * Calls start there and their callbacks ({@code received}, {@code completed}, {@code failed}) run there,
 * serialized by gRPC; each takes the lock, and a callback of a call that is no longer {@code active} (the
 * source closed) changes nothing. {@code inFlight} stays set from the decision through retries until the
 * call completes or fails for good, so there is at most one request. Retries are scheduled on the
 * executor outside the lock. Everything here is guarded by the source's lock; nothing is volatile.
 */
@ThreadSafe
abstract class Refiller extends LeaseExpiry {
  Refiller(String sequence, ClientSettings settings, Endpoints endpoints, ScheduledExecutorService executor) {
    super(sequence, settings, endpoints, executor);
    this.leaseSize = settings.minLeaseSize();
  }

  private final Runnable attemptTask = this::attempt;

  // The request: decided, being attempted, or waiting for a retry.
  @GuardedBy("lock") private boolean inFlight;

  @GuardedBy("lock") private long requestCount;

  @GuardedBy("lock") private int failedAttempts;

  @GuardedBy("lock") private int lastEndpoint = -1;

  @GuardedBy("lock") private AllocateCall active;

  /** IDs the {@code active} attempt delivered so far. */
  @GuardedBy("lock") private long activeDelivered;

  /** Of those, IDs of ranges that had already expired when they arrived. */
  @GuardedBy("lock") private long activeExpiredOnArrival;

  @GuardedBy("lock") private ScheduledFuture<?> retry;

  // Lease sizing.
  @GuardedBy("lock") long leaseSize;

  @GuardedBy("lock") private long requests;

  @GuardedBy("lock") private long lastRequestNanos;

  /** IDs handed out when the last request was decided: what was handed out since covers its round trip. */
  @GuardedBy("lock") private long servedAtLastRequest;

  /** The {@code valid_for} of the last range that had one, 0 before any: caps the lifetime. */
  @GuardedBy("lock") private long validForNanos;

  /**
   * Decides to request a lease if none is in flight and the refill rule holds (or {@code force}: a
   * caller has nothing left), and sizes it. Returns whether the caller must {@link #launch()} it.
   */
  @GuardedBy("lock")
  @Override
  final boolean requestLocked(boolean force) {
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

  /** The lease size for a new request: see "Lease size" in docs/client.md. */
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
  @Override
  final void launch() {
    try {
      executor.execute(attemptTask);
    } catch (RejectedExecutionException e) {
      executorRejected(e);
    }
  }

  /** One attempt of the request in flight, on the executor. */
  private void attempt() {
    AllocateCall a;
    lock.lock();
    try {
      if (closed || !inFlight || active != null) {
        return;
      }
      int endpoint = endpoints.pick(failedAttempts == 0 ? -1 : lastEndpoint);
      lastEndpoint = endpoint;
      a = new AllocateCall(sequence, endpoint, requestCount, this::received, this::completed, this::failed);
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
  private void received(AllocateCall a, IdRange r) {
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
  private Range queueLocked(AllocateCall a, IdRange r) {
    if (closed || active != a) {
      return null;
    }
    if (strict || r.getOrdering() == Ordering.ORDERING_STRICT) {
      // Nobody asked for these IDs before this call was sent: never handed out (docs/client.md, "Strict sequences").
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
    // Half of what is held, plus what was handed out while the request was on its way: the next
    // request then leaves about one round trip's worth before a lease is started, and its IDs arrive
    // while a whole lease is still left, however short a lease's lifetime (see "Refill rule").
    threshold = idsLeftLocked() / 2 + Math.max(0, leasedServedLocked() - servedAtLastRequest);
    if (waiting > 0) {
      changed.signalAll();
    }
    return expires ? range : null;
  }

  /**
   * The call {@code a} ended: false if it is not the active one any more (the source closed), else it
   * is no longer active, and counted as a lease if it delivered anything.
   */
  @GuardedBy("lock")
  private boolean endCallLocked(AllocateCall a) {
    if (closed || active != a) {
      return false;
    }
    active = null;
    if (activeDelivered > 0) {
      leases++;
    }
    return true;
  }

  private void completed(AllocateCall a) {
    endCall(a, null, null);
  }

  private void failed(AllocateCall a, Throwable t) {
    endCall(a, t, ServerError.of(t, a.count));
  }

  /**
   * The call {@code a} completed ({@code failure} null) or failed: if it is still the active one, decides
   * under the lock what comes next ({@link #completedLocked}, {@link #failedLocked}), wakes the callers that
   * wait and serves the {@link #nextAsync()} callers; then, unlocked, completes their futures, launches a
   * request if one was decided and schedules a retry if one is due.
   */
  private void endCall(AllocateCall a, Throwable failure, ServerError error) {
    boolean launch;
    long retryDelay;
    List<Runnable> after = new ArrayList<>();
    lock.lock();
    try {
      if (!endCallLocked(a)) {
        return;
      }
      if (error == null) {
        launch = completedLocked();
        retryDelay = -1;
      } else {
        launch = false;
        retryDelay = failedLocked(a, failure, error);
      }
      if (waiting > 0) {
        changed.signalAll();
      }
      launch |= serveAsyncLocked(after);
    } finally {
      lock.unlock();
    }
    after.forEach(Runnable::run);
    if (launch) {
      launch();
    }
    if (retryDelay >= 0) {
      scheduleRetry(retryDelay);
    }
  }

  /** The request completed: whether to launch the next one at once. */
  @GuardedBy("lock")
  private boolean completedLocked() {
    inFlight = false;
    lastRetryable = null;
    // Much may have been used while the call was in flight (a mark taken meanwhile was ignored).
    // Unless everything the call delivered had expired on arrival: asking again at once would only
    // repeat that, in a loop; a caller that finds nothing left still asks (and waits for it).
    return (activeDelivered == 0 || activeExpiredOnArrival < activeDelivered) && requestLocked(false);
  }

  /** The call failed: records why, and returns in how many nanoseconds to retry (-1: not retried). */
  @GuardedBy("lock")
  private long failedLocked(AllocateCall a, Throwable t, ServerError error) {
    Status status = error.status();
    long delay = -1;
    failedCalls++;
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
    return delay;
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

  /**
   * On close: forgets the request in flight or waiting for a retry, and returns what cancels its call
   * and its retry task, to run once unlocked.
   */
  @GuardedBy("lock")
  final Runnable stopRequestLocked() {
    inFlight = false;
    AllocateCall a = active;
    active = null;
    ScheduledFuture<?> f = retry;
    retry = null;
    return () -> {
      if (a != null) {
        a.cancel();
      }
      if (f != null) {
        f.cancel(false);
      }
    };
  }

}
