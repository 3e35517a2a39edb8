package dev.idgen.chaos;

import static dev.idgen.chaos.IdMath.covered;
import static dev.idgen.chaos.IdMath.emptyStripes;
import static dev.idgen.chaos.IdMath.lastId;
import static dev.idgen.chaos.IdMath.union;

import dev.idgen.chaos.RunLog.SequenceSpec;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The batches client stubs handed to their callers, one sequence at a time: {@code duplicates} among them
 * (an ID handed out twice, by one stub or two), and {@code unleased} (IDs a stub handed out that are in none
 * of the ranges it leased). Single-threaded, as the checker is.
 */
final class StubBatchCheck {
  private StubBatchCheck() {}

  /** {@code leasesByClient}: the ranges each client received, as {@link RangeCheck} found them. */
  static void check(SequenceRecords seq, Map<Integer, List<List<long[]>>> leasesByClient, FaultTable table,
      Evidence evidence, Tally tally) {
    int n = seq.spec.stripes();
    List<List<long[]>> servedByStripe = emptyStripes(n);
    Map<Integer, List<List<long[]>>> servedByClient = new HashMap<>();
    for (int ri = 0; ri < seq.served.size(); ri++) {
      place(seq, ri, servedByStripe, servedByClient, evidence, tally);
    }
    for (int k = 0; k < n; k++) {
      duplicates(seq, k, servedByStripe.get(k), table, evidence, tally);
    }
    for (Map.Entry<Integer, List<List<long[]>>> e : servedByClient.entrySet()) {
      List<List<long[]>> leases = leasesByClient.getOrDefault(e.getKey(), emptyStripes(n));
      for (int k = 0; k < n; k++) {
        List<long[]> union = union(leases.get(k));
        for (long[] iv : e.getValue().get(k)) {
          long missing = iv[1] - iv[0] + 1 - covered(union, iv[0], iv[1]);
          if (missing > 0) {
            tally.unleased += missing;
            evidence.note("unleased", seq.spec.name() + ": " + missing + " IDs never leased by this client in "
                + seq.served.get((int) iv[2]).describe());
          }
        }
      }
    }
  }

  /** Run {@code ri} as intervals of stripe indexes (ID by ID if it crosses stripes or bounds). */
  private static void place(SequenceRecords seq, int ri, List<List<long[]>> servedByStripe,
      Map<Integer, List<List<long[]>>> servedByClient, Evidence evidence, Tally tally) {
    SequenceSpec spec = seq.spec;
    int n = spec.stripes();
    ServedRun r = seq.served.get(ri);
    List<List<long[]>> mine = servedByClient.computeIfAbsent(r.client(), c -> emptyStripes(n));
    long last = lastId(r.first(), r.count(), r.stride());
    if (r.count() < 1 || last == Long.MIN_VALUE) {
      tally.unleased += Math.max(0, r.count());
      return;
    }
    if (spec.inBounds(r.first()) && spec.inBounds(last) && (r.stride() == n || r.count() == 1)) {
      int k = (int) ((r.first() - spec.start()) % n);
      long lo = (r.first() - spec.start()) / n;
      long[] interval = {lo, lo + r.count() - 1, ri};
      servedByStripe.get(k).add(interval);
      mine.get(k).add(interval);
    } else if (r.count() <= 1_000_000) { // a run across stripes or bounds: ID by ID
      for (long c = 0; c < r.count(); c++) {
        long id = r.first() + c * r.stride();
        if (!spec.inBounds(id)) {
          tally.unleased++;
          evidence.note("unleased", spec.name() + ": ID " + id + " out of bounds in " + r.describe());
          continue;
        }
        int k = (int) ((id - spec.start()) % n);
        long lo = (id - spec.start()) / n;
        long[] interval = {lo, lo, ri};
        servedByStripe.get(k).add(interval);
        mine.get(k).add(interval);
      }
    } else {
      tally.unleased += r.count();
    }
  }

  private static void duplicates(SequenceRecords seq, int k, List<long[]> intervals, FaultTable table,
      Evidence evidence, Tally tally) {
    intervals.sort(Comparator.comparingLong(x -> x[0]));
    long maxHi = -1;
    long[] maxBy = null;
    for (long[] iv : intervals) {
      if (iv[0] <= maxHi) {
        tally.duplicates += Math.min(iv[1], maxHi) - iv[0] + 1;
        table.duplicate(Math.min(iv[1], maxHi) - iv[0] + 1, seq.served.get((int) iv[2]).handedNanos(),
            seq.served.get((int) maxBy[2]).handedNanos());
        evidence.note("duplicates", seq.spec.name() + " stripe " + k + ": handed out twice: "
            + seq.served.get((int) iv[2]).describe() + " and " + seq.served.get((int) maxBy[2]).describe());
      }
      if (iv[1] > maxHi) {
        maxHi = iv[1];
        maxBy = iv;
      }
    }
  }
}
