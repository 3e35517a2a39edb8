package dev.idgen.core;

import java.util.List;

/**
 * An {@code AdvanceSequence} whose floor is in force in the store, but which some live servers have not
 * confirmed in time: they may still hand out cached IDs at or below the floor until they do (or until
 * their lease runs out, when they stop serving by themselves). Advancing again to the same floor
 * completes it; the server answers UNAVAILABLE, because retrying is the remedy.
 */
public final class AdvanceNotConfirmedException extends IdGenException {
  private static final long serialVersionUID = 1L;

  private final String sequence;
  private final long floor;
  private final List<String> unconfirmed;

  public AdvanceNotConfirmedException(String sequence, long floor, List<String> unconfirmed, String lease) {
    super("sequence '" + sequence + "': floor " + floor + " is in force in the store, but "
        + unconfirmed.size() + " server(s) did not confirm it in time: " + String.join(", ", unconfirmed)
        + ". Until they do they may still hand out cached IDs at or below it; a server that cannot reach"
        + " the store stops serving by itself within " + lease + ". Advance again to the same floor to"
        + " complete it.");
    this.sequence = sequence;
    this.floor = floor;
    this.unconfirmed = List.copyOf(unconfirmed);
  }

  public String sequence() {
    return sequence;
  }

  /** The floor that is in force in the store but not confirmed everywhere. */
  public long floor() {
    return floor;
  }

  /** The servers (datacenter/name) that had not confirmed. */
  public List<String> unconfirmed() {
    return unconfirmed;
  }
}
