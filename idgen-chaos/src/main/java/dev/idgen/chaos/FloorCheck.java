package dev.idgen.chaos;

import static dev.idgen.chaos.IdMath.idsAtOrBelow;
import static dev.idgen.chaos.IdMath.secs;

import dev.idgen.chaos.RunLog.Advance;
import dev.idgen.chaos.RunLog.Contents;
import dev.idgen.chaos.RunLog.SequenceSpec;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The floors: {@code below_floor} counts IDs at or below the floor of an {@code AdvanceSequence} that returned
 * OK, in a range whose call started after it returned, or in a batch a client stub was asked for after it
 * returned. Failed advances promise nothing and are not judged. Batches asked for before an advance returned
 * and handed out after are not judged either (their IDs may have been taken before it returned), but counted.
 * Also the summary of the advances ({@link #printAdvances}). Single-threaded, as the checker is.
 */
final class FloorCheck {
  /** "Soon after an advance returned": within the client lease lifetime and margin the harness sets. */
  static final long SOON = TimeUnit.SECONDS.toNanos(5);

  private FloorCheck() {}

  /** OK advances of one sequence in the order they returned, with the highest floor returned so far. */
  private static final class Floors {
    final long[] returned;
    final long[] maxFloor;
    final Advance[] by;

    Floors(List<Advance> ok) {
      List<Advance> sorted = new ArrayList<>(ok);
      sorted.sort(Comparator.comparingLong(Advance::returnedNanos));
      returned = new long[sorted.size()];
      maxFloor = new long[sorted.size()];
      by = new Advance[sorted.size()];
      for (int i = 0; i < sorted.size(); i++) {
        Advance a = sorted.get(i);
        returned[i] = a.returnedNanos();
        boolean higher = i == 0 || a.floor() > maxFloor[i - 1];
        maxFloor[i] = higher ? a.floor() : maxFloor[i - 1];
        by[i] = higher ? a : by[i - 1];
      }
    }

    /** The index of the last advance that returned strictly before {@code t}, or -1. */
    int before(long t) {
      int lo = 0;
      int hi = returned.length - 1;
      int best = -1;
      while (lo <= hi) {
        int mid = (lo + hi) >>> 1;
        if (returned[mid] < t) {
          best = mid;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      return best;
    }
  }

  /** Holds one sequence's ranges and stub runs to the floors of the OK advances that returned before them. */
  static void check(SequenceRecords seq, Contents run, Evidence evidence, Tally tally) {
    SequenceSpec spec = seq.spec;
    Floors floors = new Floors(run.advances().stream().filter(a -> a.ok() && a.name().equals(spec.name())).toList());
    boolean isFresh = spec.name().startsWith(FreshAdvance.PREFIX);
    for (ReceivedRange r : seq.ranges) {
      int i = floors.before(r.callStartNanos());
      long below = i < 0 ? 0 : idsAtOrBelow(r.first(), r.count(), r.stride(), floors.maxFloor[i]);
      if (isFresh && i >= 0) {
        tally.freshJudged += r.count();
        tally.freshBelow += below;
      }
      if (below > 0) {
        tally.belowFloor += below;
        evidence.note("below_floor", spec.name() + ": " + below + " IDs of " + r.describe()
            + " at or below floor " + floors.maxFloor[i] + " of an advance that returned OK at "
            + secs(floors.by[i].returnedNanos()));
      }
    }
    for (ServedRun r : seq.served) {
      int i = floors.before(r.askedNanos());
      long below = i < 0 ? 0 : idsAtOrBelow(r.first(), r.count(), r.stride(), floors.maxFloor[i]);
      if (i >= 0) {
        tally.stubJudged += r.count();
        if (r.askedNanos() - floors.returned[i] <= SOON) {
          tally.stubSoonAfter += r.count();
        }
      }
      if (below > 0) {
        tally.belowFloor += below;
        evidence.note("below_floor", spec.name() + ": " + below + " IDs of " + r.describe()
            + " at or below floor " + floors.maxFloor[i] + " of an advance that returned OK at "
            + secs(floors.by[i].returnedNanos()));
      }
      // Batches asked for before an advance returned and handed out after: not judged (their IDs may have
      // been taken before it returned), but counted, as the place to look if anything ever leaks.
      int j = floors.before(r.handedNanos());
      if (j > i) {
        tally.stubStraddling += idsAtOrBelow(r.first(), r.count(), r.stride(), floors.maxFloor[j]) - below;
      }
    }
  }

  /** The advances' outcomes, and those in flight while a node was paused or a server dead; the counts. */
  record Advances(long ok, long duringPause, long duringKill) {}

  /**
   * Prints the faults by kind, the advances and their outcomes, those in flight during a pause or a kill,
   * and how many stub IDs were judged against a floor.
   */
  static Advances printAdvances(Contents run, int files, long served, Tally tally, PrintStream out) {
    Map<String, Long> kinds = new TreeMap<>();
    run.faults().forEach(f -> kinds.merge(f.kind(), 1L, Long::sum));
    long during = run.faults().stream().filter(f -> f.kind().equals("advance-burst")
        && f.detail().contains("during=")).count();
    Map<String, Long> outcomes = new TreeMap<>();
    run.advances().forEach(a -> outcomes.merge(a.outcome(), 1L, Long::sum));
    long advancesOk = outcomes.getOrDefault("ok", 0L);
    out.printf("faults by kind: %s (advance bursts during a pause or a kill: %d); client files: %d; "
        + "stub IDs served: %d%n", kinds, during, files, served);
    out.printf("advances: %d (ok %d, failed %d): %s%n", run.advances().size(), advancesOk,
        run.advances().size() - advancesOk, outcomes);
    // Advances in flight (from the call's start to its return) while a node was paused or a server dead.
    Map<String, Long> duringPause = new TreeMap<>();
    Map<String, Long> duringKill = new TreeMap<>();
    for (Advance a : run.advances()) {
      for (String kind : List.of("cassandra-pause", "server-kill")) {
        boolean overlaps = a.startedNanos() != Long.MIN_VALUE && run.down().stream()
            .anyMatch(d -> d.kind().equals(kind)
                && a.startedNanos() < TimeUnit.MILLISECONDS.toNanos(d.toMillis())
                && a.returnedNanos() > TimeUnit.MILLISECONDS.toNanos(d.fromMillis()));
        if (overlaps) {
          (kind.equals("server-kill") ? duringKill : duringPause).merge(a.outcome(), 1L, Long::sum);
        }
      }
    }
    long advancesDuringPause = duringPause.values().stream().mapToLong(Long::longValue).sum();
    long advancesDuringKill = duringKill.values().stream().mapToLong(Long::longValue).sum();
    out.printf("advances in flight while a Cassandra node was paused: %d %s; while a server was dead: %d %s%n",
        advancesDuringPause, duringPause, advancesDuringKill, duringKill);
    out.printf("stub IDs judged against an OK advance (asked for after one returned): %d, of which within %d s "
            + "after it: %d; IDs at or below a floor in batches asked for before an advance returned and handed "
            + "out after it (not judged): %d%n", tally.stubJudged, TimeUnit.NANOSECONDS.toSeconds(SOON),
        tally.stubSoonAfter, tally.stubStraddling);
    return new Advances(advancesOk, advancesDuringPause, advancesDuringKill);
  }
}
