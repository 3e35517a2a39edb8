package dev.idgen.chaos;

import static dev.idgen.chaos.IdMath.idsAtOrBelow;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Ranges reserved by {@code ReserveRange} ({@link ReserveRangeFault}) against everything handed out: the
 * {@code reservation} lines of {@code run.txt} ({@value #LINE}, written by {@link #logMade} and {@link #logFailed};
 * {@link RunLog#read} ignores them, so a run's other checks read it as before), checked one sequence at a time:
 * <ul>
 *   <li>{@code reserved_overlaps} (must be 0): IDs of a reserved range that a client received in an
 *       {@code Allocate} range, that a client stub handed out, or that another reservation (another request id)
 *       also got;
 *   <li>{@code replay_mismatches} (must be 0): calls with one request id that got different ranges (a retry
 *       must get its request's range);
 *   <li>for the loss reckoning: the reserved IDs above the highest floor, which nobody receives on purpose
 *       (taken out of {@code lost}), and the counts of failed calls whose request id never got a range, whose
 *       range may be a gap (added to {@code lost_bound}).
 * </ul>
 * Single-threaded, as the checker is; {@link #logMade} and {@link #logFailed} write through the run's log, which
 * serialises its lines.
 */
final class ReservationCheck {
  /** The first token of the lines. */
  static final String LINE = "reservation";

  /** A reservation a call got: {@code first} to {@code last} included, for {@code requestId}. */
  record Made(String sequence, long first, long last, String requestId, boolean replayed, String server) {
    String describe() {
      return sequence + " [" + first + ", " + last + "] request " + requestId + (replayed ? " (replayed)" : "")
          + " on " + server;
    }
  }

  /** A call that failed: its range, if it took one, is a gap unless a retry got it. */
  record Failed(String sequence, long count, String requestId, String code, String server) {}

  /** What the lines say. */
  record Reservations(List<Made> made, List<Failed> failed) {}

  /** The result of every sequence's check. */
  record Totals(long calls, long made, long replayed, long failed, long reservedIds, long overlaps, long mismatches,
      long failedUnrecovered) {}

  private final Reservations lines;
  private long overlaps;
  private long mismatches;
  private long reservedIds;

  private ReservationCheck(Reservations lines) {
    this.lines = lines;
  }

  static void logMade(RunLog log, String sequence, long first, long last, String requestId, boolean replayed,
      String server, long startedNanos, long returnedNanos) {
    log.line(LINE, "made", sequence, first, last, requestId, replayed, server, startedNanos, returnedNanos);
  }

  static void logFailed(RunLog log, String sequence, long count, String requestId, String code, String server,
      long startedNanos) {
    log.line(LINE, "failed", sequence, count, requestId, code, server, startedNanos);
  }

  /** Reads the {@code reservation} lines of the run in {@code dir}. */
  static ReservationCheck read(Path dir) throws IOException {
    List<Made> made = new ArrayList<>();
    List<Failed> failed = new ArrayList<>();
    for (String line : Files.readAllLines(dir.resolve(RunLog.FILE), StandardCharsets.UTF_8)) {
      String[] t = line.split(" ");
      if (!t[0].equals(LINE) || t.length < 7) {
        continue;
      }
      if (t[1].equals("made")) {
        made.add(new Made(t[2], Long.parseLong(t[3]), Long.parseLong(t[4]), t[5], Boolean.parseBoolean(t[6]), t[7]));
      } else if (t[1].equals("failed")) {
        failed.add(new Failed(t[2], Long.parseLong(t[3]), t[4], t[5], t[6]));
      }
    }
    return new ReservationCheck(new Reservations(List.copyOf(made), List.copyOf(failed)));
  }

  /**
   * Checks sequence {@code seq}'s reservations against what its clients received and its stubs handed out;
   * returns its reserved IDs above {@code floor} (the highest floor that may have applied), which the loss
   * reckoning takes out.
   */
  long check(SequenceRecords seq, long floor, Evidence evidence) {
    String name = seq.spec.name();
    // One range per request id: the first call that got one; later ones must match it.
    Map<String, Made> byRequest = new LinkedHashMap<>();
    for (Made m : lines.made()) {
      if (!m.sequence().equals(name)) {
        continue;
      }
      Made first = byRequest.putIfAbsent(m.requestId(), m);
      if (first != null && (first.first() != m.first() || first.last() != m.last())) {
        mismatches++;
        evidence.note("replay_mismatches", m.describe() + " but the same request got " + first.describe());
      }
    }
    List<Made> ranges = new ArrayList<>(byRequest.values());
    if (ranges.isEmpty()) {
      return 0;
    }
    ranges.sort(Comparator.comparingLong(Made::first));
    long above = 0;
    for (int i = 0; i < ranges.size(); i++) {
      Made r = ranges.get(i);
      above += IdMath.overlap(r.first(), r.last(), floor + 1, Long.MAX_VALUE);
      reservedIds += r.last() - r.first() + 1;
      if (i > 0 && r.first() <= ranges.get(i - 1).last()) {
        long both = IdMath.overlap(r.first(), r.last(), ranges.get(i - 1).first(), ranges.get(i - 1).last());
        overlaps += both;
        evidence.note("reserved_overlaps", r.describe() + " overlaps " + ranges.get(i - 1).describe());
      }
    }
    long[] reach = reach(ranges);
    for (ReceivedRange got : seq.ranges) {
      long ids = reservedIn(ranges, reach, got.first(), got.count(), got.stride());
      if (ids > 0) {
        overlaps += ids;
        evidence.note("reserved_overlaps", ids + " reserved IDs handed out by Allocate: " + got.describe());
      }
    }
    for (ServedRun run : seq.served) {
      long ids = reservedIn(ranges, reach, run.first(), run.count(), run.stride());
      if (ids > 0) {
        overlaps += ids;
        evidence.note("reserved_overlaps", ids + " reserved IDs handed out by the stub of client " + run.client()
            + ": " + run.first() + " count " + run.count() + " stride " + run.stride());
      }
    }
    return above;
  }

  /**
   * How many of the IDs {@code first, first + stride, …} ({@code count}) lie in {@code ranges}, sorted by first
   * ID (overlapping ones, a violation, are each counted); {@code reach} is {@link #reach} of them.
   */
  static long reservedIn(List<Made> ranges, long[] reach, long first, long count, long stride) {
    long last = IdMath.lastId(first, count, stride);
    if (count < 1 || stride < 1 || last == Long.MIN_VALUE) {
      return 0; // out of bounds: RangeCheck's
    }
    int lo = 0;
    int hi = reach.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (reach[mid] < first) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    long ids = 0;
    for (int i = lo; i < ranges.size() && ranges.get(i).first() <= last; i++) {
      Made r = ranges.get(i);
      ids += idsAtOrBelow(first, count, stride, r.last()) - idsAtOrBelow(first, count, stride, r.first() - 1);
    }
    return ids;
  }

  /**
   * The running maximum of the ranges' last IDs, in their order: the first range that may reach an ID is the
   * first whose reach is at or above it (it grows even where ranges overlap).
   */
  static long[] reach(List<Made> ranges) {
    long[] reach = new long[ranges.size()];
    long max = Long.MIN_VALUE;
    for (int i = 0; i < reach.length; i++) {
      max = Math.max(max, ranges.get(i).last());
      reach[i] = max;
    }
    return reach;
  }

  /** Every sequence checked: the totals, with the failed calls whose request never got a range; printed. */
  Totals totals(PrintStream out) {
    Set<String> gotRange = new HashSet<>();
    long replayed = 0;
    for (Made m : lines.made()) {
      gotRange.add(m.sequence() + '\u0000' + m.requestId());
      if (m.replayed()) {
        replayed++;
      }
    }
    long failedUnrecovered = 0;
    Map<String, Long> failedCodes = new LinkedHashMap<>();
    Set<String> counted = new HashSet<>();
    for (Failed f : lines.failed()) {
      failedCodes.merge(f.code(), 1L, Long::sum);
      String key = f.sequence() + '\u0000' + f.requestId();
      if (!gotRange.contains(key) && counted.add(key)) {
        failedUnrecovered += f.count();
      }
    }
    Totals t = new Totals(lines.made().size() + lines.failed().size(), lines.made().size(), replayed,
        lines.failed().size(), reservedIds, overlaps, mismatches, failedUnrecovered);
    if (t.calls() > 0) {
      out.printf("reservations: calls=%d made=%d replayed=%d failed=%d %s reserved_ids=%d reserved_overlaps=%d"
          + " replay_mismatches=%d; %d IDs asked for by failed calls whose request never got a range are in"
          + " lost_bound%n", t.calls(), t.made(), t.replayed(), t.failed(), failedCodes, t.reservedIds(),
          t.overlaps(), t.mismatches(), t.failedUnrecovered());
    }
    return t;
  }
}
