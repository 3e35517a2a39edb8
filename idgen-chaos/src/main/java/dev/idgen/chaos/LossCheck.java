package dev.idgen.chaos;

import dev.idgen.chaos.RunLog.Contents;
import dev.idgen.chaos.RunLog.SequenceSpec;
import java.io.PrintStream;

/**
 * The loss reckoning: {@code lost}, IDs reserved from the global cursors above the highest floor that nobody
 * received and that no datacenter pool or live server still holds at the end ({@link #sequence}), against
 * {@code lost_bound}, the sum of what each fault may lose ({@link LossBounds}) and of what each failed or
 * cancelled call had asked for and not received ({@link #bound}). In a run of planned restarts only the
 * restarts add nothing: the bound is what the servers counted as lost themselves outside their stops, and
 * {@code restart_lost}, what {@code lost} holds beyond it, must be 0. Also the planned stops
 * ({@code failed_stops}, {@link #stops}) and the servers' own account ({@code reported}, a cross-check, not a
 * verdict). Single-threaded, as the checker is.
 */
final class LossCheck {
  /** The planned stops: IDs the servers logged as given back, and abandoned; stops that did not end in time. */
  record Stops(long returned, long abandoned, long failed) {}

  /** The bound, what the servers reported, and what a run of planned restarts only lost at its restarts. */
  record Bound(long lostBound, long reported, long restartLost) {}

  private LossCheck() {}

  /** One sequence's loss, from its range sweep ({@link RangeCheck}) and what is held at the end; printed. */
  static void sequence(SequenceRecords seq, RangeCheck.Result ranges, Contents run, Tally tally, PrintStream out) {
    sequence(seq, ranges, 0, run, tally, out);
  }

  /**
   * {@link #sequence}, with {@code reservedForCallers} IDs above the floor reserved by {@code ReserveRange}
   * ({@link ReservationCheck}): taken from the cursors and never received, on purpose; not lost.
   */
  static void sequence(SequenceRecords seq, RangeCheck.Result ranges, long reservedForCallers, Contents run,
      Tally tally, PrintStream out) {
    SequenceSpec spec = seq.spec;
    long held = run.finalHeld().stream().filter(h -> h.name().equals(spec.name()))
        .mapToLong(RunLog.FinalHeld::ids).sum();
    long seqLost = ranges.reservedAbove() - ranges.receivedAbove() - held - reservedForCallers;
    tally.lost += seqLost;
    if (spec.strict()) {
      tally.strictLost += seqLost;
    }
    out.printf("sequence %s: ranges=%d served=%d floor=%d reserved_above_floor=%d received_above_floor=%d "
            + "held_at_end=%d%s lost=%d%n", spec.name(), seq.ranges.size(), seq.servedIds, ranges.floor(),
        ranges.reservedAbove(), ranges.receivedAbove(), held,
        reservedForCallers > 0 ? " reserved_for_callers=" + reservedForCallers : "", seqLost);
  }

  /** Planned stops: how each went, and what the servers said they gave back (printed if there were any). */
  static Stops stops(Contents run, Evidence evidence, PrintStream out) {
    long returned = 0;
    long abandonedAtStops = 0;
    long failedStops = 0;
    long unknownStops = 0;
    long slowestStop = 0;
    for (RunLog.Stopped st : run.stopped()) {
      if (st.exit() == -1) {
        failedStops++;
        evidence.note("failed_stops", st.server() + " did not exit within its time after SIGTERM ("
            + st.millis() + " ms) and was killed");
      }
      if (st.returned() < 0) {
        unknownStops++;
      }
      returned += Math.max(0, st.returned());
      abandonedAtStops += Math.max(0, st.abandoned());
      slowestStop = Math.max(slowestStop, st.millis());
    }
    if (!run.stopped().isEmpty()) {
      out.printf("planned stops (SIGTERM): %d, %d did not exit in time; SIGTERM to exit at most %d ms; the servers"
          + " logged %d IDs given back to the store, %d abandoned (%d logged nothing)%n", run.stopped().size(),
          failedStops, slowestStop, returned, abandonedAtStops, unknownStops);
    }
    return new Stops(returned, abandonedAtStops, failedStops);
  }

  /**
   * The stubs' own counters, the servers' own account of their losses, and the bound {@code lost} is held to;
   * printed. {@code failedOutstanding}: what failed or cancelled calls asked for and did not receive.
   */
  static Bound bound(Contents run, Tally tally, Stops stops, long failedOutstanding, PrintStream out) {
    long expired = run.stubs().stream().mapToLong(RunLog.StubStats::expired).sum();
    long stubServed = run.stubs().stream().mapToLong(RunLog.StubStats::served).sum();
    out.printf("stubs' own counters (%d sources): served %d, expired unused by valid_for %d%n",
        run.stubs().size(), stubServed, expired);
    // The servers' own account, an independent cross-check of `lost` (not a verdict: a reserve read just
    // before a kill -9 can change before the kill, and calls in flight at a kill are in neither figure).
    long heldAtKills = 0;
    long counted = 0;
    long unknown = 0;
    for (RunLog.Reported r : run.reported()) {
      if (r.held() < 0 || r.counted() < 0) {
        unknown++;
      }
      heldAtKills += Math.max(0, r.held());
      counted += Math.max(0, r.counted());
    }
    long reported = heldAtKills + counted + stops.abandoned();
    out.printf("servers_reported = %d (reserves held just before the kills: %d; their own lost counters,"
        + " abandoned + dc_block: %d; abandoned at planned stops: %d; %d reports unknown); lost - reported = %d%n",
        reported, heldAtKills, counted, stops.abandoned(), unknown, tally.lost - reported);
    if (run.restartsOnly()) {
      return restartsOnly(run, tally, counted, reported, failedOutstanding, out);
    }
    long faultBound = run.faults().stream().mapToLong(RunLog.Fault::lostBound).sum();
    out.printf("lost_bound = %d (faults) + %d (asked for by failed or cancelled calls, not received)%n",
        faultBound, failedOutstanding);
    return new Bound(faultBound + failedOutstanding, reported, 0);
  }

  /**
   * Planned restarts only: the restarts add nothing to the bound. What may be lost is only what the servers
   * counted themselves outside their stops ({@code counted}: read just before each SIGTERM and at the end:
   * compare-and-sets whose outcome could not be settled, calls a client cut), whatever calls failed: a call
   * refused by a stopping server took no ID. Anything lost beyond that was lost by the stops (a loss a server
   * counted between its last read and its exit is among them: the check errs on the side of blaming the stop).
   */
  private static Bound restartsOnly(Contents run, Tally tally, long counted, long reported, long failedOutstanding,
      PrintStream out) {
    // But strict sequences: a planned stop of their owner gives nothing back (docs/design.md: what it held
    // is a counted gap, as for a crash), at most a node block and a DC block (a refill under way) each.
    long strictStops = run.stopped().size() * run.sequences().stream().filter(SequenceSpec::strict)
        .mapToLong(q -> q.nodeBlock() + q.dcBlock()).sum();
    long lostBound = counted + strictStops;
    long restartLost = Math.max(0, tally.lost - tally.strictLost - counted);
    out.printf("lost_bound = %d: planned restarts only, which lose nothing; the bound is what the servers"
        + " counted as lost outside their stops (%d IDs asked for by failed or cancelled calls and not"
        + " received are no excuse)%s; lost at the restarts = max(0, lost%s - that) = %d%n", lostBound,
        failedOutstanding, strictStops > 0 ? ", plus " + strictStops + " for the strict sequences" : "",
        strictStops > 0 ? " of the other sequences" : "", restartLost);
    if (strictStops > 0) {
      out.printf("  strict sequences lost %d, not blamed on the restarts: a stopping owner gives back nothing"
          + " (a counted gap); allowed a node block and a DC block per stop: %d%n", tally.strictLost, strictStops);
    }
    return new Bound(lostBound, reported, restartLost);
  }
}
