package dev.idgen.client;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.api.v1.IdRange;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One caller's request for IDs of a strict sequence: {@code Allocate} calls for what the caller still
 * needs, one at a time, each started after the caller asked, and whose IDs go to that caller only. Why
 * a strict sequence caches nothing, and what a request does on each outcome, is in docs/client.md
 * ("Strict sequences: no cache").
 *
 * <p>Threads: a request is created by its caller's thread ({@link #fill}, a blocked caller, which then
 * waits on {@code done}; or {@link #complete}, a {@code nextAsync} caller, whose future is completed
 * instead). Its calls start on the client's executor and their callbacks run there; a deadline task
 * (for {@code nextAsync}) and a retry task run there too, and {@link #end} may come from any thread
 * (the deadline, an interrupt, close). All its mutable state is guarded by the source's lock, the one
 * lock of {@link LeasedIdSource}, which it also takes to update the source's counters and outcomes
 * ({@code exhausted}, {@code serverLimit}): one lock, so there is no lock order to get wrong. Nothing
 * calls gRPC or the executor, or completes a future, while holding it. {@code ids} is written only
 * under the lock and read by {@link #collect} under it; {@code done} is what the caller waits on.
 */
@ThreadSafe
final class StrictRequest {
  // Logged under the source's name, as before the strict path had a class of its own.
  private static final Logger logger = Logger.getLogger(LeasedIdSource.class.getName());

  private final SourceState source;
  /**
   * Fills {@code out[from..to)} through a strict request, waiting until {@code deadlineNanos}
   * ({@code System.nanoTime()}); {@code counted}: the caller's wait is already counted in
   * {@code waits}. On failure, the IDs that arrived are written first, then the exception thrown.
   */
  static void fill(SourceState source, long[] out, int from, int to, long deadlineNanos, boolean counted) {
    StrictRequest q = new StrictRequest(source, to - from, deadlineNanos, null);
    q.begin(counted);
    try {
      for (;;) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
          q.end(IdGenClientException.Reason.TIMED_OUT);
          break;
        }
        try {
          q.done.get(left, TimeUnit.NANOSECONDS);
          break;
        } catch (TimeoutException e) {
          // Checked again above: the deadline has passed.
        }
      }
    } catch (InterruptedException e) {
      q.end(IdGenClientException.Reason.INTERRUPTED);
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      throw new AssertionError("a strict request's done never fails", e);
    }
    q.collect(out, from);
  }

  /**
   * Completes {@code future} with one ID through a strict request, or fails it, by
   * {@code deadlineNanos}; cancelling the future ends the request (its call is cancelled).
   */
  static void complete(SourceState source, CompletableFuture<Long> future, long deadlineNanos, boolean counted) {
    StrictRequest q = new StrictRequest(source, 1, deadlineNanos, future);
    CompletableFuture<?> unused = future.whenComplete((id, t) -> {
      if (future.isCancelled()) {
        q.end(IdGenClientException.Reason.CLOSED); // nobody collects it: the reason is never seen
      }
    });
    q.begin(counted);
  }

  /** A range a strict request kept: at {@code ids[from..to)}, valid until {@code expiresAt} if it expires. */
  private record Got(int from, int to, boolean expires, long expiresAt) {}

  /** The IDs received, {@code got} of them so far: written only here, copied out by collect(). */
  final long[] ids;
  final long deadlineNanos;
  final long startNanos = System.nanoTime();
  final CompletableFuture<Void> done = new CompletableFuture<>();
  /** A {@code nextAsync} caller's future, completed once finished; null for a blocked caller. */
  final CompletableFuture<Long> async;

  @GuardedBy("source.lock") private int got;
  /**
   * Where each range kept in {@code ids} is, and until when it may be handed out: checked again once
   * every ID arrived, and before the IDs of a failed request are written (see dropExpiredLocked).
   */
  @GuardedBy("source.lock") private final List<Got> ranges = new ArrayList<>();
  @GuardedBy("source.lock") private boolean finished;
  /** Whether {@link #deliver} ran: a {@code nextAsync} caller's ID is counted once, served or dropped. */
  @GuardedBy("source.lock") private boolean delivered;
  /** Null once finished with every ID; else how to fail the caller (created on its thread). */
  @GuardedBy("source.lock") private Supplier<IdGenClientException> failure;
  @GuardedBy("source.lock") private AllocateCall active;
  /** IDs the {@code active} attempt delivered, including any it had to drop. */
  @GuardedBy("source.lock") private long activeDelivered;
  /** Of those, IDs it kept (not expired on arrival): whether to ask again at once or after a back-off. */
  @GuardedBy("source.lock") private long activeKept;
  @GuardedBy("source.lock") private ScheduledFuture<?> retry;
  /** The task for the deadline of a {@code nextAsync} caller (blocked callers time out themselves). */
  @GuardedBy("source.lock") private ScheduledFuture<?> timeout;
  @GuardedBy("source.lock") private int failedAttempts;
  @GuardedBy("source.lock") private int lastEndpoint = -1;
  @GuardedBy("source.lock") private Failure lastRetryable;

  private StrictRequest(SourceState source, int count, long deadlineNanos, CompletableFuture<Long> async) {
    this.source = source;
    this.ids = new long[count];
    this.deadlineNanos = deadlineNanos;
    this.async = async;
  }

  /**
   * Registers the request and starts its first call, or finishes it at once (nothing to ask for,
   * the source closed or exhausted); for a {@code nextAsync} caller, schedules its deadline on the
   * executor. {@code counted}: the caller's wait is already counted in {@code waits}.
   */
  private void begin(boolean counted) {
    boolean start = false;
    source.lock.lock();
    try {
      if (!counted) {
        source.waits++;
      }
      if (finished) {
        // Ended before it began: a future cancelled before its request was made.
      } else if (source.closed) {
        finishLocked(() -> source.failure(IdGenClientException.Reason.CLOSED, null, "the IdGenClient is closed", null));
      } else if (source.exhausted != null) {
        Failure f = source.exhausted;
        finishLocked(() -> source.exhaustedFailure(f));
      } else if (ids.length == 0) {
        finishLocked(null);
      } else {
        source.strictRequests.add(this);
        start = true;
      }
    } finally {
      source.lock.unlock();
    }
    if (!start) {
      finished();
      return;
    }
    if (async != null) {
      scheduleTimeout();
    }
    run(0);
  }

  private void scheduleTimeout() {
    ScheduledFuture<?> t;
    try {
      t = source.executor.schedule(this::deadlinePassed, deadlineNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      return; // the executor is shut down: the client is closing, which ends the request
    }
    boolean cancel;
    source.lock.lock();
    try {
      cancel = finished;
      if (!cancel) {
        timeout = t;
      }
    } finally {
      source.lock.unlock();
    }
    if (cancel) {
      t.cancel(false);
    }
  }

  private void deadlinePassed() {
    end(IdGenClientException.Reason.TIMED_OUT);
  }

  /** Runs the next attempt now ({@code 0}) or after a delay, on the executor. */
  private void run(long delayNanos) {
    try {
      if (delayNanos == 0) {
        source.executor.execute(this::attempt);
        return;
      }
      ScheduledFuture<?> f = source.executor.schedule(this::attempt, delayNanos, TimeUnit.NANOSECONDS);
      boolean cancel;
      source.lock.lock();
      try {
        cancel = finished;
        if (!cancel && active == null) {
          retry = f;
        }
      } finally {
        source.lock.unlock();
      }
      if (cancel) {
        f.cancel(false);
      }
    } catch (RejectedExecutionException e) {
      source.lock.lock();
      try {
        if (finished) {
          return;
        }
        finishLocked(() -> source.failure(IdGenClientException.Reason.REJECTED,
            Status.UNAVAILABLE.withDescription("the client's executor rejected the request (is it shut down?)")
                .withCause(e), "the client's executor rejected the request", e));
      } finally {
        source.lock.unlock();
      }
      finished();
    }
  }

  /** One attempt, on the executor: a call for what is still missing, at most what one call may carry. */
  private void attempt() {
    AllocateCall a;
    source.lock.lock();
    try {
      if (finished || active != null) {
        return;
      }
      int endpoint = source.endpoints.pick(failedAttempts == 0 ? -1 : lastEndpoint);
      lastEndpoint = endpoint;
      long count = Math.min(ids.length - got, Math.min(source.settings.maxLeaseSize(), source.serverLimit));
      a = new AllocateCall(source.sequence, endpoint, count, this::received, this::completed, this::failed);
      active = a;
      activeDelivered = 0;
      activeKept = 0;
      retry = null;
    } finally {
      source.lock.unlock();
    }
    a.start(source.endpoints, source.settings);
  }

  private void received(AllocateCall a, IdRange r) {
    source.lock.lock();
    try {
      if (finished || active != a) {
        return;
      }
      long validFor = AllocateCall.validForOf(r);
      if (r.getCount() < 1 || r.getStride() < 1 || validFor < 0) {
        logger.log(Level.WARNING, "sequence ''{0}'': ignoring a malformed range from {1}: {2}",
            new Object[] {source.sequence, source.endpoints.get(a.endpoint).name, r});
        return;
      }
      activeDelivered += r.getCount();
      boolean expires = validFor > 0 && validFor <= AllocateCall.MAX_VALID_FOR_NANOS;
      long expiresAt = expires ? a.sentNanos + validFor : 0;
      if (expires && source.settings.ticker().nanos() - expiresAt >= 0) {
        source.idsExpired += r.getCount(); // expired on arrival: asked for again
        return;
      }
      int n = (int) Math.min(r.getCount(), ids.length - got);
      ranges.add(new Got(got, got + n, expires, expiresAt));
      for (int k = 0; k < n; k++) {
        ids[got++] = r.getFirst() + k * r.getStride();
      }
      activeKept += n;
      if (n < r.getCount()) {
        logger.log(Level.WARNING, "sequence ''{0}'': {1} sent {2} IDs more than asked for; they are not used",
            new Object[] {source.sequence, source.endpoints.get(a.endpoint).name, r.getCount() - n});
      }
    } finally {
      source.lock.unlock();
    }
  }

  private void completed(AllocateCall a) {
    long delay;
    boolean finishedNow = false;
    source.lock.lock();
    try {
      if (finished || active != a) {
        return;
      }
      active = null;
      if (activeDelivered > 0) {
        source.leases++;
      }
      if (got == ids.length) {
        dropExpiredLocked(); // what arrived first may have expired while the rest came
      }
      if (got == ids.length) {
        finishLocked(null);
        finishedNow = true;
        delay = -1;
      } else if (activeKept > 0) {
        delay = 0; // more than one call may carry, or earlier ranges expired: the rest at once
      } else {
        failedAttempts++; // nothing usable (expired on arrival): again, after a back-off
        delay = AllocateCall.backoffNanos(source.settings, failedAttempts);
      }
    } finally {
      source.lock.unlock();
    }
    if (finishedNow) {
      finished();
    } else {
      run(delay);
    }
  }

  private void failed(AllocateCall a, Throwable t) {
    ServerError error = ServerError.of(t, a.count);
    long delay = -1;
    source.lock.lock();
    try {
      if (finished || active != a) {
        return;
      }
      active = null;
      source.failedCalls++;
      if (activeDelivered > 0) {
        source.leases++;
      }
      Failure f = new Failure(error.status(), source.endpoints.get(a.endpoint).name, t);
      if (got == ids.length) {
        dropExpiredLocked();
      }
      if (got == ids.length) {
        finishLocked(null); // every ID arrived before the failure (and none expired since)
      } else {
        switch (error.outcome()) {
          case EXHAUSTED -> {
            if (source.exhausted == null) {
              source.exhausted = f;
            }
            finishLocked(() -> source.exhaustedFailure(f));
          }
          case CLAMP -> {
            source.serverLimit = Math.min(source.serverLimit, error.limit());
            delay = 0;
          }
          case RETRY -> {
            lastRetryable = f;
            source.endpoints.markFailed(a.endpoint);
            failedAttempts++;
            delay = AllocateCall.retryDelayNanos(source.settings, failedAttempts, error);
            logger.log(Level.FINE, "sequence ''{0}'': Allocate failed with {1}; retrying in {2} µs",
                new Object[] {source.sequence, f.describe(), delay / 1000});
          }
          case REJECT -> finishLocked(() -> source.failure(IdGenClientException.Reason.REJECTED, f.status(),
              "the request failed: " + f.describe(), f.cause()));
        }
      }
    } finally {
      source.lock.unlock();
    }
    if (delay >= 0) {
      run(delay);
    } else {
      finished();
    }
  }

  /**
   * Ends the request now if it is not finished: its deadline passed ({@code TIMED_OUT}, with the
   * last retryable failure), its caller was interrupted, or the client closed (also for a cancelled
   * future, whose reason nobody sees). The call in flight and a pending retry are cancelled.
   */
  void end(IdGenClientException.Reason reason) {
    AllocateCall a;
    ScheduledFuture<?> r;
    source.lock.lock();
    try {
      if (finished) {
        return;
      }
      Failure last = lastRetryable;
      finishLocked(switch (reason) {
        case TIMED_OUT -> () -> source.timedOut("no IDs arrived", last);
        case INTERRUPTED -> () -> source.failure(reason, null, "interrupted while waiting for IDs", null);
        default -> () -> source.failure(reason, null, "the IdGenClient is closed", null);
      });
      a = active;
      active = null;
      r = retry;
      retry = null;
    } finally {
      source.lock.unlock();
    }
    if (a != null) {
      a.cancel();
    }
    if (r != null) {
      r.cancel(false);
    }
    finished();
  }

  /**
   * Drops the ranges received that have expired by the ticker (they arrived in time, but the request
   * waited for more since: a later call of a split request, a retry through a take-over), moving the
   * others to the front of {@code ids}; a gap, counted in {@code idsExpired}. The request then asks
   * for them again, or, failing, writes only the others.
   */
  @GuardedBy("source.lock")
  private void dropExpiredLocked() {
    long now = 0;
    boolean read = false;
    int out = 0;
    int kept = 0;
    for (Got g : ranges) {
      if (g.expires()) {
        if (!read) {
          now = source.settings.ticker().nanos();
          read = true;
        }
        if (now - g.expiresAt() >= 0) {
          source.idsExpired += g.to() - g.from();
          continue;
        }
      }
      int n = g.to() - g.from();
      if (out != g.from()) {
        System.arraycopy(ids, g.from(), ids, out, n);
        g = new Got(out, out + n, g.expires(), g.expiresAt());
      }
      ranges.set(kept++, g);
      out += n;
    }
    ranges.subList(kept, ranges.size()).clear();
    got = out;
  }

  @GuardedBy("source.lock")
  private void finishLocked(Supplier<IdGenClientException> f) {
    finished = true;
    failure = f;
    source.strictRequests.remove(this);
    source.waitNanos += System.nanoTime() - startNanos;
  }

  /**
   * Once finished, outside the lock: no deadline task any more, and the caller may collect (a
   * {@code nextAsync} caller's future is completed here).
   */
  private void finished() {
    ScheduledFuture<?> t;
    source.lock.lock();
    try {
      t = timeout;
      timeout = null;
    } finally {
      source.lock.unlock();
    }
    if (t != null) {
      t.cancel(false);
    }
    done.complete(null);
    if (async != null) {
      deliver();
    }
  }

  /**
   * Completes the {@code nextAsync} caller's future with its ID, or fails it. The ID is served only if the
   * future took it: one it did not take (cancelled, before or after the ID arrived) or that arrived for a
   * request that failed is dropped, counted in {@code idsExpired}. A strict ID is for its caller alone.
   */
  private void deliver() {
    long id;
    Supplier<IdGenClientException> f;
    source.lock.lock();
    try {
      if (delivered) {
        return; // finished() again: a request ended before it began
      }
      delivered = true;
      if (failure != null) {
        dropExpiredLocked();
        source.idsExpired += got; // arrived, but the caller hears the failure
      }
      id = ids[0];
      f = failure;
    } finally {
      source.lock.unlock();
    }
    if (f != null) {
      async.completeExceptionally(f.get());
      return;
    }
    boolean took = async.complete(id);
    source.lock.lock();
    try {
      if (took) {
        source.strictServed++;
      } else {
        source.idsExpired++;
      }
    } finally {
      source.lock.unlock();
    }
  }

  /**
   * Copies the IDs received into {@code out} from {@code from} on (all of them, or those that came
   * before a failure), then throws the failure if there was one. Called by the caller once it stops
   * waiting: once {@code done}, or after {@link #end}.
   */
  private void collect(long[] out, int from) {
    end(IdGenClientException.Reason.TIMED_OUT); // nothing once finished, the usual case
    Supplier<IdGenClientException> f;
    source.lock.lock();
    try {
      if (failure != null) {
        dropExpiredLocked(); // the caller gets those that arrived before the failure, if still valid
      }
      System.arraycopy(ids, 0, out, from, got);
      source.strictServed += got;
      f = failure;
    } finally {
      source.lock.unlock();
    }
    if (f != null) {
      throw f.get();
    }
  }

}
