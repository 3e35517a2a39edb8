/**
 * Internal: floors, and the servers that must confirm them. {@code FloorSync} is this server's announcement,
 * its reads of the floor log, and the confirmations an advance or a definition change waits for;
 * {@code FloorPoller} runs its cycles; {@code Advances} is {@code AdvanceSequence} end to end (the store, the
 * pools here, the confirmations, then the wait for client leases). No other module uses this package; it
 * changes without notice.
 *
 * <p>It uses {@code dev.idgen.core}'s values and {@code internal.allocation}, never the allocator: what a
 * floor or a definition change does to the loaded sequences reaches {@code Runtimes} through the narrow
 * {@code FloorSync.Floors} interface, and an advance waits through an {@code Advances.Sleeper}.
 *
 * <p>Threads: {@code FloorSync}'s cycles are serialized on its monitor, the heartbeats it has seen on a lock of
 * their own, and whether it serves is one volatile read on the request path; the poller runs the cycles, the
 * heartbeat reads and the looks at the lease marks on three daemon threads of its own; an advance runs on the
 * caller's thread and holds no state.
 */
package dev.idgen.core.internal.floors;
