package dev.idgen.server.metrics;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.ForwardingRangeStore;
import dev.idgen.core.IdRange;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.Ticker;

/**
 * The store as the allocator sees it: every {@link #reserve} is timed into {@code idgen_refill_seconds}
 * and counted. Everything else is forwarded ({@link ForwardingRangeStore}). Does not own the store:
 * {@link #close} does nothing ({@code IdGenServer} closes the store itself).
 */
@ThreadSafe
final class MeteredRangeStore extends ForwardingRangeStore {

  private final IdGenMetrics metrics;
  private final Ticker ticker;

  MeteredRangeStore(RangeStore store, IdGenMetrics metrics, Ticker ticker) {
    super(store);
    this.metrics = metrics;
    this.ticker = ticker;
  }

  @Override
  public IdRange reserve(SequenceDefinition sequence, int stripe, long size) {
    return timed(() -> delegate().reserve(sequence, stripe, size));
  }

  /** A strict sequence's owner reserves this way: timed and counted like any reservation. */
  @Override
  public IdRange reserveStrict(SequenceDefinition sequence, long epoch, long size) {
    return timed(() -> delegate().reserveStrict(sequence, epoch, size));
  }

  private IdRange timed(java.util.function.Supplier<IdRange> reservation) {
    long start = ticker.nanos();
    boolean succeeded = false;
    try {
      IdRange range = reservation.get();
      succeeded = true;
      return range;
    } catch (SequenceExhaustedException e) {
      succeeded = true; // an answer, not a failure of the store
      throw e;
    } finally {
      metrics.reservation(ticker.nanos() - start, succeeded);
    }
  }
}
