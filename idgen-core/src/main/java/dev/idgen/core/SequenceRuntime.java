package dev.idgen.core;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import javax.annotation.Nullable;

/**
 * One sequence loaded in an {@link Allocator}: its pools, one per stripe (a strict sequence's single pool is
 * its {@link StrictOwner}'s), and the marks the allocator's lifecycle reads: used since the last idle sweep,
 * handed out since a floor last looked ({@link #lastHandedOut}).
 *
 * <p>Threads: the hot path reads {@link #touch}'s volatile flags and writes them only when they are clear;
 * {@link #lastHandedOut} runs under this object's monitor, off the hot path (floors, close). Everything else
 * is final, or the pools' own business.
 */
final class SequenceRuntime {
  final SequenceDefinition definition;
  /** Kept from loading (a creation time never changes). */
  final Optional<Instant> createTime;
  final StripePool[] pools;
  /** For a strict sequence: this process's part in its ownership (its pool is {@code pools[0]}); else null. */
  @Nullable final StrictOwner owner;
  final AtomicInteger nextStripe = new AtomicInteger();
  /** Allocated from since the last sweep of idle sequences. Racy by design: a missed write only delays an unload. */
  volatile boolean used = true;
  /** Since when (ticker nanos) it has not been used; meaningful while {@code used} is false. */
  volatile long idleSinceNanos;
  /** Removed from the allocator: its pools are closed or closing. */
  volatile boolean unloaded;
  final KnownSequence known;
  /** Set by every call before it takes IDs (read first: no write on the hot path once set). */
  volatile boolean handedOut;
  /** When (ticker nanos) {@link #handedOut} was last cleared, or an earlier runtime of it was unloaded. */
  @GuardedBy("this") private long markNanos;

  SequenceRuntime(StoredSequence stored, KnownSequence known, RangeStore store, StripePool.Settings settings,
      StrictOwner.Identity identity, Ticker ticker, long markNanos) {
    SequenceDefinition definition = stored.definition();
    this.definition = definition;
    this.known = known;
    this.markNanos = markNanos;
    this.createTime = stored.createTime();
    this.pools = new StripePool[definition.stripes()];
    if (definition.strict()) {
      owner = new StrictOwner(definition, store, ticker, identity, settings);
      pools[0] = owner.pool();
      return;
    }
    owner = null;
    for (int k = 0; k < pools.length; k++) {
      pools[k] = new StripePool(definition, k, store, settings);
    }
  }

  /** The sums of its pools' counters, one short lock per pool. */
  PoolTotals totals() {
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
  void touch() {
    if (!used) {
      used = true;
    }
    if (!handedOut) {
      handedOut = true;
    }
  }

  /**
   * The latest time (ticker nanos) at which a call may have taken IDs, as of {@code now}: now if one marked
   * the runtime since the last look (the mark is cleared), else the time of the last look.
   */
  synchronized long lastHandedOut(long now) {
    if (handedOut) {
      handedOut = false;
      markNanos = now;
    }
    return markNanos;
  }

  void raiseFloor(long floor) {
    for (StripePool pool : pools) {
      pool.raiseFloor(floor);
    }
  }

  void giveBack(List<IdRange> ranges) {
    for (int i = ranges.size() - 1; i >= 0; i--) {
      IdRange r = ranges.get(i);
      int stripe = (int) ((r.first() - definition.start()) % definition.stripes());
      pools[stripe].giveBack(r);
    }
  }
}
