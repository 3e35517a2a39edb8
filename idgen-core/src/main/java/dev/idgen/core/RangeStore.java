package dev.idgen.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The durable source of blocks that the {@link Allocator} serves from: sequence definitions and, per
 * sequence and stripe, how far its ID space has been reserved.
 *
 * <p>Implementations are thread-safe and may be shared by any number of threads of one process; any
 * number of processes may use one store at once (several servers on one Cassandra cluster), and no two
 * calls of {@link #reserve} — from any thread, process or datacenter — ever return overlapping ranges.
 * Everything a method returns is durable before it returns: after a crash of this process at any
 * moment, a new process never reserves an ID that was returned before.
 *
 * <p>Implementations: the embedded single-node store ({@code dev.idgen.core.store.embedded}) and the
 * Cassandra store, which reserves through compare-and-set in two tiers (global cursor, datacenter pool).
 */
public interface RangeStore extends AutoCloseable {

  /**
   * Creates a sequence, durably.
   *
   * @throws SequenceAlreadyExistsException if a sequence of that name exists, whatever its settings
   * @throws StoreUnavailableException if the store cannot be reached
   */
  void create(SequenceDefinition definition);

  /** The definition of the named sequence, if it exists. */
  Optional<SequenceDefinition> find(String name);

  /**
   * Up to {@code limit} definitions in name order, starting after {@code afterName} (empty string: from
   * the first).
   */
  List<SequenceDefinition> list(String afterName, int limit);

  /**
   * Reserves the next IDs of one stripe for this process: a range of 1 to {@code size} IDs (fewer than
   * {@code size} only where the stripe's end, or a store-side block boundary, is near). No other call,
   * anywhere, ever gets any of them.
   *
   * @throws SequenceExhaustedException if the stripe has no ID left
   * @throws StoreUnavailableException if the store cannot be reached, or an outcome stays unknown; then
   *     nothing was reserved that this process could hand out
   */
  IdRange reserve(SequenceDefinition sequence, int stripe, long size);

  /**
   * Moves every stripe of the sequence past {@code floor}: once this returns, no {@link #reserve} (by
   * any process) returns an ID at or below it. IDs that the store itself held in reserve below the floor
   * are dropped. Never moves a stripe back; advancing to a floor already passed changes nothing.
   */
  void advance(SequenceDefinition sequence, long floor);

  /**
   * The highest floor an {@link #advance} has set for the sequence, as this process can see it cheaply;
   * {@link Long#MIN_VALUE} if none. Polled every {@link #floorRefreshInterval} by allocators that share
   * the store with other processes, so that their cached IDs below a new floor are dropped.
   */
  default long floor(SequenceDefinition sequence) {
    return Long.MIN_VALUE;
  }

  /**
   * How often allocators poll {@link #floor}; {@link Duration#ZERO} for a store that only one process
   * uses, where the allocator's own {@code advance} already drops its cached IDs. {@code advance} on an
   * allocator waits two such intervals before returning, so that every other live process has dropped
   * its cached IDs below the floor by then.
   */
  default Duration floorRefreshInterval() {
    return Duration.ZERO;
  }

  /** How far each stripe is reserved, and what each datacenter holds, as the store sees it now. */
  SequenceState state(SequenceDefinition sequence);

  /** Releases connections and files. Idempotent. */
  @Override
  void close();
}
