package dev.idgen.core;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-memory reserve of one stripe of one sequence in this process: a queue of reserved ranges,
 * topped up from the {@link RangeStore} in the background.
 *
 * <p>Refill rule: when fewer than {@code threshold × block} IDs are left and no refill is in flight,
 * one refill reserves {@code block − available} IDs, so the pool never holds more than one block and a
 * crash abandons at most that. The block follows the consumption rate measured between refills,
 * clamped to {@code [minBlock, node_block_size]}, so that it lasts about the target runway.
 *
 * <p>A request larger than a whole block bypasses the queue and reserves its shortfall directly:
 * waiting for several one-at-a-time refills would be slower and would not save a store write.
 *
 * <p>Threads: all state is guarded by {@code lock}, held only for in-memory work; store calls run
 * outside it (refills on the allocator's executor, direct reservations on a pool of their own, which
 * the caller waits for until its deadline).
 * Callers that find the pool empty wait on {@code changed}, bounded by their deadline.
 */
@ThreadSafe
final class StripePool {
  private static final Logger log = LoggerFactory.getLogger(StripePool.class);

  private static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  private static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(5);

  /** The allocator-wide settings a pool works with. */
  /**
   * @param executor where refills run
   * @param directExecutor where direct reservations run, so that their callers can stop waiting at their
   *     deadline (a thread per waiting call, bounded by the calls that may wait)
   */
  record Settings(Ticker ticker, long targetRunwayNanos, long minBlock, double threshold, Executor executor,
      Executor directExecutor) {}

  /** A snapshot of a pool's counters. */
  record Counters(long served, long reservations, long dropped, long abandoned, long available, long returned) {}

  private final SequenceDefinition definition;
  private final int stripe;
  private final RangeStore store;
  private final Settings settings;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();

  @GuardedBy("lock") private final ArrayDeque<IdRange> ranges = new ArrayDeque<>();
  @GuardedBy("lock") private long available;
  /** No ID at or below this is ever handed out (raised by AdvanceSequence). */
  @GuardedBy("lock") private long floor = Long.MIN_VALUE;
  @GuardedBy("lock") private boolean refilling;
  @GuardedBy("lock") private boolean exhausted;
  @GuardedBy("lock") private boolean closed;
  /** The current block size, adapted at every refill. */
  @GuardedBy("lock") private long block;
  @GuardedBy("lock") private long consumedSinceRefill;
  @GuardedBy("lock") private long lastRefillNanos;
  /** Failed refills, so that a waiter can tell that the refill it waited for failed. */
  @GuardedBy("lock") private long failures;
  @GuardedBy("lock") private RuntimeException lastFailure;
  @GuardedBy("lock") private long backoffNanos;
  @GuardedBy("lock") private long retryAtNanos;
  @GuardedBy("lock") private long served;
  @GuardedBy("lock") private long reservations;
  @GuardedBy("lock") private long dropped;
  /** The part of {@code dropped} abandoned because the pool was closed (the rest: below a floor). */
  @GuardedBy("lock") private long abandoned;
  /** IDs given back to the store by a graceful stop (see {@link #closeAndTake}). */
  @GuardedBy("lock") private long returned;

  StripePool(SequenceDefinition definition, int stripe, RangeStore store, Settings settings) {
    this.definition = definition;
    this.stripe = stripe;
    this.store = store;
    this.settings = settings;
    this.block = Math.min(definition.nodeBlockSize(), settings.minBlock());
    this.lastRefillNanos = settings.ticker().nanos();
  }

  /**
   * Takes up to {@code need} IDs into {@code out}, waiting for a refill if the pool is empty. Returns
   * how many it took: fewer than {@code need} only when the stripe is exhausted.
   *
   * @throws StoreUnavailableException if the store failed or the deadline passed before enough IDs
   *     came; what this call took is in {@code out}, and the caller gives it back
   */
  long take(long need, List<IdRange> out, long deadlineNanos) {
    long taken = 0;
    lock.lock();
    try {
      long failuresBefore = failures;
      while (true) {
        taken += drain(need - taken, out);
        maybeRefill(false);
        // An exhausted stripe may still have a refill in flight that got the last IDs: wait for it.
        if (taken == need || (exhausted && ranges.isEmpty() && !refilling)) {
          return taken;
        }
        if (closed) {
          throw new StoreUnavailableException("sequence '" + definition.name()
              + "': the allocator is closed (server shutting down)");
        }
        long shortfall = need - taken;
        if (shortfall >= block && !exhausted) {
          taken += reserveDirectly(shortfall, out, deadlineNanos);
          continue;
        }
        if (failures != failuresBefore) {
          throw new StoreUnavailableException("sequence '" + definition.name() + "' stripe " + stripe
              + ": no reserve left and the store failed: " + lastFailure.getMessage(), lastFailure);
        }
        maybeRefill(true);
        if (!refilling) {
          continue; // the refill already finished (an inline executor) or was rejected: look again
        }
        long wait = deadlineNanos - System.nanoTime();
        if (wait <= 0) {
          throw new StoreUnavailableException("sequence '" + definition.name() + "' stripe " + stripe
              + ": no reserve became available in time (a refill from the store is in flight)");
        }
        changed.awaitNanos(wait);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("sequence '" + definition.name() + "': interrupted while"
          + " waiting for a reserve", e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Takes exactly {@code need} IDs into {@code out} if the pool holds them now, else nothing (starting a
   * refill if one is due). Never waits and never calls the store on the caller's thread: safe on a
   * network event loop.
   */
  boolean tryTake(long need, List<IdRange> out) {
    lock.lock();
    try {
      if (closed || available < need) {
        maybeRefill(false);
        return false;
      }
      drain(need, out);
      maybeRefill(false);
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Reserves {@code n} IDs from the store for this call (lock released meanwhile), waiting no longer than
   * the call's deadline. The reservation runs on the executor: if the call gives up first, what it
   * reserves when it lands goes to the pool for later calls instead of being lost.
   */
  @GuardedBy("lock")
  private long reserveDirectly(long n, List<IdRange> out, long deadlineNanos) {
    IdRange r;
    CompletableFuture<IdRange> reservation;
    try {
      reservation = CompletableFuture.supplyAsync(() -> store.reserve(definition, stripe, n),
          settings.directExecutor());
    } catch (RejectedExecutionException e) {
      throw unavailable(e);
    }
    lock.unlock();
    try {
      r = reservation.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      keepWhenItLands(reservation);
      lock.lock();
      throw new StoreUnavailableException("sequence '" + definition.name() + "' stripe " + stripe
          + ": a reservation of " + n + " IDs from the store did not finish before the call's deadline;"
          + " what it reserves is kept for later calls");
    } catch (ExecutionException e) {
      lock.lock();
      if (e.getCause() instanceof SequenceExhaustedException) {
        exhausted = true;
        return 0;
      }
      RuntimeException cause = e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
      throw cause instanceof StoreUnavailableException ? cause : unavailable(cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      keepWhenItLands(reservation);
      lock.lock();
      throw new StoreUnavailableException("sequence '" + definition.name() + "': interrupted while"
          + " reserving", e);
    }
    lock.lock();
    reservations++;
    // The floor may have risen while the lock was released.
    IdRange kept = r.above(floor);
    if (kept == null) {
      dropped += r.count();
      return 0;
    }
    dropped += r.count() - kept.count();
    append(out, kept);
    served += kept.count();
    return kept.count();
  }

  /** A reservation its caller stopped waiting for: its IDs join the pool when it lands. */
  private void keepWhenItLands(CompletableFuture<IdRange> reservation) {
    reservation.whenComplete((late, failure) -> {
      if (late != null) {
        lock.lock();
        try {
          addRange(late);
          changed.signalAll();
        } finally {
          lock.unlock();
        }
      }
    });
  }

  /** Moves up to {@code want} IDs from the queue to {@code out}. */
  @GuardedBy("lock")
  private long drain(long want, List<IdRange> out) {
    long got = 0;
    while (got < want && !ranges.isEmpty()) {
      IdRange r = ranges.pollFirst();
      long k = Math.min(r.count(), want - got);
      append(out, r.head(k));
      if (k < r.count()) {
        ranges.addFirst(r.tail(k));
      }
      got += k;
    }
    available -= got;
    consumedSinceRefill += got;
    served += got;
    return got;
  }

  /** Adds to {@code out}, merging with its last range when contiguous (fewer messages on the wire). */
  private static void append(List<IdRange> out, IdRange r) {
    if (!out.isEmpty()) {
      IdRange last = out.get(out.size() - 1);
      if (last.stride() == r.stride() && last.last() + last.stride() == r.first()) {
        out.set(out.size() - 1, new IdRange(last.first(), last.count() + r.count(), r.stride()));
        return;
      }
    }
    out.add(r);
  }

  /**
   * Starts a refill when the pool is below its threshold (or, if {@code waiting}, whenever it is
   * empty) and none is in flight. After a failure, background refills back off; a waiting caller
   * always gets one attempt.
   */
  @GuardedBy("lock")
  private void maybeRefill(boolean waiting) {
    if (refilling || exhausted || closed) {
      return;
    }
    if (!waiting) {
      if (available >= (long) Math.ceil(block * settings.threshold())) {
        return;
      }
      if (failures > 0 && settings.ticker().nanos() < retryAtNanos) {
        return;
      }
    }
    adaptBlock();
    long size = Math.max(1, block - available);
    refilling = true;
    try {
      settings.executor().execute(() -> refill(size));
    } catch (RejectedExecutionException e) {
      refilling = false;
      recordFailure(new StoreUnavailableException("sequence '" + definition.name()
          + "': refill rejected (allocator shutting down)", e));
    }
  }

  /** Sizes the next block from the rate observed since the last refill. */
  @GuardedBy("lock")
  private void adaptBlock() {
    long now = settings.ticker().nanos();
    long elapsed = now - lastRefillNanos;
    long max = definition.nodeBlockSize();
    long min = Math.min(max, settings.minBlock());
    long wanted;
    if (elapsed <= 0) {
      wanted = block; // no time has passed: nothing to learn from
    } else {
      double rate = consumedSinceRefill / (double) elapsed; // IDs per nanosecond
      double target = rate * settings.targetRunwayNanos();
      wanted = target >= max ? max : (long) target;
      // Shrink by at most half per refill, so that one quiet moment does not undo a busy minute.
      wanted = Math.max(wanted, block / 2);
    }
    block = Math.max(min, Math.min(max, wanted));
    consumedSinceRefill = 0;
    lastRefillNanos = now;
  }

  /** Runs on the executor: one store reservation, then back under the lock to publish it. */
  private void refill(long size) {
    IdRange r = null;
    boolean exhaustedNow = false;
    RuntimeException failure = null;
    try {
      r = store.reserve(definition, stripe, size);
    } catch (SequenceExhaustedException e) {
      exhaustedNow = true;
    } catch (RuntimeException e) {
      failure = e;
    }
    lock.lock();
    try {
      refilling = false;
      if (r != null) {
        reservations++;
        backoffNanos = 0;
        addRange(r);
      }
      if (exhaustedNow) {
        exhausted = true;
      }
      if (failure != null) {
        recordFailure(failure instanceof StoreUnavailableException ? failure : unavailable(failure));
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  @GuardedBy("lock")
  private void recordFailure(RuntimeException failure) {
    failures++;
    lastFailure = failure;
    backoffNanos = backoffNanos == 0 ? MIN_BACKOFF_NANOS : Math.min(MAX_BACKOFF_NANOS, backoffNanos * 2);
    // Random jitter keeps servers that failed together from retrying in lock-step.
    retryAtNanos = settings.ticker().nanos() + ThreadLocalRandom.current().nextLong(backoffNanos / 2, backoffNanos + 1);
    log.warn("refill of sequence '{}' stripe {} failed, retrying in about {} ms: {}",
        definition.name(), stripe, TimeUnit.NANOSECONDS.toMillis(backoffNanos), failure.getMessage());
  }

  private StoreUnavailableException unavailable(RuntimeException e) {
    return new StoreUnavailableException("sequence '" + definition.name() + "' stripe " + stripe
        + ": store failed: " + e, e);
  }

  /** Appends a reserved range, cut at the floor; a closed pool abandons it. */
  @GuardedBy("lock")
  private void addRange(IdRange r) {
    IdRange kept = closed ? null : r.above(floor);
    long lost = kept == null ? r.count() : r.count() - kept.count();
    dropped += lost;
    if (closed) {
      abandoned += lost;
    }
    if (kept != null) {
      ranges.addLast(kept);
      available += kept.count();
    }
  }

  /** Returns a range taken by a call that then failed; it goes back to the front of the queue. */
  void giveBack(IdRange r) {
    lock.lock();
    try {
      IdRange kept = closed ? null : r.above(floor);
      served -= r.count();
      dropped += kept == null ? r.count() : r.count() - kept.count();
      if (closed) {
        abandoned += r.count();
      }
      if (kept != null) {
        ranges.addFirst(kept);
        available += kept.count();
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Drops every held ID at or below {@code newFloor}; later refills are cut there too. */
  void raiseFloor(long newFloor) {
    lock.lock();
    try {
      if (newFloor <= floor) {
        return;
      }
      floor = newFloor;
      ArrayDeque<IdRange> kept = new ArrayDeque<>();
      for (IdRange r : ranges) {
        IdRange k = r.above(newFloor);
        if (k != null) {
          kept.addLast(k);
        }
      }
      long keptIds = kept.stream().mapToLong(IdRange::count).sum();
      dropped += available - keptIds;
      available = keptIds;
      ranges.clear();
      ranges.addAll(kept);
    } finally {
      lock.unlock();
    }
  }

  long available() {
    lock.lock();
    try {
      return available;
    } finally {
      lock.unlock();
    }
  }

  Counters counters() {
    lock.lock();
    try {
      return new Counters(served, reservations, dropped, abandoned, available, returned);
    } finally {
      lock.unlock();
    }
  }

  /** Abandons what the pool holds and wakes waiters, which then fail. */
  void close() {
    closeAndTake();
  }

  /**
   * Closes the pool and takes what it holds, for a graceful stop to give back to the store: nothing can
   * hand these IDs out any more (a closed pool serves nothing and abandons refills that land later). They
   * count as abandoned until {@link #returned} says the store took them back.
   */
  List<IdRange> closeAndTake() {
    lock.lock();
    try {
      closed = true;
      List<IdRange> held = List.copyOf(ranges);
      dropped += available;
      abandoned += available;
      available = 0;
      ranges.clear();
      changed.signalAll();
      return held;
    } finally {
      lock.unlock();
    }
  }

  /** {@code n} IDs of {@link #closeAndTake} are back in the store: no longer abandoned (not a gap). */
  void returned(long n) {
    lock.lock();
    try {
      dropped -= n;
      abandoned -= n;
      returned += n;
    } finally {
      lock.unlock();
    }
  }
}
