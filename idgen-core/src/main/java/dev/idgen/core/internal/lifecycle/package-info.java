/**
 * Internal: the admin side of sequences. {@code DefinitionChanges} creates, updates, deletes, undeletes and
 * purges definitions, and waits for the servers to confirm; {@code SequenceReads} answers the admin reads
 * from where changes are decided; {@code RangeReservations} reserves ranges for one caller. No other module
 * uses this package; it changes without notice.
 *
 * <p>It uses {@code dev.idgen.core}'s values, {@code internal.allocation} and {@code internal.floors}, never the
 * allocator: {@code SequenceReads.describe} returns a plain record that the allocator turns into its view.
 *
 * <p>Threads: no class here has state of its own; any number of threads may call. Concurrent changes of one
 * sequence race in the store's compare-and-set, and the loser changes nothing.
 */
package dev.idgen.core.internal.lifecycle;
