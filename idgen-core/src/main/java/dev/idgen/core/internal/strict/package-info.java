/**
 * Internal: the owner leases of {@code Ordering.STRICT} sequences. A {@code StrictOwner} is one sequence's
 * lease (claim, renew, release, take over, the owner to forward to) and the one pool it fences; it implements
 * {@code internal.allocation}'s {@code OwnerLease}, which the runtime holds. {@code StrictOwners} runs the
 * rounds of every strict sequence loaded, and answers where to forward. No other module uses this package;
 * it changes without notice.
 *
 * <p>It uses {@code dev.idgen.core}'s values and {@code internal.allocation}, never the allocator.
 *
 * <p>Threads: a {@code StrictOwner} runs its store I/O under its own monitor (a round and a call claiming the
 * same sequence take turns); what a network thread asks (serving, the forward target, the last row seen)
 * reads volatile fields and never waits for that monitor. The rounds run on one daemon thread of their own.
 */
package dev.idgen.core.internal.strict;
