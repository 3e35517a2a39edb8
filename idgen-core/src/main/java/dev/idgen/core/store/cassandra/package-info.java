/**
 * The Cassandra store: {@code CassandraRangeStore}, a {@code RangeStore} on lightweight transactions in two tiers
 * (global cursors at SERIAL, one pool per datacenter at LOCAL_SERIAL), and the rooms it delegates to, one table
 * or one concern each ({@code CasOutcomes}, {@code PoolTier}, {@code GlobalTier}, {@code Definitions},
 * {@code OwnerTable}, {@code FloorLogTable}, {@code ReservationTable}, {@code Datacenters}). It uses only
 * {@code dev.idgen.core}'s API (the store interface and its values), never the allocator's internal packages.
 *
 * <p>Threads: every method may be called from many threads at once. The driver's session is thread-safe and
 * shared; the prepared statements are immutable once the background connection has prepared them (published
 * through a volatile field); the rooms keep little mutable state (counters, the highest value each row was seen to
 * hold, the datacenters last read), in atomics, concurrent maps and volatile fields.
 */
package dev.idgen.core.store.cassandra;
