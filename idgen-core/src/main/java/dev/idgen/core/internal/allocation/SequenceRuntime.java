package dev.idgen.core.internal.allocation;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.core.IdRange;
import dev.idgen.core.KnownSequence;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoredSequence;
import dev.idgen.core.Ticker;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import javax.annotation.Nullable;

/**
 * One sequence loaded in an {@link dev.idgen.core.Allocator}: its pools, one per stripe (a strict sequence's single pool is
 * its {@link OwnerLease}'s), and the marks the allocator's lifecycle reads: used since the last idle sweep,
 * handed out since the mark was last looked at ({@link #lastHandedOut}).
 *
 * <p>Threads: the hot path reads {@link #touch}'s volatile flags and writes them only when they are clear;
 * {@link #lastHandedOut} runs under this object's monitor, off the hot path (floors, close, and the allocator's
 * look at the marks every {@link ClientLeases#LOOK_EVERY}). Everything else is final, or the pools' own business.
 */
public final class SequenceRuntime {
  public final SequenceDefinition definition;
  /** Kept from loading (a creation time never changes). */
  final Optional<Instant> createTime;
  public final StripePool[] pools;
  /** For a strict sequence: this process's part in its ownership (its pool is {@code pools[0]}); else null. */
  @Nullable public final OwnerLease owner;
  public final AtomicInteger nextStripe = new AtomicInteger();
  /** Allocated from since the last sweep of idle sequences. Racy by design: a missed write only delays an unload. */
  volatile boolean used = true;
  /** Since when (ticker nanos) it has not been used; meaningful while {@code used} is false. */
  volatile long idleSinceNanos;
  /** Removed from the allocator: its pools are closed or closing. */
  public volatile boolean unloaded;
  final KnownState known;
  /** Set by every call before it takes IDs (read first: no write on the hot path once set). */
  volatile boolean handedOut;
  /** When (ticker nanos) {@link #handedOut} was last cleared, or an earlier runtime of it was unloaded. */
  @GuardedBy("this") private long markNanos;
  private final Ticker ticker;

  SequenceRuntime(StoredSequence stored, KnownState known, RangeStore store, StripePool.Settings settings,
      OwnerLease.Opener owners, Ticker ticker, long markNanos) {
    SequenceDefinition definition = stored.definition();
    this.definition = definition;
    this.known = known;
    this.markNanos = markNanos;
    this.ticker = ticker;
    this.createTime = stored.createTime();
    this.pools = new StripePool[definition.stripes()];
    if (definition.strict()) {
      owner = owners.open(definition, store, ticker, settings);
      pools[0] = owner.pool();
      return;
    }
    owner = null;
    for (int k = 0; k < pools.length; k++) {
      pools[k] = new StripePool(definition, k, store, settings);
    }
  }

  /** The sums of its pools' counters, one short lock per pool. */
  public PoolTotals totals() {
    PoolTotals t = new PoolTotals();
    for (StripePool p : pools) {
      t.add(p.counters());
    }
    return t;
  }

  /**
   * Marks the sequence used, before a call takes IDs from it; reads first, so that the hot path does not
   * write a shared line every call.
   */
  public void touch() {
    if (!used) {
      used = true;
    }
    if (!handedOut) {
      handedOut = true;
    }
  }

  /**
   * The latest time (ticker nanos) at which a call may have taken IDs: now if one marked the runtime since the
   * last look (the mark is cleared), else the time of the last look that found it marked.
   *
   * <p>Why this never reads older than a call it may have missed, however rarely anything looks: a call marks
   * the runtime before it takes IDs, and its client's lease counts from when the request was sent, earlier
   * still. A look that finds the mark set notes its own time, read under this monitor (so noted times only
   * rise), which is after the mark of every call it clears; a call that found the mark already set, and takes
   * after the look cleared it, read it before the look, so its lease too started before the noted time. A call
   * that marks after a look leaves the mark set for the next one, and an advance looks itself, after its floor
   * is in the pools (a call that marks later takes only IDs above it). So how often the periodic look runs
   * ({@link #lookAtMark}) bounds only how much longer than needed an advance waits (at most one period after
   * the last call's lease could end, if the look runs on time); a late or stalled look makes the advance's own
   * look find the mark set, which waits longer, never shorter.
   */
  synchronized long lastHandedOut() {
    if (handedOut) {
      handedOut = false;
      markNanos = ticker.nanos();
    }
    return markNanos;
  }

  /**
   * The periodic look ({@link #lastHandedOut}), so that a mark set long ago is not read as "now" by the next
   * advance: the wait then follows the leases that can still be in use. No monitor when nothing was marked.
   */
  void lookAtMark() {
    if (handedOut) {
      long unused = lastHandedOut();
    }
  }

  void raiseFloor(long floor) {
    for (StripePool pool : pools) {
      pool.raiseFloor(floor);
    }
  }

  /**
   * Gives a failed call's ranges back to their pools ({@link StripePool#giveBack}); returns how many IDs closed
   * pools refused (an unloaded runtime's), which the caller counts lost.
   */
  long giveBack(List<IdRange> ranges) {
    long refused = 0;
    for (int i = ranges.size() - 1; i >= 0; i--) {
      IdRange r = ranges.get(i);
      int stripe = (int) ((r.first() - definition.start()) % definition.stripes());
      if (!pools[stripe].giveBack(r)) {
        refused += r.count();
      }
    }
    return refused;
  }
}
