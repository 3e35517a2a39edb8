package dev.idgen.chaos;

import dev.idgen.chaos.RunLog.Contents;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The strict order: a strict sequence's calls (and its stubs' batches, asked for before and handed out after
 * them) held to their order ({@link StrictOrder}: {@code order_violations}), ranges of those calls not marked
 * {@code ORDERING_STRICT} ({@code unmarked}), their failures by reason, the longest stretch without a
 * successful call, and the owner take-overs the run saw. Single-threaded, as the checker is.
 */
final class StrictCheck {
  private StrictCheck() {}

  /** The strict sequences among {@code sequences}, judged; {@link Checker.Strict#NONE} if there are none. */
  static Checker.Strict check(Contents run, Map<String, SequenceRecords> sequences, FaultTable table,
      Evidence evidence) {
    List<SequenceRecords> strict = sequences.values().stream().filter(p -> p.spec.strict())
        .sorted(Comparator.comparing(p -> p.spec.name())).toList();
    if (strict.isEmpty()) {
      return Checker.Strict.NONE;
    }
    long calls = 0;
    long ok = 0;
    long judged = 0;
    long ids = 0;
    long violations = 0;
    long unmarked = 0;
    Map<String, Long> failures = new TreeMap<>();
    long[] longest = {0, 0};
    long stubBatches = 0;
    for (SequenceRecords seq : strict) {
      List<StrictOrder.Call> judgedCalls = new ArrayList<>(seq.calls);
      judgedCalls.addAll(seq.stubBatches);
      stubBatches += seq.stubBatches.size();
      StrictOrder.Result result = StrictOrder.check(judgedCalls, Evidence.PER_KIND);
      for (StrictOrder.Violation v : result.examples()) {
        evidence.note("order_violations", seq.spec.name() + ": " + v.describe());
      }
      calls += seq.wholeCalls;
      ok += seq.okCalls;
      judged += result.calls();
      ids += judgedCalls.stream().mapToLong(StrictOrder.Call::ids).sum();
      violations += result.violations();
      unmarked += seq.unmarked;
      if (seq.unmarked > 0) {
        evidence.note("unmarked", seq.spec.name() + ": " + seq.unmarked + " ranges of strict calls without"
            + " ordering = ORDERING_STRICT");
      }
      seq.failures.forEach((k, v) -> failures.merge(k, v, Long::sum));
      long[] ends = seq.okEnds.stream().mapToLong(Long::longValue).sorted().toArray();
      long[] gap = StrictOrder.longestGap(ends);
      if (gap[1] - gap[0] > longest[1] - longest[0]) {
        longest = gap;
      }
      table.strictGaps(ends);
    }
    long[] epochs = takeovers(run);
    return new Checker.Strict(strict.size(), calls, ok, judged, ids, violations, unmarked,
        Collections.unmodifiableMap(failures), longest[1] - longest[0], longest[0], epochs[0], epochs[1],
        epochs[2], stubBatches);
  }

  /**
   * The owner take-overs in the run's owner lines, and the first and last fencing epochs seen (-1: none). A
   * take-over raises the fencing epoch: each epoch above the highest seen before counts (a server may still
   * show an older owner row for a moment, as runs before the monitor kept the highest did: not counted twice).
   */
  private static long[] takeovers(Contents run) {
    long takeovers = 0;
    long firstEpoch = -1;
    long lastEpoch = -1;
    Map<String, Long> highestEpoch = new HashMap<>();
    for (RunLog.OwnerSeen o : run.owners()) {
      if (o.epoch() < 0) {
        continue;
      }
      Long before = highestEpoch.get(o.name());
      if (before == null || o.epoch() > before) {
        highestEpoch.put(o.name(), o.epoch());
        if (before != null) {
          takeovers++;
        }
      }
      firstEpoch = firstEpoch < 0 ? o.epoch() : Math.min(firstEpoch, o.epoch());
      lastEpoch = Math.max(lastEpoch, o.epoch());
    }
    return new long[] {takeovers, firstEpoch, lastEpoch};
  }
}
