package dev.idgen.core;

import java.util.Map;

/**
 * A {@code ReserveRange} that the sequence's stored state does not allow, whatever is retried: a striped
 * sequence (no contiguous run of IDs belongs to one stripe), or a request id that already reserved a range
 * of another size. Not an invalid request: the same request may be fine for another sequence.
 */
public final class ReservationRefusedException extends IdGenException {
  private static final long serialVersionUID = 1L;

  /** Why. */
  public enum Why {
    /** The sequence has more than one stripe. */
    STRIPED,
    /** The request id already reserved a range of another size. */
    REQUEST_ID_REUSED
  }

  private final Why why;
  private final String sequence;
  @SuppressWarnings("serial") // an immutable Map.of / Map.copyOf
  private final Map<String, String> metadata;

  public ReservationRefusedException(Why why, String sequence, String message, Map<String, String> metadata) {
    super(message);
    this.why = why;
    this.sequence = sequence;
    this.metadata = Map.copyOf(metadata);
  }

  /** A striped sequence. */
  public static ReservationRefusedException striped(SequenceDefinition d) {
    return new ReservationRefusedException(Why.STRIPED, d.name(), "cannot reserve a contiguous range of sequence '"
        + d.name() + "': it has " + d.stripes() + " stripes, and each stripe owns every " + d.stripes()
        + "th ID, so no contiguous range can be taken from one place (reservations need a sequence of one stripe)",
        Map.of("stripes", Integer.toString(d.stripes())));
  }

  /** A request id reused for a reservation of another size. */
  public static ReservationRefusedException requestIdReused(Reservation existing, long count) {
    return new ReservationRefusedException(Why.REQUEST_ID_REUSED, existing.sequence(), "request_id '"
        + existing.requestId() + "' already reserved " + existing.count() + " IDs of sequence '" + existing.sequence()
        + "' (" + existing.first() + " to " + existing.last() + "), not " + count + ": a retry must ask for the same"
        + " count; use a new request_id for a new reservation",
        Map.of("requestId", existing.requestId(), "reserved", Long.toString(existing.count()),
            "first", Long.toString(existing.first()), "last", Long.toString(existing.last())));
  }

  public Why why() {
    return why;
  }

  public String sequence() {
    return sequence;
  }

  /** Facts for programs (the server's ErrorInfo metadata), besides the sequence. */
  public Map<String, String> metadata() {
    return metadata;
  }
}
