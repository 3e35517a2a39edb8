/**
 * The allocator and the API its callers meet: {@link dev.idgen.core.Allocator} (built by
 * {@link dev.idgen.core.AllocatorBuilder}), the values it takes and returns ({@link dev.idgen.core.IdRange},
 * {@link dev.idgen.core.SequenceDefinition}, {@link dev.idgen.core.Ordering},
 * {@link dev.idgen.core.Reservation}, {@link dev.idgen.core.SequenceState}, ...), the one exception hierarchy
 * ({@link dev.idgen.core.IdGenException} and its subclasses), the store's interface
 * ({@link dev.idgen.core.RangeStore}, {@link dev.idgen.core.ForwardingRangeStore} and the records a store
 * returns), and the clocks ({@link dev.idgen.core.Ticker}, {@link dev.idgen.core.WallClock}).
 *
 * <p>The allocator's work is done in the rooms under {@code dev.idgen.core.internal}, which are internal: no
 * other module uses them, and they change without notice. Imports run downhill: the allocator uses the rooms;
 * the rooms and the stores ({@code store.*}) use this package's values and interfaces, never
 * {@code Allocator} or {@code AllocatorBuilder}. {@code PackageRoomsTest} checks it at every test run.
 *
 * <p>Threads: the allocator is thread-safe (its class comment says which calls may run on a network thread);
 * the values and exceptions are immutable; a {@link dev.idgen.core.RangeStore} is thread-safe by contract.
 */
package dev.idgen.core;
