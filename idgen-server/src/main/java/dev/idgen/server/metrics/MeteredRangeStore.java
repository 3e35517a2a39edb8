package dev.idgen.server.metrics;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.FloorLog;
import dev.idgen.core.IdRange;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceState;
import dev.idgen.core.Ticker;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The store as the allocator sees it: every {@link #reserve} is timed into {@code idgen_refill_seconds}
 * and counted. Everything else is passed through. Does not own the store: {@link #close} does nothing
 * ({@code IdGenServer} closes the store itself).
 */
@ThreadSafe
final class MeteredRangeStore implements RangeStore {

  private final RangeStore store;
  private final IdGenMetrics metrics;
  private final Ticker ticker;

  MeteredRangeStore(RangeStore store, IdGenMetrics metrics, Ticker ticker) {
    this.store = store;
    this.metrics = metrics;
    this.ticker = ticker;
  }

  @Override
  public IdRange reserve(SequenceDefinition sequence, int stripe, long size) {
    long start = ticker.nanos();
    boolean succeeded = false;
    try {
      IdRange range = store.reserve(sequence, stripe, size);
      succeeded = true;
      return range;
    } catch (SequenceExhaustedException e) {
      succeeded = true; // an answer, not a failure of the store
      throw e;
    } finally {
      metrics.reservation(ticker.nanos() - start, succeeded);
    }
  }

  @Override
  public void create(SequenceDefinition definition) {
    store.create(definition);
  }

  @Override
  public Optional<SequenceDefinition> find(String name) {
    return store.find(name);
  }

  @Override
  public List<SequenceDefinition> list(String afterName, int limit) {
    return store.list(afterName, limit);
  }

  @Override
  public AdvanceReceipt advance(SequenceDefinition sequence, long floor) {
    return store.advance(sequence, floor);
  }

  @Override
  public long floor(SequenceDefinition sequence) {
    return store.floor(sequence);
  }

  @Override
  public FloorLog floorLog(long afterVersion) {
    return store.floorLog(afterVersion);
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease) {
    store.announce(server, incarnation, appliedVersion, lease);
  }

  @Override
  public void withdraw(String server, UUID incarnation) {
    store.withdraw(server, incarnation);
  }

  @Override
  public List<String> unconfirmed(AdvanceReceipt receipt) {
    return store.unconfirmed(receipt);
  }

  @Override
  public Duration floorRefreshInterval() {
    return store.floorRefreshInterval();
  }

  @Override
  public SequenceState state(SequenceDefinition sequence) {
    return store.state(sequence);
  }

  @Override
  public void close() {
    // Not ours: IdGenServer closes the store.
  }
}
