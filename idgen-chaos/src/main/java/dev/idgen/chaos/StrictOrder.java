package dev.idgen.chaos;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The promise of an {@code ORDERING_STRICT} sequence, checked on what clients recorded: every ID handed out is
 * larger than every ID of every {@code Allocate} call that completed before this call started, whichever
 * server either call reached. So for every pair of calls where one ended (its status received) strictly
 * before the other started (its request not yet sent), all IDs of the first must be below all IDs of the
 * second. Calls that overlap in time may be ordered either way.
 *
 * <p>The times are those of one clock: the strict clients are threads of the harness's JVM and stamp their
 * calls with the run's {@link RunClock} ({@link System#nanoTime()}, monotonic). A call's start is taken
 * before it is started and its end after its status arrived ({@link RecordingInterceptor}), so "ended before
 * the other started" in the record implies it in fact: the check can miss a violation between calls that were
 * nearly simultaneous, never invent one.
 *
 * <p>In O(n log n): the calls sorted by end time, with the running maximum of their highest IDs; for each call,
 * a binary search finds the calls that ended strictly before it started, and the highest ID among them must be
 * below its lowest. A call that violates the order with any earlier call is counted once (with the earlier
 * call holding the highest ID as its example).
 */
final class StrictOrder {
  private StrictOrder() {}

  /**
   * One call that handed out IDs: from {@code startNanos} (before it was started) to {@code endNanos} (its
   * status received), its lowest and highest ID, how many IDs, and its outcome ({@code OK}, or the status of a
   * call that failed after some ranges).
   */
  record Call(int client, int server, long startNanos, long endNanos, long min, long max, long ids, String outcome) {
    String describe() {
      return server == STUB
          ? String.format(Locale.ROOT, "client-%d stub batch asked %.6fs handed %.6fs IDs %d..%d (%d)", client,
              startNanos / 1e9, endNanos / 1e9, min, max, ids)
          : String.format(Locale.ROOT, "client-%d server-%d call %.6fs-%.6fs IDs %d..%d (%d) %s", client, server,
              startNanos / 1e9, endNanos / 1e9, min, max, ids, outcome);
    }
  }

  /**
   * The server of a {@link Call} that is a client stub's batch (asked for before its calls started, handed out
   * after they ended), not one call.
   */
  static final int STUB = -1;

  /** A call ({@code later}) with IDs at or below the highest ID of a call ({@code earlier}) that ended before it started. */
  record Violation(Call later, Call earlier) {
    String describe() {
      return later.describe() + " started after " + earlier.describe() + " ended, and its lowest ID "
          + later.min() + " is not above that call's highest " + earlier.max();
    }
  }

  /** How many calls were judged and how many broke the order, with up to the requested number of examples. */
  record Result(long calls, long violations, List<Violation> examples) {}

  /** Checks {@code calls} (any order), keeping at most {@code maxExamples} examples, the earliest started first. */
  static Result check(List<Call> calls, int maxExamples) {
    int n = calls.size();
    Call[] byEnd = calls.toArray(new Call[0]);
    Arrays.sort(byEnd, Comparator.comparingLong(Call::endNanos));
    long[] ends = new long[n];
    // highest[i]: the call with the highest ID among byEnd[0..i].
    Call[] highest = new Call[n];
    for (int i = 0; i < n; i++) {
      ends[i] = byEnd[i].endNanos();
      highest[i] = i == 0 || byEnd[i].max() > highest[i - 1].max() ? byEnd[i] : highest[i - 1];
    }
    Call[] byStart = calls.toArray(new Call[0]);
    Arrays.sort(byStart, Comparator.comparingLong(Call::startNanos));
    long violations = 0;
    List<Violation> examples = new ArrayList<>();
    for (Call c : byStart) {
      int j = lastEndedBefore(ends, c.startNanos());
      if (j >= 0 && highest[j].max() >= c.min()) {
        violations++;
        if (examples.size() < maxExamples) {
          examples.add(new Violation(c, highest[j]));
        }
      }
    }
    return new Result(n, violations, List.copyOf(examples));
  }

  /** The index of the last of the sorted {@code ends} strictly below {@code t}, or -1. */
  private static int lastEndedBefore(long[] ends, long t) {
    int lo = 0;
    int hi = ends.length - 1;
    int best = -1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (ends[mid] < t) {
        best = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return best;
  }

  /**
   * The longest stretch between two successive successful calls' ends, {@code {from, to}} on the run clock,
   * from the sorted ends of the successful calls; {@code {0, 0}} with fewer than two.
   */
  static long[] longestGap(long[] sortedOkEnds) {
    long[] gap = {0, 0};
    for (int i = 1; i < sortedOkEnds.length; i++) {
      if (sortedOkEnds[i] - sortedOkEnds[i - 1] > gap[1] - gap[0]) {
        gap = new long[] {sortedOkEnds[i - 1], sortedOkEnds[i]};
      }
    }
    return gap;
  }
}
