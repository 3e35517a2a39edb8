package dev.idgen.chaos;

import static dev.idgen.chaos.IdMath.emptyStripes;
import static dev.idgen.chaos.IdMath.lastId;
import static dev.idgen.chaos.IdMath.overlap;

import dev.idgen.chaos.RunLog.Advance;
import dev.idgen.chaos.RunLog.Contents;
import dev.idgen.chaos.RunLog.FinalStripe;
import dev.idgen.chaos.RunLog.SequenceSpec;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Uniqueness and bounds of the ranges the clients received, one sequence at a time: {@code duplicates} (extra
 * copies of an ID over all ranges of all clients), {@code out_of_bounds} (outside {@code [start, max]}, off
 * their stripe, or at or beyond the stripe's final global cursor, i.e. never reserved); and, for the loss
 * reckoning, how many IDs were reserved and received above the highest floor that may have applied. One sweep
 * per stripe over the ranges as intervals of stripe indexes (stripe k's i-th ID is {@code start + k + i·n}).
 * Single-threaded, as the checker is.
 */
final class RangeCheck {
  /**
   * What one sequence's sweep found: the ranges each client leased (intervals per stripe, for the stubs'
   * check), the highest floor that may have applied, and the IDs reserved and received above it.
   */
  record Result(Map<Integer, List<List<long[]>>> leasesByClient, long floor, long reservedAbove,
      long receivedAbove) {}

  private RangeCheck() {}

  static Result check(SequenceRecords seq, Contents run, FaultTable table, Evidence evidence, Tally tally) {
    SequenceSpec spec = seq.spec;
    int n = spec.stripes();
    List<List<long[]>> byStripe = emptyStripes(n);
    Map<Integer, List<List<long[]>>> leasesByClient = new HashMap<>();
    long seqOut = 0;
    for (int ri = 0; ri < seq.ranges.size(); ri++) {
      ReceivedRange r = seq.ranges.get(ri);
      long last = lastId(r.first(), r.count(), r.stride());
      if (r.stride() != n || r.count() < 1 || last == Long.MIN_VALUE || !spec.inBounds(r.first())
          || !spec.inBounds(last)) {
        seqOut += Math.max(r.count(), 0);
        evidence.note("out_of_bounds", spec.name() + " outside [" + spec.start() + ", " + spec.max()
            + "] or off stripe: " + r.describe());
        continue;
      }
      int k = (int) ((r.first() - spec.start()) % n);
      long lo = (r.first() - spec.start()) / n;
      long[] interval = {lo, lo + r.count() - 1, ri};
      byStripe.get(k).add(interval);
      leasesByClient.computeIfAbsent(r.client(), c -> emptyStripes(n)).get(k).add(interval);
    }
    long floor = appliedFloor(run, spec);
    long reservedAbove = 0;
    long receivedAbove = 0;
    for (int k = 0; k < n; k++) {
      List<long[]> intervals = byStripe.get(k);
      intervals.sort(Comparator.comparingLong(x -> x[0]));
      long firstAbove = floor < spec.start() + k ? 0 : (floor - spec.start() - k) / n + 1;
      long cursor = cursorIndex(run, spec, seq.spaceMax, k,
          intervals.stream().mapToLong(iv -> iv[1] + 1).max().orElse(0));
      reservedAbove += Math.max(0, cursor - firstAbove);
      long[] stripe = sweep(seq, k, intervals, firstAbove, cursor, table, evidence, tally);
      receivedAbove += stripe[0];
      seqOut += stripe[1];
    }
    tally.outOfBounds += seqOut;
    return new Result(leasesByClient, floor, reservedAbove, receivedAbove);
  }

  /**
   * One stripe's sorted intervals: counts the duplicates; returns what the union holds above the floor and
   * below the cursor (received), and at or beyond the cursor (never reserved: out of bounds).
   */
  private static long[] sweep(SequenceRecords seq, int k, List<long[]> intervals, long firstAbove, long cursor,
      FaultTable table, Evidence evidence, Tally tally) {
    String name = seq.spec.name();
    long receivedAbove = 0;
    long out = 0;
    long maxHi = -1;
    long[] maxBy = null;
    for (long[] iv : intervals) {
      long lo = iv[0];
      long hi = iv[1];
      if (lo <= maxHi) {
        tally.duplicates += Math.min(hi, maxHi) - lo + 1;
        table.duplicate(Math.min(hi, maxHi) - lo + 1, seq.ranges.get((int) iv[2]).receivedNanos(),
            seq.ranges.get((int) maxBy[2]).receivedNanos());
        evidence.note("duplicates", name + " stripe " + k + ": "
            + seq.ranges.get((int) iv[2]).describe() + " overlaps " + seq.ranges.get((int) maxBy[2]).describe());
      }
      // The part of this interval not covered before (the union), split by the floor and the cursor.
      long newLo = Math.max(lo, maxHi + 1);
      if (newLo <= hi) {
        receivedAbove += overlap(newLo, hi, firstAbove, cursor - 1);
        long never = overlap(newLo, hi, cursor, Long.MAX_VALUE); // handed out but never reserved
        if (never > 0) {
          out += never;
          evidence.note("out_of_bounds", name + " stripe " + k + " at or beyond the final cursor (index "
              + cursor + "): " + seq.ranges.get((int) iv[2]).describe());
        }
      }
      if (hi > maxHi) {
        maxHi = hi;
        maxBy = iv;
      }
    }
    return new long[] {receivedAbove, out};
  }

  /** The highest floor that may have applied: every OK advance, and a failed one if the cursors passed it. */
  private static long appliedFloor(Contents run, SequenceSpec spec) {
    long floor = spec.start() - 1;
    for (Advance a : run.advances()) {
      if (a.name().equals(spec.name()) && (a.ok() || passedByAllCursors(run, spec, a.floor()))) {
        floor = Math.max(floor, a.floor());
      }
    }
    return floor;
  }

  /**
   * The index (on stripe k) of the stripe's final global cursor: every index below it was reserved; a stripe
   * used up ends at {@code max}, the sequence's max when the cursors were read.
   */
  private static long cursorIndex(Contents run, SequenceSpec spec, long max, int k, long unknown) {
    int n = spec.stripes();
    long stripeSize = max < spec.start() + k ? 0 : (max - spec.start() - k) / n + 1;
    for (FinalStripe f : run.finalStripes()) {
      if (f.name().equals(spec.name()) && f.stripe() == k) {
        if (f.nextUnreserved().isEmpty()) {
          return stripeSize;
        }
        long next = f.nextUnreserved().getAsLong();
        return Math.max(0, Math.floorDiv(next - spec.start() - k + n - 1, n));
      }
    }
    return unknown; // no final state recorded for this stripe: count nothing as lost on it
  }

  private static boolean passedByAllCursors(Contents run, SequenceSpec spec, long floor) {
    return run.finalStripes().stream().filter(f -> f.name().equals(spec.name()))
        .allMatch(f -> f.nextUnreserved().isEmpty() || f.nextUnreserved().getAsLong() > floor);
  }
}
