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

  /**
   * The {@code floor} of an entry that says "the sequence's definition changed" (an update, a delete, an
   * undelete): every server reads the definition again and drops what it holds under the old one. It rides
   * the floor log so that a change reaches every server, and is confirmed, exactly as an advance is. As a
   * floor it is a no-op ({@link Long#MIN_VALUE}: below every ID), so a server of an older version that reads
   * such an entry applies nothing, and a store's highest floor of a sequence is never lowered by one.
   */
  public static final long DEFINITION_CHANGED = Long.MIN_VALUE;

  /**
   * One advance: the sequence's floor rose to {@code floor} at log version {@code version}; or, with
   * {@code floor} {@link #DEFINITION_CHANGED}, a change of its definition to {@code definitionVersion} (its
   * stored version, the etag; 0 where the store records none: a store whose every read shows every change). A
   * server confirms a change only once it has read that version where changes are decided.
   */
  @Immutable
  public record Change(long version, String sequence, long floor, long definitionVersion) {
    /** An advance, or a definition change whose version the store does not record. */
    public Change(long version, String sequence, long floor) {
      this(version, sequence, floor, 0);
    }

    /** A change of the sequence's definition to its stored version {@code definitionVersion}. */
    public static Change definitionChange(long version, String sequence, long definitionVersion) {
      return new Change(version, sequence, DEFINITION_CHANGED, definitionVersion);
    }

    /** Whether this entry is a change of the sequence's definition rather than a floor. */
    public boolean definitionChanged() {
      return floor == DEFINITION_CHANGED;
    }
  }
}
