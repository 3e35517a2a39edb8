/**
 * Internal: the sequences loaded in one allocator and the IDs they hold. {@code Runtimes} loads, unloads and
 * closes them; a {@code SequenceRuntime} is one loaded sequence with its pools; a {@code StripePool} is one
 * stripe's reserve and its refills ({@code RunwayPolicy}); {@code ShutdownGiveBack} gives reserves back at a
 * stop; {@code ClientLeases} says how long clients may use what they are handed. A strict sequence's pool is
 * served under an {@code OwnerLease}, which {@code internal.strict} implements. No other module uses this
 * package; it changes without notice.
 *
 * <p>It uses {@code dev.idgen.core}'s values and {@code RangeStore} only, never the allocator, the floors, the
 * strict owners or the lifecycle (those use it).
 *
 * <p>Threads: the hot path is lock-free (a volatile flag of the runtime, then the pool's own short lock);
 * refills run on the allocator's executor; loads go through a concurrent map, the first runtime put wins;
 * one sweeper thread unloads idle sequences, and a stop's give-back runs on a few workers of its own. Each
 * class comment names its monitors. {@code PoolTotals} is the one class that is not thread-safe (local sums).
 */
package dev.idgen.core.internal.allocation;
