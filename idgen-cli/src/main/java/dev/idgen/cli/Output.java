package dev.idgen.cli;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import com.google.protobuf.util.Timestamps;
import dev.idgen.api.v1.DatacenterReserve;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import dev.idgen.api.v1.Reservation;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.StripeState;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Writes results as text for people or as protobuf's JSON mapping for scripts ({@code --output}).
 * JSON is what {@code JsonFormat} prints (64-bit integers as strings, as grpcurl shows them), with
 * fields at their default value included, so that a script finds every field.
 */
final class Output {

  private static final JsonFormat.Printer JSON = JsonFormat.printer().includingDefaultValueFields();
  private static final JsonFormat.Printer JSON_LINE = JSON.omittingInsignificantWhitespace();

  private final PrintWriter out;
  private final IdgenCli.OutputFormat format;

  Output(PrintWriter out, IdgenCli.OutputFormat format) {
    this.out = out;
    this.format = format;
  }

  boolean json() {
    return format == IdgenCli.OutputFormat.json;
  }

  /** One sequence: a JSON object, or its fields one per line. */
  void sequence(Sequence sequence) {
    if (json()) {
      out.println(json(JSON, sequence));
      return;
    }
    out.printf(Locale.ROOT, "name:             %s%n", sequence.getName());
    out.printf(Locale.ROOT, "start:            %d%n", sequence.getStart());
    out.printf(Locale.ROOT, "max:              %d%n", sequence.getMax());
    out.printf(Locale.ROOT, "stripes:          %d%n", sequence.getStripes());
    out.printf(Locale.ROOT, "node block size:  %d%n", sequence.getNodeBlockSize());
    out.printf(Locale.ROOT, "dc block size:    %d%n", sequence.getDcBlockSize());
    out.printf(Locale.ROOT, "ordering:         %s%n", OrderingConverter.name(sequence.getOrderingValue()));
    if (sequence.getOrdering() == Ordering.ORDERING_STRICT) {
      out.printf(Locale.ROOT, "home datacenter:  %s%n", sequence.getHomeDatacenter());
      if (sequence.hasOwner()) {
        out.printf(Locale.ROOT, "owner:            %s%n", sequence.getOwner());
      }
      if (sequence.hasOwnerEpoch()) {
        out.printf(Locale.ROOT, "owner epoch:      %d%n", sequence.getOwnerEpoch());
      }
    }
    if (!sequence.getEtag().isEmpty()) {
      out.printf(Locale.ROOT, "etag:             %s%n", sequence.getEtag());
    }
    if (sequence.hasDeleteTime()) {
      out.printf(Locale.ROOT, "deleted:          %s (restorable until %s)%n", instant(sequence.getDeleteTime()),
          instant(sequence.getExpireTime()));
    }
    out.printf(Locale.ROOT, "remaining:        %d%n", sequence.getRemaining());
    out.printf(Locale.ROOT, "headroom:         %s%n", percent(sequence.getHeadroom()));
    out.printf(Locale.ROOT, "server reserve:   %d%n", sequence.getServerReserve());
    for (StripeState stripe : sequence.getStripeStatesList()) {
      out.printf(Locale.ROOT, "stripe %d:         next unreserved %s, remaining %d%n", stripe.getStripe(),
          stripe.hasNextUnreserved() ? Long.toString(stripe.getNextUnreserved()) : "none (used up)",
          stripe.getRemaining());
    }
    for (DatacenterReserve reserve : sequence.getDatacenterReservesList()) {
      out.printf(Locale.ROOT, "reserve %s/%d:   %d%n", reserve.getDatacenter(), reserve.getStripe(),
          reserve.getIds());
    }
  }

  /**
   * Every sequence: one JSON object {"sequences": [...]}, or a table. Its columns after HEADROOM are
   * new ones, so that the earlier ones keep their place: ORDERING, and when a strict sequence is listed,
   * HOME (its home datacenter), OWNER and EPOCH ("-" where there is none).
   */
  void sequences(List<Sequence> sequences) {
    if (json()) {
      out.println(json(JSON, dev.idgen.api.v1.ListSequencesResponse.newBuilder()
          .addAllSequences(sequences).build()));
      return;
    }
    boolean strict = sequences.stream().anyMatch(s -> s.getOrdering() == Ordering.ORDERING_STRICT);
    String row = "%-32s %20s %20s %7s %20s %9s " + (strict ? "%-10s %-16s %-24s %s%n" : "%s%n");
    Object[] header = {"NAME", "START", "MAX", "STRIPES", "REMAINING", "HEADROOM", "ORDERING", "HOME", "OWNER",
        "EPOCH"};
    out.printf(Locale.ROOT, row, strict ? header : Arrays.copyOf(header, 7));
    for (Sequence s : sequences) {
      boolean isStrict = s.getOrdering() == Ordering.ORDERING_STRICT;
      out.printf(Locale.ROOT, row, s.getName(), s.getStart(), s.getMax(), s.getStripes(), s.getRemaining(),
          percent(s.getHeadroom()), OrderingConverter.name(s.getOrderingValue()),
          isStrict && !s.getHomeDatacenter().isEmpty() ? s.getHomeDatacenter() : "-",
          isStrict && s.hasOwner() ? s.getOwner() : "-",
          isStrict && s.hasOwnerEpoch() ? Long.toString(s.getOwnerEpoch()) : "-");
    }
  }

  /** A reservation: a JSON object ({@code ReserveRangeResponse}), or its fields one per line. */
  void reservation(Reservation r, boolean replayed) {
    if (json()) {
      out.println(json(JSON, dev.idgen.api.v1.ReserveRangeResponse.newBuilder().setReservation(r)
          .setReplayed(replayed).build()));
      return;
    }
    out.printf(Locale.ROOT, "sequence:     %s%n", r.getSequence());
    out.printf(Locale.ROOT, "first:        %d%n", r.getFirst());
    out.printf(Locale.ROOT, "last:         %d%n", r.getLast());
    out.printf(Locale.ROOT, "count:        %d%n", r.getCount());
    out.printf(Locale.ROOT, "request id:   %s%n", r.getRequestId());
    out.printf(Locale.ROOT, "reserved by:  %s%n", r.getReservedBy());
    out.printf(Locale.ROOT, "reserved at:  %s%n", Timestamps.toString(r.getReserveTime()));
    if (replayed) {
      out.printf(Locale.ROOT, "replayed:     yes (this request id had reserved it already; nothing more taken)%n");
    }
  }

  /** Every reservation of a sequence: one JSON object {"reservations": [...]}, or a table. */
  void reservations(List<Reservation> reservations) {
    if (json()) {
      out.println(json(JSON, dev.idgen.api.v1.ListReservationsResponse.newBuilder()
          .addAllReservations(reservations).build()));
      return;
    }
    String row = "%20s %20s %20s %-24s %-24s %s%n";
    out.printf(Locale.ROOT, row, "FIRST", "LAST", "COUNT", "RESERVED_AT", "RESERVED_BY", "REQUEST_ID");
    for (Reservation r : reservations) {
      out.printf(Locale.ROOT, row, r.getFirst(), r.getLast(), r.getCount(), Timestamps.toString(r.getReserveTime()),
          r.getReservedBy(), r.getRequestId());
    }
  }

  /**
   * One range of an allocation: with {@code --ranges} (or JSON, one object per line) the range itself,
   * otherwise each of its IDs on a line.
   */
  void range(IdRange range, boolean asRange) {
    if (json()) {
      out.println(json(JSON_LINE, range));
    } else if (asRange) {
      long last = range.getFirst() + (range.getCount() - 1) * range.getStride();
      out.printf(Locale.ROOT, "%d..%d count=%d stride=%d%n", range.getFirst(), last, range.getCount(),
          range.getStride());
    } else {
      StringBuilder lines = new StringBuilder();
      for (long i = 0; i < range.getCount(); i++) {
        lines.append(range.getFirst() + i * range.getStride()).append(System.lineSeparator());
        if (lines.length() > 64 * 1024) {
          out.print(lines);
          lines.setLength(0);
        }
      }
      out.print(lines);
    }
  }

  /**
   * The report of a bulk advance or import: one row per sequence, as text columns (NAME OUTCOME FLOOR
   * SOURCE DETAIL), or one JSON object {"results": [...]} with the floor as a string, like other 64-bit
   * integers.
   */
  void floorResults(List<Floors.Result> results) {
    if (json()) {
      StringBuilder json = new StringBuilder("{\"results\":[");
      for (int i = 0; i < results.size(); i++) {
        Floors.Result r = results.get(i);
        json.append(i == 0 ? "" : ",").append("{\"name\":").append(quote(r.row().name()))
            .append(",\"floor\":\"").append(r.row().floor()).append("\"")
            .append(",\"outcome\":\"").append(r.outcome()).append("\"")
            .append(",\"source\":").append(quote(r.row().source()))
            .append(",\"detail\":").append(quote(r.detail())).append("}");
      }
      out.println(json.append("]}"));
      return;
    }
    String row = "%-32s %-13s %20s  %-24s %s%n";
    out.printf(Locale.ROOT, row, "NAME", "OUTCOME", "FLOOR", "SOURCE", "DETAIL");
    for (Floors.Result r : results) {
      out.printf(Locale.ROOT, row, r.row().name(), r.outcome(), r.row().floor(), r.row().source(), r.detail());
    }
  }

  private static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        default -> {
          if (c < 0x20) {
            b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }

  void flush() {
    out.flush();
  }

  private static String instant(com.google.protobuf.Timestamp t) {
    return java.time.Instant.ofEpochSecond(t.getSeconds(), t.getNanos()).toString();
  }

  private static String percent(double fraction) {
    return String.format(Locale.ROOT, "%.2f %%", fraction * 100);
  }

  private static String json(JsonFormat.Printer printer, MessageOrBuilder message) {
    try {
      return printer.print(message);
    } catch (InvalidProtocolBufferException e) {
      // Only for Any fields with unknown types; idgen.v1 has none.
      throw new UncheckedIOException(e);
    }
  }
}
