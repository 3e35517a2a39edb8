package dev.idgen.chaos;

import dev.idgen.chaos.RunLog.Advance;
import dev.idgen.chaos.RunLog.Contents;
import dev.idgen.chaos.RunLog.Snapshot;
import dev.idgen.chaos.RunLog.Window;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The checker's table by fault kind: for each kind, how many were applied and how long they held, the IDs the
 * clients received while one was in force ({@code window} lines) and in the {@value #AFTER_SECONDS} s after it
 * healed, the duplicates among them, the {@code AdvanceSequence} calls in flight meanwhile, and what the
 * servers themselves counted from the start of each fault of that kind to the start of the next fault
 * ({@code counters} lines: IDs lost and compare-and-set outcomes), beside the lost-ID bound the kind added.
 *
 * <p>What it can and cannot attribute: IDs and duplicates are placed by the time a client read them, so a
 * range read during two overlapping windows (a burst inside a partition) counts for both kinds; an ID read
 * after a window's {@value #AFTER_SECONDS} s counts for none. The servers' counts are placed by fault: one
 * fault's share runs until the next fault starts, so it includes its aftermath, and a burst that runs beside
 * it is in it too; a server's counts from its last read to a {@code kill -9} die with it. Lost IDs are only
 * the servers' own counts ({@code idgen_ids_lost_total}) and, for server-kill, the reserves held just before
 * the kills: the checker's {@code lost} comes from the final reckoning and cannot be split by fault.
 */
final class FaultTable {
  static final long AFTER_SECONDS = 10;
  private static final long AFTER_NANOS = TimeUnit.SECONDS.toNanos(AFTER_SECONDS);

  /** One kind's row. {@code cas} by outcome (both tiers), {@code attempts} compare-and-sets sent. */
  record Row(String kind, long applied, long heldMillis, long idsDuring, long idsAfter, long duplicates,
      long advancesOk, long advancesFailed, long lostCounted, long heldAtKills, long lostBound,
      Map<String, Long> cas) {}

  private final Map<String, List<long[]>> during = new TreeMap<>();
  private final Map<String, List<long[]>> after = new TreeMap<>();
  private final Map<String, long[]> ids = new HashMap<>();
  private final Map<String, Long> duplicates = new HashMap<>();
  /** Strict calls by kind: ok during, failed during, ok after, failed after. */
  private final Map<String, long[]> strictCalls = new HashMap<>();
  /** The longest stretch without a successful strict call that overlaps one of the kind's windows, by kind. */
  private final Map<String, Long> strictGap = new HashMap<>();
  private boolean strict;

  FaultTable(Contents run) {
    Map<String, List<long[]>> rawDuring = new TreeMap<>();
    Map<String, List<long[]>> rawAfter = new TreeMap<>();
    for (Window w : run.windows()) {
      long from = TimeUnit.MILLISECONDS.toNanos(w.fromMillis());
      long to = TimeUnit.MILLISECONDS.toNanos(w.toMillis());
      rawDuring.computeIfAbsent(w.kind(), k -> new ArrayList<>()).add(new long[] {from, to});
      rawAfter.computeIfAbsent(w.kind(), k -> new ArrayList<>()).add(new long[] {to, to + AFTER_NANOS});
    }
    rawDuring.forEach((k, v) -> during.put(k, merge(v)));
    rawAfter.forEach((k, v) -> after.put(k, merge(v)));
  }

  /** A range of {@code count} IDs a client read at {@code nanos}. */
  void received(long nanos, long count) {
    for (String kind : during.keySet()) {
      if (within(during.get(kind), nanos)) {
        ids.computeIfAbsent(kind, k -> new long[2])[0] += count;
      } else if (within(after.get(kind), nanos)) {
        ids.computeIfAbsent(kind, k -> new long[2])[1] += count;
      }
    }
  }

  /** A strict client's call that ended at {@code nanos}, successfully or not. */
  void strictCall(long nanos, boolean ok) {
    strict = true;
    for (String kind : during.keySet()) {
      if (within(during.get(kind), nanos)) {
        strictCalls.computeIfAbsent(kind, k -> new long[4])[ok ? 0 : 1]++;
      } else if (within(after.get(kind), nanos)) {
        strictCalls.computeIfAbsent(kind, k -> new long[4])[ok ? 2 : 3]++;
      }
    }
  }

  /**
   * The sorted ends of one strict sequence's successful calls: each stretch between two of them of at least
   * 100 ms that overlaps a kind's window is a candidate for that kind's longest.
   */
  void strictGaps(long[] sortedOkEnds) {
    strict = true;
    for (int i = 1; i < sortedOkEnds.length; i++) {
      long from = sortedOkEnds[i - 1];
      long to = sortedOkEnds[i];
      if (to - from < TimeUnit.MILLISECONDS.toNanos(100)) {
        continue;
      }
      for (Map.Entry<String, List<long[]>> e : during.entrySet()) {
        if (overlaps(e.getValue(), from, to)) {
          strictGap.merge(e.getKey(), to - from, Math::max);
        }
      }
    }
  }

  /**
   * When the run had strict calls: per kind applied, the strict calls that ended while one held and in the
   * {@value #AFTER_SECONDS} s after (ok/failed), and the longest stretch without a successful one that
   * overlapped one of the kind's windows.
   */
  void printStrict(Contents run, PrintStream out) {
    if (!strict) {
      return;
    }
    out.printf("strict calls by fault kind (ended while one held, and in the %d s after: ok/failed; the longest"
        + " stretch without a successful strict call that overlapped one):%n", AFTER_SECONDS);
    String format = "%-16s %16s %16s %14s%n";
    out.printf(format, "kind", "during_ok/failed", "after_ok/failed", "max_gap_s");
    List<String> kinds = new ArrayList<>(FaultKinds.NAMES);
    run.windows().stream().map(Window::kind).filter(k -> !kinds.contains(k)).distinct().sorted().forEach(kinds::add);
    for (String kind : kinds) {
      if (!during.containsKey(kind)) {
        continue;
      }
      long[] c = strictCalls.getOrDefault(kind, new long[4]);
      out.printf(format, kind, c[0] + "/" + c[1], c[2] + "/" + c[3],
          String.format(Locale.ROOT, "%.1f", strictGap.getOrDefault(kind, 0L) / 1e9));
    }
  }

  /** {@code count} IDs handed out twice, the two copies read at {@code first} and {@code second}. */
  void duplicate(long count, long first, long second) {
    for (String kind : during.keySet()) {
      if (near(kind, first) || near(kind, second)) {
        duplicates.merge(kind, count, Long::sum);
      }
    }
  }

  private boolean near(String kind, long nanos) {
    return nanos != Long.MIN_VALUE && (within(during.get(kind), nanos) || within(after.get(kind), nanos));
  }

  /** The rows, one per kind that was applied or held, in the order of {@link FaultKinds#NAMES}. */
  List<Row> rows(Contents run) {
    Map<String, long[]> applied = new HashMap<>(); // count, bound
    run.faults().forEach(f -> {
      long[] a = applied.computeIfAbsent(f.kind(), k -> new long[2]);
      a[0]++;
      a[1] += f.lostBound();
    });
    Map<String, Long> held = new HashMap<>();
    run.windows().forEach(w -> held.merge(w.kind(), w.toMillis() - w.fromMillis(), Long::sum));
    // The servers' counts, by the fault each difference between two reads of one incarnation falls in.
    Map<String, String> kindOf = new HashMap<>();
    run.windows().stream().filter(w -> !w.seq().equals("-")).forEach(w -> kindOf.put(w.seq(), w.kind()));
    Map<String, Long> lostCounted = new HashMap<>();
    Map<String, Map<String, Long>> cas = new HashMap<>();
    Map<String, Snapshot> last = new LinkedHashMap<>();
    for (Snapshot s : run.snapshots()) {
      String key = s.server() + "#" + s.incarnation();
      Snapshot prev = last.put(key, s);
      String kind = prev == null ? null : kindOf.get(prev.seq());
      if (kind == null) {
        continue;
      }
      lostCounted.merge(kind, s.lost() - prev.lost(), Long::sum);
      Map<String, Long> byOutcome = cas.computeIfAbsent(kind, k -> new TreeMap<>());
      s.counts().forEach((k, v) -> byOutcome.merge(k.substring(k.indexOf(':') + 1),
          v - prev.counts().getOrDefault(k, 0L), Long::sum));
    }
    long heldAtKills = run.reported().stream().filter(r -> r.when().equals("kill"))
        .mapToLong(r -> Math.max(0, r.held())).sum();
    List<Row> rows = new ArrayList<>();
    List<String> kinds = new ArrayList<>(FaultKinds.NAMES);
    applied.keySet().stream().filter(k -> !kinds.contains(k)).sorted().forEach(kinds::add);
    for (String kind : kinds) {
      if (!applied.containsKey(kind) && !held.containsKey(kind)) {
        continue;
      }
      long ok = 0;
      long failed = 0;
      for (Advance a : run.advances()) {
        if (a.startedNanos() != Long.MIN_VALUE
            && overlaps(during.getOrDefault(kind, List.of()), a.startedNanos(), a.returnedNanos())) {
          if (a.ok()) {
            ok++;
          } else {
            failed++;
          }
        }
      }
      long[] a = applied.getOrDefault(kind, new long[2]);
      long[] i = ids.getOrDefault(kind, new long[2]);
      rows.add(new Row(kind, a[0], held.getOrDefault(kind, 0L), i[0], i[1], duplicates.getOrDefault(kind, 0L),
          ok, failed, lostCounted.getOrDefault(kind, 0L), kind.equals("server-kill") ? heldAtKills : 0, a[1],
          cas.getOrDefault(kind, Map.of())));
    }
    return rows;
  }

  /** Prints {@code rows} as a table, with a line that says how to read it. */
  static void print(List<Row> rows, PrintStream out) {
    if (rows.isEmpty()) {
      return;
    }
    out.printf("by fault kind (IDs read by clients while a fault of the kind held, and in the %d s after; the"
        + " servers' own counts from each such fault's start to the next fault's):%n", AFTER_SECONDS);
    String format = "%-16s %7s %8s %12s %12s %10s %11s %12s %12s %12s %11s %11s %11s %11s %11s%n";
    out.printf(format, "kind", "applied", "held_s", "ids_during", "ids_after", "duplicates", "advances",
        "lost_counted", "held_at_kill", "lost_bound", "cas_unknown", "res_applied", "res_not_app", "res_ambig",
        "unresolved");
    for (Row r : rows) {
      out.printf(format, r.kind(), r.applied(), String.format(Locale.ROOT, "%.1f", r.heldMillis() / 1e3),
          r.idsDuring(), r.idsAfter(), r.duplicates(), r.advancesOk() + "/" + r.advancesFailed(),
          r.lostCounted(), r.heldAtKills(), r.lostBound(), cas(r, "unknown"), cas(r, "resolved_applied"),
          cas(r, "resolved_not_applied"), cas(r, "resolved_ambiguous"), cas(r, "unresolved"));
    }
    out.println("(advances: AdvanceSequence calls in flight during the kind's windows, ok/failed; cas_*: unknown"
        + " compare-and-set outcomes and how they were resolved, both tiers)");
  }

  private static long cas(Row r, String outcome) {
    return r.cas().getOrDefault(outcome, 0L);
  }

  private static List<long[]> merge(List<long[]> intervals) {
    List<long[]> sorted = new ArrayList<>(intervals);
    sorted.sort(Comparator.comparingLong(x -> x[0]));
    List<long[]> merged = new ArrayList<>();
    for (long[] iv : sorted) {
      long[] lastOne = merged.isEmpty() ? null : merged.get(merged.size() - 1);
      if (lastOne != null && iv[0] <= lastOne[1]) {
        lastOne[1] = Math.max(lastOne[1], iv[1]);
      } else {
        merged.add(new long[] {iv[0], iv[1]});
      }
    }
    return merged;
  }

  /** Whether {@code t} lies in one of the merged, sorted {@code intervals} (ends included). */
  private static boolean within(List<long[]> intervals, long t) {
    int lo = 0;
    int hi = intervals.size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      long[] iv = intervals.get(mid);
      if (t < iv[0]) {
        hi = mid - 1;
      } else if (t > iv[1]) {
        lo = mid + 1;
      } else {
        return true;
      }
    }
    return false;
  }

  private static boolean overlaps(List<long[]> intervals, long from, long to) {
    for (long[] iv : intervals) {
      if (from <= iv[1] && to >= iv[0]) {
        return true;
      }
    }
    return false;
  }
}
