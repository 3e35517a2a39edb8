/**
 * The embedded store: {@code EmbeddedRangeStore}, a {@code RangeStore} in one SQLite file on local disk, for a
 * single node without Cassandra, and the rooms it delegates to (the tables, the connection and its set-up, the
 * commit check, the checkpoint that proves a failed commit's successors on disk, the integrity check, and the
 * mapping of disk faults to statuses). It uses only {@code dev.idgen.core}'s API, never the allocator's
 * internal packages.
 *
 * <p>Threads: the threads of one process share one connection, serialised by the store's lock, and every
 * operation is one short transaction under it; processes on one directory are serialised by SQLite's write
 * lock ({@code BEGIN IMMEDIATE}), which the file's exclusive locking mode turns into a refusal of the second
 * process at start.
 */
package dev.idgen.core.store.embedded;
