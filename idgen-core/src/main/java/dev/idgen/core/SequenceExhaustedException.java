package dev.idgen.core;

import java.util.List;

/**
 * A sequence (or, for a store, one stripe of it) has no ID left below its maximum. An allocation that
 * ran out part-way carries the ranges it did obtain: they are valid, never handed out before, and
 * belong to the caller (the server streams them before the error).
 */
public final class SequenceExhaustedException extends IdGenException {
  private static final long serialVersionUID = 1L;

  private final String sequence;
  private final long max;
  private final long requested;
  private final transient List<IdRange> delivered;

  public SequenceExhaustedException(String sequence, long max) {
    this(sequence, max, 0, List.of());
  }

  public SequenceExhaustedException(String sequence, long max, long requested, List<IdRange> delivered) {
    super(message(sequence, max, requested, delivered));
    this.sequence = sequence;
    this.max = max;
    this.requested = requested;
    this.delivered = List.copyOf(delivered);
  }

  private static String message(String sequence, long max, long requested, List<IdRange> delivered) {
    String m = "sequence '" + sequence + "' is exhausted: no ID is left at or below its max " + max;
    if (requested > 0) {
      long got = IdRange.total(delivered);
      m += " (delivered " + got + " of the " + requested + " requested)";
    }
    return m;
  }

  public String sequence() {
    return sequence;
  }

  public long max() {
    return max;
  }

  /** How many IDs the allocation asked for; 0 if not known (a store's exception). */
  public long requested() {
    return requested;
  }

  /** The ranges obtained before the sequence ran out; empty if none. */
  public List<IdRange> delivered() {
    return delivered == null ? List.of() : delivered;
  }
}
