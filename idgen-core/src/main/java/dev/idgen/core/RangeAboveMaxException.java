package dev.idgen.core;

/**
 * A {@code ReserveRange} asked for more IDs than are left of the sequence above what its datacenters and
 * servers already hold: no range of that size fits below its maximum. Nothing was reserved. Not the
 * sequence's exhaustion for {@code Allocate}, which may still serve what the tiers hold.
 */
public final class RangeAboveMaxException extends IdGenException {
  private static final long serialVersionUID = 1L;

  private final String sequence;
  private final long max;
  private final long requested;
  private final long remaining;

  public RangeAboveMaxException(String sequence, long max, long requested, long remaining) {
    super("cannot reserve " + requested + " IDs of sequence '" + sequence + "': only " + remaining
        + " are left above what its datacenters and servers hold, up to its max " + max
        + " (reserve at most " + remaining + ", or raise the max)");
    this.sequence = sequence;
    this.max = max;
    this.requested = requested;
    this.remaining = remaining;
  }

  public String sequence() {
    return sequence;
  }

  public long max() {
    return max;
  }

  public long requested() {
    return requested;
  }

  /** How many IDs were left above every tier's reserve when the reservation was refused. */
  public long remaining() {
    return remaining;
  }
}
