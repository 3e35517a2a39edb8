package dev.idgen.core;

import com.google.errorprone.annotations.Immutable;
import java.time.Instant;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A contiguous range of a sequence's IDs handed to one caller by {@code ReserveRange}: {@code first} to
 * {@code last}, both included, taken from above everything any datacenter, server or client holds, and
 * never handed out by {@code Allocate}. The store keeps one record per reservation: which range, for which
 * request id, who asked and when.
 *
 * <p>{@code replayed} is not stored: it says that this call found the reservation its request id had
 * already made (a retry) instead of making a new one; listings say false.
 */
@Immutable
public record Reservation(String sequence, String requestId, long first, long last, String reservedBy,
    Instant reservedAt, boolean replayed) {

  /** Request ids: 1 to 64 characters of [A-Za-z0-9._:-] (a UUID fits). */
  public static final int MAX_REQUEST_ID_LENGTH = 64;
  private static final Pattern REQUEST_ID = Pattern.compile("[A-Za-z0-9._:-]{1,64}");
  /** The longest {@code reservedBy} kept; longer identities are cut. */
  public static final int MAX_RESERVED_BY_LENGTH = 256;

  public Reservation {
    Objects.requireNonNull(sequence, "sequence");
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(reservedBy, "reservedBy");
    Objects.requireNonNull(reservedAt, "reservedAt");
    if (last < first) {
      throw new IllegalArgumentException("reservation [" + first + ", " + last + "]: last below first");
    }
  }

  /** How many IDs the range holds. */
  public long count() {
    return last - first + 1;
  }

  /** The range as the allocator's ranges are written (stride 1). */
  public IdRange range() {
    return new IdRange(first, count(), 1);
  }

  /** This record, as found again by a retry of its request. */
  public Reservation asReplayed() {
    return new Reservation(sequence, requestId, first, last, reservedBy, reservedAt, true);
  }

  /** This record as stored (not a replay). */
  public Reservation asStored() {
    return new Reservation(sequence, requestId, first, last, reservedBy, reservedAt, false);
  }

  /**
   * Checks a caller's request id.
   *
   * @throws InvalidRequestException (field {@code request_id}) if it is not 1 to 64 characters of
   *     [A-Za-z0-9._:-]
   */
  public static String checkRequestId(String requestId) {
    if (requestId == null || !REQUEST_ID.matcher(requestId).matches()) {
      String shown = requestId == null ? "null" : "'" + SequenceDefinition.printable(requestId) + "'";
      throw InvalidRequestException.ofField("request_id", "request_id " + shown + " (expected: 1 to "
          + MAX_REQUEST_ID_LENGTH + " characters of [A-Za-z0-9._:-], e.g. a UUID; or unset)");
    }
    return requestId;
  }

  /** {@code reservedBy} as stored: at most {@link #MAX_RESERVED_BY_LENGTH} characters. */
  public static String boundedReservedBy(String reservedBy) {
    return reservedBy.length() <= MAX_RESERVED_BY_LENGTH ? reservedBy : reservedBy.substring(0, MAX_RESERVED_BY_LENGTH);
  }
}
