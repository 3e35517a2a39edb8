package dev.idgen.core;

import com.google.errorprone.annotations.Immutable;
import java.util.List;

/**
 * What a server reads, every floor-refresh interval, to learn the floors that {@code AdvanceSequence}
 * set anywhere: the changes its datacenter's floor log holds after a version it has already applied.
 * One store read, whatever the number of sequences. Immutable.
 *
 * @param version the log's newest version (0: nothing was ever advanced)
 * @param changes the changes after the version asked for, oldest first
 * @param complete false if the log no longer holds every change after the version asked for (it keeps
 *     the newest ones only): the reader must then re-read the floor of every sequence it holds
 */
@Immutable
@SuppressWarnings("Immutable") // components are List.copyOf: unmodifiable
public record FloorLog(long version, List<Change> changes, boolean complete) {
  /** The log of a store that only one process uses: nothing to learn. */
  public static final FloorLog EMPTY = new FloorLog(0, List.of(), true);

  public FloorLog {
    changes = List.copyOf(changes);
  }

  /** One advance: the sequence's floor rose to {@code floor} at log version {@code version}. */
  @Immutable
  public record Change(long version, String sequence, long floor) {}
}
