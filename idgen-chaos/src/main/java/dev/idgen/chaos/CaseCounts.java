package dev.idgen.chaos;

import dev.idgen.chaos.RunLog.Contents;
import java.io.PrintStream;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The cases the fault kinds are there to provoke, counted from the records (not verdicts: what the verdicts
 * were judged on): the {@code fresh-advance} episodes and what the pool rows showed ({@code case1}), the IDs
 * of their sequences judged against their floors; for strict sequences, the calls answered through a
 * forwarder, the servers' idle unloads, the stamps recorded; the stubs' {@code tryNext}. Stateless.
 */
final class CaseCounts {
  private CaseCounts() {}

  static Checker.Cases count(Contents run, Tally tally, RecordReader records) {
    long ok = run.fresh().stream().filter(RunLog.FreshRun::ok).count();
    long case1 = 0;
    for (RunLog.FreshRun f : run.fresh()) {
      for (String dc : ChaosCassandra.DATACENTERS) {
        if ("case1".equals(f.fields().get(dc))) {
          case1++;
        }
      }
    }
    long inFlight = run.fresh().stream().mapToLong(f -> f.number("in_flight")).sum();
    long frozen = run.fresh().stream().filter(f -> f.number("frozen") > 0).count();
    long tries = run.tries().stream().mapToLong(RunLog.StubTries::tries).sum();
    long empty = run.tries().stream().mapToLong(RunLog.StubTries::empty).sum();
    return new Checker.Cases(run.fresh().size(), ok, case1, inFlight, frozen, tally.freshJudged, tally.freshBelow,
        records.forwardedCalls, records.forwardedUnmarked, run.unloads().sequences(), tries, empty);
  }

  /** The lines that say how often each new kind provoked its case, and the stamps' check. */
  static void print(Contents run, Checker.Cases c, Checker.Strict strict, long stamped, long wrongStamps,
      PrintStream out) {
    if (!run.fresh().isEmpty()) {
      printFresh(run, c, out);
    }
    if (stamped > 0 || run.unloads().lines() >= 0 || c.forwardedCalls() > 0) {
      out.printf("case 6 (ranges stamped from the definition): servers' unload-idle-after %s, idle unloads in"
          + " their logs: %s sequences; strict calls answered through a forwarder: %d (their ranges not stamped"
          + " strict: %d); strict stub batches judged for order: %d; ranges with their stamp recorded: %d,"
          + " stamped wrong: %d; stubs' tryNext: %d calls, %d found the source empty%n",
          run.unloads().idleAfterMillis() < 0 ? "?" : run.unloads().idleAfterMillis() + " ms",
          c.idleUnloads() < 0 ? "?" : Long.toString(c.idleUnloads()), c.forwardedCalls(), c.forwardedUnmarked(),
          strict.stubBatches(), stamped, wrongStamps, c.stubTries(), c.stubEmptyTries());
    }
  }

  private static void printFresh(Contents run, Checker.Cases c, PrintStream out) {
    long[] delays = run.fresh().stream().filter(f -> f.advanceStartedNanos() != Long.MIN_VALUE)
        .mapToLong(f -> TimeUnit.NANOSECONDS.toMillis(f.advanceStartedNanos() - f.createdNanos())).sorted()
        .toArray();
    Map<String, Long> states = new TreeMap<>();
    long loaders = 0;
    long[] others = new long[2];
    long[] idle = new long[2];
    long frozenMax = 0;
    for (RunLog.FreshRun f : run.fresh()) {
      for (String dc : ChaosCassandra.DATACENTERS) {
        states.merge(f.fields().getOrDefault(dc, "-"), 1L, Long::sum);
      }
      loaders += f.number("loaders");
      others[0] += f.pair("others")[0];
      others[1] += f.pair("others")[1];
      idle[0] += f.pair("idle")[0];
      idle[1] += f.pair("idle")[1];
      frozenMax = Math.max(frozenMax, f.number("frozen_ms"));
    }
    out.printf("fresh-advance: %d episodes, advances ok %d, failed %d; each advance started %s ms after its"
        + " sequence's creation returned; loaders' first calls in flight when it started: %d of %d; loaders"
        + " frozen mid-call in %d episodes (at most %d ms); datacenter pools seen: %s%n", c.freshEpisodes(),
        c.freshOk(), c.freshEpisodes() - c.freshOk(), delays.length == 0 ? "-" : delays[0] + "–"
            + delays[delays.length - 1] + " (median " + delays[delays.length / 2] + ")",
        c.freshInFlight(), loaders, c.freshFrozen(), frozenMax, states);
    Map<String, Long> probes = run.freshProbes();
    out.printf("fresh-advance: runtimes loaded after the advance: %d calls on servers that had not loaded the"
        + " sequence (%d ok), %d after its idle unload (%d ok), %d later probes (%d ok), %d of them on servers"
        + " restarted since the advance (%d ok); IDs in calls started after an advance returned OK: %d,"
        + " below_floor among them: %d%n", others[0], others[1], idle[0], idle[1],
        probes.getOrDefault("calls", 0L), probes.getOrDefault("ok", 0L), probes.getOrDefault("restarted", 0L),
        probes.getOrDefault("restarted_ok", 0L), c.freshJudgedIds(), c.freshBelowFloor());
    out.printf("case 1 (an advance racing a datacenter's first refill: a block taken from the global cursor"
        + " before the advance, appended after its trim created the pool row at the floor) seen in the pool"
        + " rows: %d times%n", c.freshCase1());
  }
}
