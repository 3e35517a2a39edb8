package dev.idgen.core.internal.allocation;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.core.IdRange;
import dev.idgen.core.RangeStore;
import dev.idgen.core.RunwayPolicy;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.Ticker;
import java.util.ArrayDeque;
import java.util.ArrayList;
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
 * <p>Refill rule ({@link RunwayPolicy}): the pool keeps a low-water mark of {@code rate × outage runway}
 * IDs, clamped to {@code [minBlock, node_block_size / (1 + step)]}; when it holds fewer and no refill is in
 * flight, one refill tops it up to the mark plus a step. The mark is reached before the pool runs dry,
 * so a store that stops answering at the worst moment still leaves a whole runway of IDs in memory, and
 * the pool never holds more than {@code node_block_size} (what a crash abandons at most).
 *
 * <p>The rate is measured between refills over at least {@link #MIN_SAMPLE_NANOS} (shorter intervals are
 * noise); while callers outrun the pool faster than that (they found it empty, or used a whole mark's
 * worth within the interval), the mark grows up to fourfold per refill, so a cold sequence hit at
 * millions of IDs per second reaches its size within a few refills. It shrinks by at most
 * half per refill, so one quiet moment does not undo a busy minute.
 *
 * <p>A request larger than what a refill from empty brings bypasses the queue and reserves its shortfall directly:
 * waiting for several one-at-a-time refills would be slower and would not save a store write.
 *
 * <p>A pool of a {@link dev.idgen.core.Ordering#STRICT} sequence keeps its queue increasing: it never takes a range back
 * (a failed call's IDs are dropped, a counted gap), never reserves directly beside a refill (two
 * reservations in flight could land out of order), and {@link #fence} drops everything it holds, and every
 * refill in flight, when its owner's lease ends.
 *
 * <p>Threads: all state is guarded by {@code lock}, held only for in-memory work; store calls run
 * outside it (refills on the allocator's executor, direct reservations on a pool of their own, which
 * the caller waits for until its deadline).
 * Callers that find the pool empty wait on {@code changed}, bounded by their deadline.
 */
@ThreadSafe
public final class StripePool {
  private static final Logger log = LoggerFactory.getLogger(StripePool.class);

  private static final long MIN_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  private static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(5);
  /**
   * The shortest interval a rate is measured over: paced callers arrive in bursts, and a 100 ms sample of a
   * 200 IDs/s load read up to 1,000 IDs/s (a reserve five times too large, which the datacenter's pool then
   * sizes itself by). Faster cold starts do not wait for it: they grow the mark while they outrun it.
   */
  static final long MIN_SAMPLE_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** How much the low-water mark may grow per refill while callers outrun it faster than a rate sample. */
  private static final int STARVED_GROWTH = 4;

  /**
   * The allocator-wide settings a pool works with.
   *
   * @param policy how the reserve is sized by time
   * @param executor where refills run
   * @param directExecutor where direct reservations run, so that their callers can stop waiting at their
   *     deadline (a thread per waiting call, bounded by the calls that may wait)
   */
  public record Settings(Ticker ticker, RunwayPolicy policy, Executor executor, Executor directExecutor) {}

  /** A snapshot of a pool's counters. */
  record Counters(long served, long reservations, long dropped, long abandoned, long available, long returned,
      long lowWater) {}

  private final SequenceDefinition definition;
  private final int stripe;
  private final RangeStore store;
  private final Settings settings;
  /** The sequence is {@link dev.idgen.core.Ordering#STRICT}: the queue only ever grows upwards (see the class comment). */
  private final boolean strict;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();

  @GuardedBy("lock") private final ArrayDeque<IdRange> ranges = new ArrayDeque<>();
  /** Ranges that refills brought after the pool closed: for the closer to give back. */
  @GuardedBy("lock") private final List<IdRange> late = new ArrayList<>();
  @GuardedBy("lock") private long available;
  /** No ID at or below this is ever handed out (raised by AdvanceSequence). */
  @GuardedBy("lock") private long floor = Long.MIN_VALUE;
  @GuardedBy("lock") private boolean refilling;
  @GuardedBy("lock") private boolean exhausted;
  @GuardedBy("lock") private boolean closed;
  /** Refill below this many IDs; adapted to the rate at every refill. */
  @GuardedBy("lock") private long lowWater;
  /** IDs consumed since {@code sampleStartNanos}: the rate measurement in progress. */
  @GuardedBy("lock") private long consumedSinceSample;
  @GuardedBy("lock") private long sampleStartNanos;
  /** A caller found the pool empty (or too small) since the last refill: the rate outran the reserve. */
  @GuardedBy("lock") private boolean starved;
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
  /** Raised by {@link #fence}: a refill started under an older generation is dropped when it lands. */
  @GuardedBy("lock") private long generation;

  public StripePool(SequenceDefinition definition, int stripe, RangeStore store, Settings settings) {
    this.definition = definition;
    this.stripe = stripe;
    this.store = store;
    this.settings = settings;
    this.strict = definition.strict();
    this.lowWater = settings.policy().lowWater(-1, definition.nodeBlockSize());
    this.sampleStartNanos = settings.ticker().nanos();
  }

  /**
   * Takes up to {@code need} IDs into {@code out}, waiting for a refill if the pool is empty. Returns
   * how many it took: fewer than {@code need} only when the stripe is exhausted.
   *
   * @throws StoreUnavailableException if the store failed or the deadline passed before enough IDs
   *     came; what this call took is in {@code out}, and the caller gives it back
   */
  public long take(long need, List<IdRange> out, long deadlineNanos) {
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
        starved = true;
        if (shortfall >= fullRefill() && !exhausted && !strict) {
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
  public boolean tryTake(long need, List<IdRange> out) {
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
    consumedSinceSample += got;
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
   * Starts a refill when the pool is below its low-water mark (or, if {@code waiting}, whenever it is
   * empty) and none is in flight. After a failure, background refills back off; a waiting caller
   * always gets one attempt.
   */
  @GuardedBy("lock")
  private void maybeRefill(boolean waiting) {
    if (refilling || exhausted || closed) {
      return;
    }
    if (!waiting) {
      if (available >= lowWater) {
        return;
      }
      if (failures > 0 && settings.ticker().nanos() < retryAtNanos) {
        return;
      }
    }
    adaptLowWater();
    long size = settings.policy().refillSize(lowWater, available, definition.nodeBlockSize());
    refilling = true;
    long gen = generation;
    try {
      settings.executor().execute(() -> refill(size, gen));
    } catch (RejectedExecutionException e) {
      refilling = false;
      recordFailure(new StoreUnavailableException("sequence '" + definition.name()
          + "': refill rejected (allocator shutting down)", e));
    }
  }

  /** Sizes the low-water mark from the rate observed since the last sample. */
  @GuardedBy("lock")
  private void adaptLowWater() {
    long now = settings.ticker().nanos();
    long elapsed = now - sampleStartNanos;
    long cap = definition.nodeBlockSize();
    RunwayPolicy policy = settings.policy();
    if (elapsed >= MIN_SAMPLE_NANOS) {
      double rate = consumedSinceSample / (double) elapsed; // IDs per nanosecond
      long measured = policy.lowWater(rate, cap);
      // Shrink by at most half per refill, so that one quiet moment does not undo a busy minute; a sample
      // as long as the runway itself is no moment, and is taken as it is.
      lowWater = elapsed >= policy.runwayNanos() ? measured
          : Math.max(measured, Math.min(lowWater / 2, policy.maxLowWater(cap)));
      consumedSinceSample = 0;
      sampleStartNanos = now;
    } else if (starved || (available == 0 && consumedSinceSample > 0) || consumedSinceSample >= lowWater) {
      // Outrun before a rate could be measured: grow now rather than starve the callers for a sample,
      // by at most fourfold per refill (a short interval is a noisy measure) and no further than the
      // short interval's rate asks for.
      double shortRate = elapsed > 0 ? consumedSinceSample / (double) elapsed : Double.POSITIVE_INFINITY;
      long grown = Math.min(policy.lowWater(shortRate, cap), lowWater * STARVED_GROWTH);
      lowWater = Math.max(lowWater, Math.min(policy.maxLowWater(cap), grown));
    }
    starved = false;
  }

  /** What a refill of an empty pool reserves: requests at least this large reserve directly. */
  @GuardedBy("lock")
  private long fullRefill() {
    return settings.policy().refillSize(lowWater, 0, definition.nodeBlockSize());
  }

  /** Runs on the executor: one store reservation, then back under the lock to publish it. */
  private void refill(long size, long gen) {
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
      if (r != null && gen != generation) {
        // Reserved under an owner lease that has ended since: below what a successor may hand out.
        reservations++;
        dropped += r.count();
        abandoned += r.count();
        r = null;
      }
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

  /**
   * Appends a reserved range, cut at the floor. A closed pool keeps it aside for its closer to give back
   * ({@link #awaitLate}): nothing hands it out, and it counts as abandoned until given back.
   */
  @GuardedBy("lock")
  private void addRange(IdRange r) {
    IdRange kept = r.above(floor);
    dropped += kept == null ? r.count() : r.count() - kept.count();
    if (kept == null) {
      return;
    }
    if (closed) {
      late.add(kept);
      dropped += kept.count();
      abandoned += kept.count();
      return;
    }
    ranges.addLast(kept);
    available += kept.count();
  }

  /**
   * After {@link #closeAndTake}: waits up to {@code timeoutNanos} for a refill still in flight, and takes
   * what refills brought after the pool closed, for the closer to give back too.
   */
  List<IdRange> awaitLate(long timeoutNanos) {
    lock.lock();
    try {
      long left = timeoutNanos;
      while (refilling && left > 0) {
        left = changed.awaitNanos(left);
      }
      List<IdRange> out = List.copyOf(late);
      late.clear();
      return out;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return List.of();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Returns a range taken by a call that then failed; it goes back to the front of the queue (dropped, a
   * counted gap, for a strict sequence: later calls may have taken higher IDs meanwhile). False, and nothing
   * counted here, if the pool is closed: its counters may already be summed into an unloaded sequence's
   * totals, so the caller counts the range lost where they are ({@link Runtimes#lostAfterUnload}).
   */
  boolean giveBack(IdRange r) {
    lock.lock();
    try {
      if (closed) {
        return false;
      }
      IdRange kept = strict ? null : r.above(floor);
      served -= r.count();
      dropped += kept == null ? r.count() : r.count() - kept.count();
      if (strict) {
        abandoned += r.count();
      }
      if (kept != null) {
        ranges.addFirst(kept);
        available += kept.count();
        changed.signalAll();
      }
      return true;
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
      long keptIds = IdRange.total(kept);
      dropped += available - keptIds;
      available = keptIds;
      ranges.clear();
      ranges.addAll(kept);
    } finally {
      lock.unlock();
    }
  }

  /**
   * A strict sequence's owner lease ended (or a new one began): drops what the pool holds (a counted gap)
   * and every refill in flight, so that nothing reserved under the old lease is handed out under a later one.
   */
  public void fence() {
    lock.lock();
    try {
      generation++;
      dropped += available;
      abandoned += available;
      available = 0;
      ranges.clear();
      backoffNanos = 0;
      retryAtNanos = 0;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  public long available() {
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
      return new Counters(served, reservations, dropped, abandoned, available, returned, lowWater);
    } finally {
      lock.unlock();
    }
  }

  /** Abandons what the pool holds and wakes waiters, which then fail. */
  public void close() {
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
