package dev.idgen.core;

/**
 * An advance to a floor at or above the sequence's maximum: it would leave no ID to hand out, so it is
 * refused and nothing changes. Not the sequence's exhaustion: the sequence may have IDs left below the
 * floor; the request does not fit its definition.
 */
public final class FloorAtMaxException extends IdGenException {
  private static final long serialVersionUID = 1L;

  private final String sequence;
  private final long floor;
  private final long max;

  public FloorAtMaxException(String sequence, long floor, long max) {
    super("cannot advance sequence '" + sequence + "' to floor " + floor + ": its max is " + max
        + ", so no ID would be left");
    this.sequence = sequence;
    this.floor = floor;
    this.max = max;
  }

  public String sequence() {
    return sequence;
  }

  public long floor() {
    return floor;
  }

  public long max() {
    return max;
  }
}
