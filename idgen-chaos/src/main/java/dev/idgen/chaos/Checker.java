package dev.idgen.chaos;

import dev.idgen.chaos.RunLog.Contents;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * The independent checker: reads only what a run left in its directory ({@code run.txt} and the clients'
 * {@code client-*.bin}, see {@link RunLog} and {@link Recorder}) and reports
 * <ul>
 *   <li>{@code ids}: IDs the servers handed out (every range every client received);
 *   <li>{@code duplicates}: extra copies of an ID, over all ranges of all clients, plus IDs a client stub
 *       handed to its callers more than once (must be 0);
 *   <li>{@code out_of_bounds}: IDs outside {@code [start, max]}, off their stripe (a range whose stride is not
 *       the sequence's stripes), or at or beyond the stripe's final global cursor, i.e. never reserved (0);
 *       {@code max} is the highest any update attempted, and for each range the highest attempted by an update
 *       that started before the range was read ({@link DefinitionCheck});
 *   <li>{@code deleted_served} (runs that changed a definition, printed then with {@code redefinitions} and a
 *       {@code definitions:} line): IDs of ranges received on calls that started after a delete of their
 *       sequence was confirmed and were read before the next undelete started ({@link DefinitionCheck}; 0);
 *   <li>{@code below_floor}: IDs at or below the floor of an {@code AdvanceSequence} that returned OK, in a
 *       range whose call started after it returned, or in a batch a client stub was asked for after it
 *       returned (0). Failed advances promise nothing and are not judged;
 *   <li>{@code unleased}: IDs a client stub handed out that are in none of the ranges it leased (0);
 *   <li>{@code bad_calls}: calls that ended OK with more or fewer IDs than they asked for (0);
 *   <li>{@code reserved_overlaps} and {@code replay_mismatches} (runs with {@code ReserveRange} calls, printed
 *       then with {@code reservations}): reserved IDs that were also handed out, or reserved twice, and retries
 *       that got another range than their request's ({@link ReservationCheck}; 0). Reserved IDs are not lost;
 *       a failed reservation's count is in {@code lost_bound};
 *   <li>{@code reported}: what the servers said of their own losses (reserves held just before each
 *       kill, and their {@code idgen_ids_lost_total} counters), printed beside {@code lost} as a cross-check;
 *       not a verdict.
 *   <li>{@code lost}: IDs reserved from the global cursors above the highest floor that nobody received and
 *       that no datacenter pool or live server still holds at the end, against {@code lost_bound}, the sum of
 *       what each fault may lose (see {@link ChaosRun}) and of what each failed or cancelled call had asked
 *       for and not received. In a run of planned restarts only ({@code kinds} in {@code run.txt} all
 *       {@code server-restart} or {@code rolling-restart}) the restarts add nothing: the bound is what the
 *       servers counted as lost themselves outside their stops ({@code idgen_ids_lost_total}, read just
 *       before each SIGTERM and at the end: compare-and-sets whose outcome could not be settled), and
 *       {@code restart_lost}, what {@code lost} holds beyond it, must be 0;
 *   <li>{@code order_violations} (runs with an {@code ORDERING_STRICT} sequence): calls of a strict client on
 *       a strict sequence whose IDs are not all above every ID of a call that completed before they started
 *       ({@link StrictOrder}; 0), and {@code unmarked}, ranges of those calls that did not say
 *       {@code ORDERING_STRICT} (0, printed when not). The line before the verdict, {@code strict: …}, says how
 *       many calls were made and judged, how many failed and why ({@code OWNER_UNAVAILABLE} …), the longest
 *       stretch without a successful strict call, and the owner take-overs the run saw;
 *   <li>{@code wrong_stamps} (runs that recorded the ranges' stamps): ranges of a strict sequence not stamped
 *       {@code ORDERING_STRICT}, and ranges of a per-server sequence stamped so, over every client: stubs, raw
 *       callers, strict clients and the fresh-advance calls (0). A strict client's stub batches are held to the
 *       strict order as its raw calls are (asked for before, handed out after their calls);
 *   <li>the cases the fault kinds are there to provoke, counted (not verdicts: what the verdicts above were
 *       judged on): {@code fresh-advance} episodes and what the pool rows showed ({@code case1}: a refill taken
 *       before the advance appended after the trim had created the row at the floor), the IDs of their
 *       sequences judged against their floors and {@code below_floor} among them; for strict sequences, the
 *       strict calls answered through a forwarder and the servers' idle unloads;
 *   <li>{@code failed_stops}: planned stops (SIGTERM) after which the server did not exit in time and was
 *       killed (0). With {@code restarts} (planned stops) and {@code returned} (IDs the stopped servers
 *       logged as given back to the store), printed when the run had planned restarts.
 * </ul>
 * Before the verdict it prints a table by fault kind ({@link FaultTable}: IDs read during and after each kind's
 * faults, duplicates among them, advances in flight, and the servers' own lost and compare-and-set counts per
 * fault) and up to ten lines of evidence per kind of violation (the ranges or batches, their clients, servers
 * and times). It ends with the verdict line, {@code checked ids=… duplicates=… … seed=…},
 * then one line of the servers' compare-and-set outcomes ({@code cas: applied=… … recovered=…}, not a
 * verdict), and exits non-zero on any violation.
 *
 * <p>Its rooms, by the checks they make: {@link RecordReader} (the records, stamps, bad calls),
 * {@link RangeCheck} (duplicates and bounds of the ranges received), {@link ReservationCheck} (reserved ranges
 * against everything handed out), {@link DefinitionCheck} (bounds under raised maxima, deleted sequences that
 * served), {@link FloorCheck} (floors, and the
 * advances' summary), {@link StubBatchCheck} (the stubs' batches: duplicates, unleased IDs), {@link LossCheck}
 * (lost against its bound, planned stops, what the servers reported), {@link StrictCheck} (the strict order,
 * take-overs), {@link CaseCounts} (the cases provoked), {@link CasTotals} and {@link FaultTable} (by kind).
 * Single-threaded: one check runs on the caller's thread, and its rooms share only its {@link Tally} and
 * {@link Evidence}.
 */
@Command(name = "idgen-chaos-check", mixinStandardHelpOptions = true,
    description = "Checks the files a chaos run recorded; exits 1 on any violation.")
public final class Checker implements Callable<Integer> {

  @Parameters(index = "0", description = "the run's output directory")
  Path dir;

  /** The verdict of one check. */
  public record Report(long ids, long served, long duplicates, long outOfBounds, long belowFloor,
      long unleased, long badCalls, long lost, long lostBound, long reported, long faults, long advances,
      long advancesOk, long advancesDuringPause, long advancesDuringKill, long stubJudged, Map<String, Long> cas,
      String seed, boolean complete, boolean restartsOnly, long restarts, long failedStops, long returned,
      long restartLost, List<FaultTable.Row> byKind, Strict strict, long stamped, long wrongStamps, Cases cases,
      ReservationCheck.Totals reservations, DefinitionCheck.Totals definitions) {

    /** The row of fault kind {@code kind} in {@link #byKind()}, if any was applied. */
    public Optional<FaultTable.Row> kind(String kind) {
      return byKind.stream().filter(r -> r.kind().equals(kind)).findFirst();
    }

    /**
     * No violation. In a run of planned restarts only ({@link #restartsOnly()}) the restarts may lose
     * nothing: {@code restartLost}, what {@code lost} holds beyond the losses the servers counted themselves
     * outside their stops, must be 0 ({@code lostBound} is then that count). A graceful stop that did not
     * end within its time ({@code failedStops}) is a violation in any run.
     */
    public boolean ok() {
      return complete && duplicates == 0 && outOfBounds == 0 && belowFloor == 0 && unleased == 0
          && badCalls == 0 && failedStops == 0 && lost <= lostBound && lost >= 0
          && (!restartsOnly || restartLost == 0) && strict.ok() && wrongStamps == 0
          && reservations.overlaps() == 0 && reservations.mismatches() == 0 && definitions.deletedServed() == 0;
    }

    public String line() {
      return "checked ids=" + ids + " duplicates=" + duplicates + " out_of_bounds=" + outOfBounds
          + " below_floor=" + belowFloor + " unleased=" + unleased + " bad_calls=" + badCalls
          + (stamped > 0 ? " wrong_stamps=" + wrongStamps : "")
          + (reservations.calls() > 0 ? " reservations=" + reservations.made() + " reserved_overlaps="
              + reservations.overlaps() + " replay_mismatches=" + reservations.mismatches() : "")
          + (definitions.changes() > 0 ? " redefinitions=" + definitions.changes() + " deleted_served="
              + definitions.deletedServed() : "")
          + (strict.sequences() > 0 ? " order_violations=" + strict.violations()
              + (strict.unmarked() != 0 ? " unmarked=" + strict.unmarked() : "") : "")
          + " lost=" + lost + " lost_bound=" + lostBound + " reported=" + reported + " faults=" + faults
          + (restarts > 0 || restartsOnly ? " restarts=" + restarts + " returned=" + returned
              + " failed_stops=" + failedStops : "")
          + (restartsOnly ? " restart_lost=" + restartLost + " restarts_only" : "")
          + " seed=" + seed
          + (complete ? "" : " INCOMPLETE") + (ok() ? "" : " FAILED");
    }

    /** The servers' compare-and-set outcomes, summed over tiers, servers and incarnations read. */
    public String casLine() {
      StringBuilder sb = new StringBuilder("cas:");
      for (String outcome : CAS_OUTCOMES) {
        sb.append(' ').append(outcome).append('=').append(cas.getOrDefault(outcome, 0L));
      }
      cas.forEach((k, v) -> {
        if (!CAS_OUTCOMES.contains(k)) {
          sb.append(' ').append(k).append('=').append(v);
        }
      });
      return sb.toString();
    }
  }

  /**
   * What the fault kinds provoked, counted from the records (not verdicts). {@code fresh…}: fresh-advance
   * episodes, those whose advance returned OK, the datacenter pools where the race was seen ({@code case1}),
   * the loaders' first calls in flight when their advance started, the episodes with frozen loaders, the IDs of
   * fresh sequences in calls started after their advance returned OK (judged against the floor) and how many of
   * them were at or below it; {@code forwarded…}: strict calls answered through a server that did not own the
   * sequence (by the owner lines), and their ranges not stamped strict; {@code idleUnloads}: sequences the
   * servers' logs say they unloaded as idle (-1: not recorded).
   */
  public record Cases(long freshEpisodes, long freshOk, long freshCase1, long freshInFlight, long freshFrozen,
      long freshJudgedIds, long freshBelowFloor, long forwardedCalls, long forwardedUnmarked, long idleUnloads,
      long stubTries, long stubEmptyTries) {}

  /**
   * The strict sequences' calls: {@code calls} recorded whole (every outcome), {@code succeeded} of them OK,
   * {@code judged} those that handed out IDs (held to the order), {@code ids} their IDs; {@code violations}
   * calls out of order ({@link StrictOrder}), {@code unmarked} ranges not marked {@code ORDERING_STRICT};
   * {@code failures} by outcome ({@code UNAVAILABLE:OWNER_UNAVAILABLE} …); {@code longestGapNanos} the longest
   * stretch between two successful calls' ends, from {@code gapFromNanos}; {@code takeovers} the owner changes
   * the run's polling saw (a higher fencing epoch), {@code firstEpoch} and {@code lastEpoch} the epochs seen
   * (-1: none).
   */
  public record Strict(int sequences, long calls, long succeeded, long judged, long ids, long violations, long unmarked,
      Map<String, Long> failures, long longestGapNanos, long gapFromNanos, long takeovers, long firstEpoch,
      long lastEpoch, long stubBatches) {
    static final Strict NONE = new Strict(0, 0, 0, 0, 0, 0, 0, Map.of(), 0, 0, 0, -1, -1, 0);

    /** No call out of order, no range unmarked. */
    public boolean ok() {
      return violations == 0 && unmarked == 0;
    }

    /** Calls that failed with reason OWNER_UNAVAILABLE. */
    public long ownerUnavailable() {
      return failures.entrySet().stream().filter(e -> e.getKey().endsWith(":OWNER_UNAVAILABLE"))
          .mapToLong(Map.Entry::getValue).sum();
    }

    public String line() {
      return "strict: sequences=" + sequences + " calls=" + calls + " ok=" + succeeded + " failed="
          + (calls - succeeded)
          + " owner_unavailable=" + ownerUnavailable() + " judged=" + judged
          + (stubBatches > 0 ? " stub_batches=" + stubBatches : "") + " ids=" + ids
          + " order_violations=" + violations + " unmarked=" + unmarked
          + String.format(Locale.ROOT, " max_unavailable_s=%.3f (from %.3fs)", longestGapNanos / 1e9,
              gapFromNanos / 1e9)
          + " takeovers=" + takeovers + " owner_epochs=" + (firstEpoch < 0 ? "-" : firstEpoch + ".." + lastEpoch)
          + " failures=" + failures;
    }
  }

  /** idgen_store_cas_total's outcomes, in the order printed. */
  static final List<String> CAS_OUTCOMES = List.of("applied", "conflict", "unknown", "resolved_applied",
      "resolved_not_applied", "resolved_ambiguous", "unresolved", "recovered");

  public static void main(String[] args) {
    System.exit(new CommandLine(new Checker()).execute(args));
  }

  @Override
  public Integer call() throws IOException {
    Report report = check(dir, System.out);
    return report.ok() ? 0 : 1;
  }

  /**
   * Checks the run in {@code dir}, printing details, the one-line verdict, and right after it the servers'
   * compare-and-set outcomes ({@code cas: …}) to {@code out}.
   */
  public static Report check(Path dir, PrintStream out) throws IOException {
    Contents run = RunLog.read(dir);
    FaultTable table = new FaultTable(run);
    Evidence evidence = new Evidence();
    DefinitionCheck definitions = DefinitionCheck.read(dir);
    RecordReader records = new RecordReader(run, table, evidence, definitions);
    records.read(dir, out);
    Tally tally = new Tally();
    tally.outOfBounds += records.outOfBounds;
    ReservationCheck reserved = ReservationCheck.read(dir);
    for (SequenceRecords seq : records.sequences.values()) {
      RangeCheck.Result ranges = RangeCheck.check(seq, run, table, evidence, tally);
      definitions.check(seq, evidence, tally);
      FloorCheck.check(seq, run, evidence, tally);
      StubBatchCheck.check(seq, ranges.leasesByClient(), table, evidence, tally);
      long reservedAbove = reserved.check(seq, ranges.floor(), evidence);
      LossCheck.sequence(seq, ranges, reservedAbove, run, tally, out);
    }
    ReservationCheck.Totals reservations = reserved.totals(out);
    DefinitionCheck.Totals redefined = definitions.totals(out);
    LossCheck.Stops stops = LossCheck.stops(run, evidence, out);
    FloorCheck.Advances advances = FloorCheck.printAdvances(run, records.files, records.served, tally, out);
    LossCheck.Bound bound = LossCheck.bound(run, tally, stops,
        records.failedOutstanding + reservations.failedUnrecovered(), out);
    Map<String, Long> cas = CasTotals.sum(run, out);
    Strict strict = StrictCheck.check(run, records.sequences, table, evidence);
    List<FaultTable.Row> byKind = table.rows(run);
    FaultTable.print(byKind, out);
    table.printStrict(run, out);
    Cases cases = CaseCounts.count(run, tally, records);
    CaseCounts.print(run, cases, strict, records.stamped, records.wrongStamps, out);
    for (String line : evidence.lines()) {
      out.println(line);
    }
    boolean restartsOnly = run.restartsOnly();
    Report report = new Report(records.ids, records.served, tally.duplicates, tally.outOfBounds, tally.belowFloor,
        tally.unleased, records.badCalls, tally.lost, bound.lostBound(), bound.reported(), run.faults().size(),
        run.advances().size(), advances.ok(), advances.duringPause(), advances.duringKill(), tally.stubJudged, cas,
        run.seed(), run.ended(), restartsOnly, run.stopped().size(), stops.failed(), stops.returned(),
        bound.restartLost(), List.copyOf(byKind), strict, records.stamped, records.wrongStamps, cases, reservations,
        redefined);
    if (tally.lost < 0) {
      out.println("WARNING: lost < 0: more IDs received or held than were ever reserved");
    }
    if (restartsOnly && bound.restartLost() != 0) {
      out.println("restart_lost: " + bound.restartLost() + " IDs lost in a run of planned restarts only beyond"
          + " what the servers counted outside their stops (see the sequences' lines above, and the servers' logs"
          + " in servers/: 'reserves at shutdown', 'as lost')");
    }
    if (strict.sequences() > 0) {
      out.println(strict.line());
    }
    out.println(report.line());
    out.println(report.casLine());
    return report;
  }
}
