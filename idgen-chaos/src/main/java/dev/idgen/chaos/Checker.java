package dev.idgen.chaos;

import dev.idgen.api.v1.Ordering;
import dev.idgen.chaos.RunLog.Advance;
import dev.idgen.chaos.RunLog.Contents;
import dev.idgen.chaos.RunLog.FinalStripe;
import dev.idgen.chaos.RunLog.SequenceSpec;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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
 *   <li>{@code below_floor}: IDs at or below the floor of an {@code AdvanceSequence} that returned OK, in a
 *       range whose call started after it returned, or in a batch a client stub was asked for after it
 *       returned (0). Failed advances promise nothing and are not judged;
 *   <li>{@code unleased}: IDs a client stub handed out that are in none of the ranges it leased (0);
 *   <li>{@code bad_calls}: calls that ended OK with more or fewer IDs than they asked for (0);
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
      long restartLost, List<FaultTable.Row> byKind, Strict strict, long stamped, long wrongStamps, Cases cases) {

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
          && (!restartsOnly || restartLost == 0) && strict.ok() && wrongStamps == 0;
    }

    public String line() {
      return "checked ids=" + ids + " duplicates=" + duplicates + " out_of_bounds=" + outOfBounds
          + " below_floor=" + belowFloor + " unleased=" + unleased + " bad_calls=" + badCalls
          + (stamped > 0 ? " wrong_stamps=" + wrongStamps : "")
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

  /** At most this many lines of evidence per kind of violation. */
  private static final int EVIDENCE = 10;

  /** A range a client received: {@code server} is the slot it came from (-1: not recorded). */
  private record Range(int client, int server, long callStartNanos, long receivedNanos, long first, long count,
      long stride) {
    String describe() {
      return "client-" + client + " " + (server < 0 ? "server ?" : "server-" + server) + " range first="
          + first + " count=" + count + " stride=" + stride + " call started " + secs(callStartNanos)
          + " read " + secs(receivedNanos);
    }
  }

  /** A run of IDs of a batch a stub handed out: asked for at {@code askedNanos}, handed out by {@code handedNanos}. */
  private record Run(int client, long askedNanos, long handedNanos, long first, long count, long stride) {
    String describe() {
      return "client-" + client + " stub batch run first=" + first + " count=" + count + " stride=" + stride
          + " asked " + secs(askedNanos) + " handed " + secs(handedNanos);
    }
  }

  private static final class PerSequence {
    final SequenceSpec spec;
    final List<Range> ranges = new ArrayList<>();
    final List<Run> served = new ArrayList<>();
    long servedIds;
    /** Strict clients' calls that handed out IDs (held to the order if the sequence is strict). */
    final List<StrictOrder.Call> calls = new ArrayList<>();
    /** A strict sequence's stub batches, as calls: asked for, handed out (held to the order with the calls). */
    final List<StrictOrder.Call> stubBatches = new ArrayList<>();
    /** The ends of their successful calls. */
    final List<Long> okEnds = new ArrayList<>();
    long wholeCalls;
    long okCalls;
    long unmarked;
    final Map<String, Long> failures = new TreeMap<>();

    PerSequence(SequenceSpec spec) {
      this.spec = spec;
    }
  }

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
    Map<String, PerSequence> sequences = new HashMap<>();
    for (SequenceSpec s : run.sequences()) {
      sequences.put(s.name(), new PerSequence(s));
    }
    long ids = 0;
    long served = 0;
    long stamped = 0;
    long wrongStamps = 0;
    long forwardedCalls = 0;
    long forwardedUnmarked = 0;
    Map<Integer, String> targets = new HashMap<>();
    run.servers().forEach(sl -> targets.put(sl.slot(), sl.target()));
    Owners owners = new Owners(run.owners());
    long outOfBounds = 0;
    long badCalls = 0;
    long failedOutstanding = 0;
    List<String> evidence = new ArrayList<>();
    List<Path> files;
    try (Stream<Path> list = Files.list(dir)) {
      files = list.filter(p -> p.getFileName().toString().matches("client-\\d+\\.bin")).sorted().toList();
    }
    if (!run.clients().isEmpty()) { // the run named its clients: any other file is not of this run
      List<Path> others = files.stream().filter(p -> !run.clients().contains(clientOf(p))).toList();
      if (!others.isEmpty()) {
        out.printf("ignored %d client files the run did not start: %s%n", others.size(),
            others.stream().map(p -> p.getFileName().toString()).toList());
        files = files.stream().filter(p -> run.clients().contains(clientOf(p))).toList();
      }
    }
    for (Path file : files) {
      int client = clientOf(file);
      try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
        while (true) {
          int tag;
          try {
            tag = in.readByte();
          } catch (EOFException end) {
            break;
          }
          String name = in.readUTF();
          PerSequence seq = sequences.get(name);
          switch (tag) {
            case Recorder.RANGE, Recorder.SERVER_RANGE, Recorder.STAMPED_RANGE -> {
              int server = tag == Recorder.RANGE ? -1 : in.readUnsignedByte();
              // The call's start decides "after an advance"; the time the range was read is for people.
              Range r = new Range(client, server, in.readLong(), in.readLong(), in.readLong(), in.readLong(),
                  in.readLong());
              if (tag == Recorder.STAMPED_RANGE) {
                int ordering = in.readUnsignedByte();
                stamped++;
                if (seq != null && (seq.spec.strict() ? ordering != Ordering.ORDERING_STRICT_VALUE
                    : ordering == Ordering.ORDERING_STRICT_VALUE)) {
                  wrongStamps++;
                  note(evidence, "wrong_stamps", name + " (" + (seq.spec.strict() ? "strict" : "per-server")
                      + ") stamped " + Ordering.forNumber(ordering) + ": " + r.describe());
                }
              }
              ids += r.count();
              table.received(r.receivedNanos(), r.count());
              if (seq == null) {
                outOfBounds += r.count();
                note(evidence, "out_of_bounds", "unknown sequence " + name + ": " + r.describe());
              } else {
                seq.ranges.add(r);
              }
            }
            case Recorder.FAILED_CALL -> {
              long requested = in.readLong();
              long received = in.readLong();
              String code = in.readUTF();
              if (code.equals("OK")) {
                badCalls++;
              } else {
                failedOutstanding += Math.max(0, requested - received);
              }
            }
            case Recorder.BATCH -> {
              long asked = in.readLong();
              long handed = in.readLong();
              int runs = in.readInt();
              long min = Long.MAX_VALUE;
              long max = Long.MIN_VALUE;
              long count = 0;
              for (int i = 0; i < runs; i++) {
                Run r = new Run(client, asked, handed, in.readLong(), in.readLong(), in.readLong());
                served += r.count();
                if (seq != null) {
                  seq.served.add(r);
                  seq.servedIds += r.count();
                }
                long last = lastId(r.first(), r.count(), r.stride());
                if (r.count() >= 1 && r.stride() >= 1 && last != Long.MIN_VALUE) {
                  min = Math.min(min, r.first());
                  max = Math.max(max, last);
                  count += r.count();
                }
              }
              if (seq != null && seq.spec.strict() && count > 0) {
                // Asked for before its calls started, handed out after they ended: held to the order as a call.
                seq.stubBatches.add(new StrictOrder.Call(client, StrictOrder.STUB, asked, handed, min, max, count,
                    "OK"));
              }
            }
            case Recorder.SERVED_IDS -> { // the format before batches: IDs one by one, no time
              int n = in.readInt();
              long[] batch = new long[n];
              for (int i = 0; i < n; i++) {
                batch[i] = in.readLong();
              }
              long[] runs = Recorder.runs(batch, n);
              for (int i = 0; i < runs.length; i += 3) {
                Run r = new Run(client, Long.MIN_VALUE, Long.MIN_VALUE, runs[i], runs[i + 1], runs[i + 2]);
                served += r.count();
                if (seq != null) {
                  seq.served.add(r);
                  seq.servedIds += r.count();
                }
              }
            }
            case Recorder.CALL -> {
              int server = in.readUnsignedByte();
              long start = in.readLong();
              long end = in.readLong();
              String outcome = in.readUTF();
              int unmarked = in.readInt();
              int n = in.readInt();
              long min = Long.MAX_VALUE;
              long max = Long.MIN_VALUE;
              long count = 0;
              for (int i = 0; i < n; i++) {
                long first = in.readLong();
                long c = in.readLong();
                long stride = in.readLong();
                long last = lastId(first, c, stride);
                if (c >= 1 && stride >= 1 && last != Long.MIN_VALUE) { // else out of bounds, seen as a range
                  min = Math.min(min, first);
                  max = Math.max(max, last);
                  count += c;
                }
              }
              if (seq != null) {
                seq.wholeCalls++;
                seq.unmarked += unmarked;
                String owner = owners.ownerAt(name, TimeUnit.NANOSECONDS.toMillis(start));
                String target = targets.get(server);
                if (owner != null && target != null && !owner.equals(target)) {
                  forwardedCalls++;
                  forwardedUnmarked += unmarked;
                }
                boolean ok = outcome.equals("OK");
                table.strictCall(end, ok);
                if (ok) {
                  seq.okCalls++;
                  seq.okEnds.add(end);
                } else {
                  seq.failures.merge(outcome, 1L, Long::sum);
                }
                if (count > 0) {
                  seq.calls.add(new StrictOrder.Call(client, server, start, end, min, max, count, outcome));
                }
              }
            }
            default -> throw new IOException(file + ": corrupt record tag " + tag);
          }
        }
      }
    }

    long duplicates = 0;
    long belowFloor = 0;
    long unleased = 0;
    long lost = 0;
    long strictLost = 0;
    long stubJudged = 0;
    long stubSoonAfter = 0;
    long stubStraddling = 0;
    long freshJudged = 0;
    long freshBelow = 0;
    for (PerSequence seq : sequences.values()) {
      SequenceSpec spec = seq.spec;
      int n = spec.stripes();
      // In-bounds ranges as intervals of stripe indexes: stripe k's i-th ID is start + k + i·n.
      List<List<long[]>> byStripe = emptyStripes(n);
      Map<Integer, List<List<long[]>>> leasesByClient = new HashMap<>();
      long seqOut = 0;
      for (int ri = 0; ri < seq.ranges.size(); ri++) {
        Range r = seq.ranges.get(ri);
        long last = lastId(r.first(), r.count(), r.stride());
        if (r.stride() != n || r.count() < 1 || last == Long.MIN_VALUE || !spec.inBounds(r.first())
            || !spec.inBounds(last)) {
          seqOut += Math.max(r.count(), 0);
          note(evidence, "out_of_bounds", spec.name() + " outside [" + spec.start() + ", " + spec.max()
              + "] or off stripe: " + r.describe());
          continue;
        }
        int k = (int) ((r.first() - spec.start()) % n);
        long lo = (r.first() - spec.start()) / n;
        long[] interval = {lo, lo + r.count() - 1, ri};
        byStripe.get(k).add(interval);
        leasesByClient.computeIfAbsent(r.client(), c -> emptyStripes(n)).get(k).add(interval);
      }

      // The highest floor that may have applied: every OK advance, and a failed one if the cursors passed it.
      long floor = spec.start() - 1;
      for (Advance a : run.advances()) {
        if (a.name().equals(spec.name()) && (a.ok() || passedByAllCursors(run, spec, a.floor()))) {
          floor = Math.max(floor, a.floor());
        }
      }

      long reservedAbove = 0;
      long receivedAbove = 0;
      for (int k = 0; k < n; k++) {
        List<long[]> intervals = byStripe.get(k);
        intervals.sort(Comparator.comparingLong(x -> x[0]));
        long firstAbove = floor < spec.start() + k ? 0 : (floor - spec.start() - k) / n + 1;
        long cursor = cursorIndex(run, spec, k,
            intervals.stream().mapToLong(iv -> iv[1] + 1).max().orElse(0));
        reservedAbove += Math.max(0, cursor - firstAbove);
        long maxHi = -1;
        long[] maxBy = null;
        for (long[] iv : intervals) {
          long lo = iv[0];
          long hi = iv[1];
          if (lo <= maxHi) {
            duplicates += Math.min(hi, maxHi) - lo + 1;
            table.duplicate(Math.min(hi, maxHi) - lo + 1, seq.ranges.get((int) iv[2]).receivedNanos(),
                seq.ranges.get((int) maxBy[2]).receivedNanos());
            note(evidence, "duplicates", spec.name() + " stripe " + k + ": "
                + seq.ranges.get((int) iv[2]).describe() + " overlaps " + seq.ranges.get((int) maxBy[2]).describe());
          }
          // The part of this interval not covered before (the union), split by the floor and the cursor.
          long newLo = Math.max(lo, maxHi + 1);
          if (newLo <= hi) {
            receivedAbove += overlap(newLo, hi, firstAbove, cursor - 1);
            long never = overlap(newLo, hi, cursor, Long.MAX_VALUE); // handed out but never reserved
            if (never > 0) {
              seqOut += never;
              note(evidence, "out_of_bounds", spec.name() + " stripe " + k + " at or beyond the final cursor (index "
                  + cursor + "): " + seq.ranges.get((int) iv[2]).describe());
            }
          }
          if (hi > maxHi) {
            maxHi = hi;
            maxBy = iv;
          }
        }
      }
      outOfBounds += seqOut;

      // Below a floor: IDs at or below the highest floor of the OK advances that returned before a range's
      // call started, or before a stub was asked for a batch.
      Floors floors = new Floors(run.advances().stream()
          .filter(a -> a.ok() && a.name().equals(spec.name())).toList());
      boolean isFresh = spec.name().startsWith(FreshAdvance.PREFIX);
      for (Range r : seq.ranges) {
        int i = floors.before(r.callStartNanos());
        long below = i < 0 ? 0 : idsAtOrBelow(r.first(), r.count(), r.stride(), floors.maxFloor[i]);
        if (isFresh && i >= 0) {
          freshJudged += r.count();
          freshBelow += below;
        }
        if (below > 0) {
          belowFloor += below;
          note(evidence, "below_floor", spec.name() + ": " + below + " IDs of " + r.describe()
              + " at or below floor " + floors.maxFloor[i] + " of an advance that returned OK at "
              + secs(floors.by[i].returnedNanos()));
        }
      }
      for (Run r : seq.served) {
        int i = floors.before(r.askedNanos());
        long below = i < 0 ? 0 : idsAtOrBelow(r.first(), r.count(), r.stride(), floors.maxFloor[i]);
        if (i >= 0) {
          stubJudged += r.count();
          if (r.askedNanos() - floors.returned[i] <= SOON) {
            stubSoonAfter += r.count();
          }
        }
        if (below > 0) {
          belowFloor += below;
          note(evidence, "below_floor", spec.name() + ": " + below + " IDs of " + r.describe()
              + " at or below floor " + floors.maxFloor[i] + " of an advance that returned OK at "
              + secs(floors.by[i].returnedNanos()));
        }
        // Batches asked for before an advance returned and handed out after: not judged (their IDs may have
        // been taken before it returned), but counted, as the place to look if anything ever leaks.
        int j = floors.before(r.handedNanos());
        if (j > i) {
          stubStraddling += idsAtOrBelow(r.first(), r.count(), r.stride(), floors.maxFloor[j]) - below;
        }
      }

      // The stubs' batches as intervals of stripe indexes: duplicates among them, and IDs not leased.
      List<List<long[]>> servedByStripe = emptyStripes(n);
      Map<Integer, List<List<long[]>>> servedByClient = new HashMap<>();
      for (int ri = 0; ri < seq.served.size(); ri++) {
        Run r = seq.served.get(ri);
        List<List<long[]>> mine = servedByClient.computeIfAbsent(r.client(), c -> emptyStripes(n));
        long last = lastId(r.first(), r.count(), r.stride());
        if (r.count() < 1 || last == Long.MIN_VALUE) {
          unleased += Math.max(0, r.count());
          continue;
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
              unleased++;
              note(evidence, "unleased", spec.name() + ": ID " + id + " out of bounds in " + r.describe());
              continue;
            }
            int k = (int) ((id - spec.start()) % n);
            long lo = (id - spec.start()) / n;
            long[] interval = {lo, lo, ri};
            servedByStripe.get(k).add(interval);
            mine.get(k).add(interval);
          }
        } else {
          unleased += r.count();
        }
      }
      for (int k = 0; k < n; k++) {
        List<long[]> intervals = servedByStripe.get(k);
        intervals.sort(Comparator.comparingLong(x -> x[0]));
        long maxHi = -1;
        long[] maxBy = null;
        for (long[] iv : intervals) {
          if (iv[0] <= maxHi) {
            duplicates += Math.min(iv[1], maxHi) - iv[0] + 1;
            table.duplicate(Math.min(iv[1], maxHi) - iv[0] + 1, seq.served.get((int) iv[2]).handedNanos(),
                seq.served.get((int) maxBy[2]).handedNanos());
            note(evidence, "duplicates", spec.name() + " stripe " + k + ": handed out twice: "
                + seq.served.get((int) iv[2]).describe() + " and " + seq.served.get((int) maxBy[2]).describe());
          }
          if (iv[1] > maxHi) {
            maxHi = iv[1];
            maxBy = iv;
          }
        }
      }
      for (Map.Entry<Integer, List<List<long[]>>> e : servedByClient.entrySet()) {
        List<List<long[]>> leases = leasesByClient.getOrDefault(e.getKey(), emptyStripes(n));
        for (int k = 0; k < n; k++) {
          List<long[]> union = union(leases.get(k));
          for (long[] iv : e.getValue().get(k)) {
            long missing = iv[1] - iv[0] + 1 - covered(union, iv[0], iv[1]);
            if (missing > 0) {
              unleased += missing;
              note(evidence, "unleased", spec.name() + ": " + missing + " IDs never leased by this client in "
                  + seq.served.get((int) iv[2]).describe());
            }
          }
        }
      }

      long held = run.finalHeld().stream().filter(h -> h.name().equals(spec.name()))
          .mapToLong(RunLog.FinalHeld::ids).sum();
      long seqLost = reservedAbove - receivedAbove - held;
      lost += seqLost;
      if (spec.strict()) {
        strictLost += seqLost;
      }
      out.printf("sequence %s: ranges=%d served=%d floor=%d reserved_above_floor=%d received_above_floor=%d "
              + "held_at_end=%d lost=%d%n", spec.name(), seq.ranges.size(), seq.servedIds, floor, reservedAbove,
          receivedAbove, held, seqLost);
    }

    long faultBound = run.faults().stream().mapToLong(RunLog.Fault::lostBound).sum();
    boolean restartsOnly = run.restartsOnly();
    // Planned stops: how each went, and what the servers said they gave back.
    long returned = 0;
    long abandonedAtStops = 0;
    long failedStops = 0;
    long unknownStops = 0;
    long slowestStop = 0;
    for (RunLog.Stopped st : run.stopped()) {
      if (st.exit() == -1) {
        failedStops++;
        note(evidence, "failed_stops", st.server() + " did not exit within its time after SIGTERM ("
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
    Map<String, Long> kinds = new TreeMap<>();
    run.faults().forEach(f -> kinds.merge(f.kind(), 1L, Long::sum));
    long during = run.faults().stream().filter(f -> f.kind().equals("advance-burst")
        && f.detail().contains("during=")).count();
    Map<String, Long> outcomes = new TreeMap<>();
    run.advances().forEach(a -> outcomes.merge(a.outcome(), 1L, Long::sum));
    long advancesOk = outcomes.getOrDefault("ok", 0L);
    out.printf("faults by kind: %s (advance bursts during a pause or a kill: %d); client files: %d; "
        + "stub IDs served: %d%n", kinds, during, files.size(), served);
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
            + "out after it (not judged): %d%n", stubJudged, TimeUnit.NANOSECONDS.toSeconds(SOON), stubSoonAfter,
        stubStraddling);
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
    long reported = heldAtKills + counted + abandonedAtStops;
    out.printf("servers_reported = %d (reserves held just before the kills: %d; their own lost counters,"
        + " abandoned + dc_block: %d; abandoned at planned stops: %d; %d reports unknown); lost - reported = %d%n",
        reported, heldAtKills, counted, abandonedAtStops, unknown, lost - reported);
    // Planned restarts only: the restarts add nothing to the bound. What may be lost is only what the servers
    // counted themselves outside their stops (read just before each SIGTERM and at the end: compare-and-sets
    // whose outcome could not be settled, calls a client cut), whatever calls failed: a call refused by a
    // stopping server took no ID. Anything lost beyond that was lost by the stops (a loss a server counted
    // between its last read and its exit is among them: the check errs on the side of blaming the stop).
    long lostBound;
    long restartLost = 0;
    if (restartsOnly) {
      // But strict sequences: a planned stop of their owner gives nothing back (docs/design.md: what it held
      // is a counted gap, as for a crash), at most a node block and a DC block (a refill under way) each.
      long strictStops = run.stopped().size() * run.sequences().stream().filter(SequenceSpec::strict)
          .mapToLong(q -> q.nodeBlock() + q.dcBlock()).sum();
      lostBound = counted + strictStops;
      restartLost = Math.max(0, lost - strictLost - counted);
      out.printf("lost_bound = %d: planned restarts only, which lose nothing; the bound is what the servers"
          + " counted as lost outside their stops (%d IDs asked for by failed or cancelled calls and not"
          + " received are no excuse)%s; lost at the restarts = max(0, lost%s - that) = %d%n", lostBound,
          failedOutstanding, strictStops > 0 ? ", plus " + strictStops + " for the strict sequences" : "",
          strictStops > 0 ? " of the other sequences" : "", restartLost);
      if (strictStops > 0) {
        out.printf("  strict sequences lost %d, not blamed on the restarts: a stopping owner gives back nothing"
            + " (a counted gap); allowed a node block and a DC block per stop: %d%n", strictLost, strictStops);
      }
    } else {
      lostBound = faultBound + failedOutstanding;
      out.printf("lost_bound = %d (faults) + %d (asked for by failed or cancelled calls, not received)%n",
          faultBound, failedOutstanding);
    }
    // The servers' compare-and-set outcomes: each incarnation's counters, read just before its kill -9 and
    // at the end (a killed process takes its counters along: what it counted after the last read is lost).
    Map<String, Long> cas = new TreeMap<>();
    Map<String, Long> casByTier = new TreeMap<>();
    long casAtKills = 0;
    long casAtEnd = 0;
    long casAtStops = 0;
    long casUnreachable = 0;
    for (RunLog.CasReport c : run.cas()) {
      if (c.counts() == null) {
        casUnreachable++;
        continue;
      }
      if (c.when().equals("kill")) {
        casAtKills++;
      } else if (c.when().equals("stop")) {
        casAtStops++;
      } else {
        casAtEnd++;
      }
      c.counts().forEach((k, v) -> {
        cas.merge(k.substring(k.indexOf(':') + 1), v, Long::sum);
        casByTier.merge(k, v, Long::sum);
      });
    }
    if (!run.cas().isEmpty()) {
      out.printf("cas by tier: %s (idgen_store_cas_total read %d times just before a kill -9%s and %d times at the "
          + "end, %d reads failed; what a killed incarnation counted after its last read died with it)%n",
          casByTier, casAtKills, casAtStops == 0 ? "" : ", " + casAtStops + " times just before a SIGTERM",
          casAtEnd, casUnreachable);
    }
    Strict strict = strict(run, sequences, table, evidence);
    List<FaultTable.Row> byKind = table.rows(run);
    FaultTable.print(byKind, out);
    table.printStrict(run, out);
    Cases cases = cases(run, freshJudged, freshBelow, forwardedCalls, forwardedUnmarked);
    printCases(run, cases, strict, stamped, wrongStamps, out);
    for (String line : evidence) {
      out.println(line);
    }
    Report report = new Report(ids, served, duplicates, outOfBounds, belowFloor, unleased, badCalls, lost,
        lostBound, reported, run.faults().size(), run.advances().size(), advancesOk,
        advancesDuringPause, advancesDuringKill, stubJudged, Collections.unmodifiableMap(cas), run.seed(), run.ended(),
        restartsOnly, run.stopped().size(), failedStops, returned, restartLost, List.copyOf(byKind), strict,
        stamped, wrongStamps, cases);
    if (lost < 0) {
      out.println("WARNING: lost < 0: more IDs received or held than were ever reserved");
    }
    if (restartsOnly && restartLost != 0) {
      out.println("restart_lost: " + restartLost + " IDs lost in a run of planned restarts only beyond what the"
          + " servers counted outside their stops (see the sequences' lines above, and the servers' logs in"
          + " servers/: 'reserves at shutdown', 'as lost')");
    }
    if (strict.sequences() > 0) {
      out.println(strict.line());
    }
    out.println(report.line());
    out.println(report.casLine());
    return report;
  }

  /**
   * The strict sequences' calls held to their order ({@link StrictOrder}, examples into {@code evidence}),
   * their failures and longest stretch without a successful call, and the owner take-overs in {@code run}.
   */
  private static Strict strict(Contents run, Map<String, PerSequence> sequences, FaultTable table,
      List<String> evidence) {
    List<PerSequence> strict = sequences.values().stream().filter(p -> p.spec.strict())
        .sorted(Comparator.comparing(p -> p.spec.name())).toList();
    if (strict.isEmpty()) {
      return Strict.NONE;
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
    for (PerSequence seq : strict) {
      List<StrictOrder.Call> judgedCalls = new ArrayList<>(seq.calls);
      judgedCalls.addAll(seq.stubBatches);
      stubBatches += seq.stubBatches.size();
      StrictOrder.Result result = StrictOrder.check(judgedCalls, EVIDENCE);
      for (StrictOrder.Violation v : result.examples()) {
        note(evidence, "order_violations", seq.spec.name() + ": " + v.describe());
      }
      calls += seq.wholeCalls;
      ok += seq.okCalls;
      judged += result.calls();
      ids += judgedCalls.stream().mapToLong(StrictOrder.Call::ids).sum();
      violations += result.violations();
      unmarked += seq.unmarked;
      if (seq.unmarked > 0) {
        note(evidence, "unmarked", seq.spec.name() + ": " + seq.unmarked + " ranges of strict calls without"
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
    long takeovers = 0;
    long firstEpoch = -1;
    long lastEpoch = -1;
    // A take-over raises the fencing epoch: count each epoch above the highest seen before (a server may still
    // show an older owner row for a moment, as runs before the monitor kept the highest did: not counted twice).
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
    return new Strict(strict.size(), calls, ok, judged, ids, violations, unmarked,
        Collections.unmodifiableMap(failures), longest[1] - longest[0], longest[0], takeovers, firstEpoch,
        lastEpoch, stubBatches);
  }

  /** The strict sequences' owners over time, as the run's owner lines show them. */
  private static final class Owners {
    private final Map<String, List<RunLog.OwnerSeen>> byName = new HashMap<>();

    Owners(List<RunLog.OwnerSeen> seen) {
      for (RunLog.OwnerSeen o : seen) {
        byName.computeIfAbsent(o.name(), k -> new ArrayList<>()).add(o);
      }
      byName.values().forEach(l -> l.sort(Comparator.comparingLong(RunLog.OwnerSeen::atMillis)));
    }

    /** {@code name}'s owner target as last seen at or before {@code millis}; null if none or unknown. */
    String ownerAt(String name, long millis) {
      List<RunLog.OwnerSeen> l = byName.get(name);
      if (l == null) {
        return null;
      }
      String owner = null;
      for (RunLog.OwnerSeen o : l) { // a few dozen lines per run
        if (o.atMillis() > millis) {
          break;
        }
        owner = o.target().equals("-") ? null : o.target();
      }
      return owner;
    }
  }

  private static Cases cases(Contents run, long freshJudged, long freshBelow, long forwardedCalls,
      long forwardedUnmarked) {
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
    return new Cases(run.fresh().size(), ok, case1, inFlight, frozen, freshJudged, freshBelow, forwardedCalls,
        forwardedUnmarked, run.unloads().sequences(), tries, empty);
  }

  /** The lines that say how often each new kind provoked its case, and the stamps' check. */
  private static void printCases(Contents run, Cases c, Strict strict, long stamped, long wrongStamps,
      PrintStream out) {
    if (!run.fresh().isEmpty()) {
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

  /** "Soon after an advance returned": within the client lease lifetime and margin the harness sets. */
  private static final long SOON = TimeUnit.SECONDS.toNanos(5);

  /** The client of a {@code client-N.bin} file. */
  private static int clientOf(Path file) {
    String name = file.getFileName().toString();
    return Integer.parseInt(name.substring("client-".length(), name.length() - ".bin".length()));
  }

  /** Adds a line of evidence of a violation, at most {@link #EVIDENCE} per kind. */
  private static void note(List<String> evidence, String kind, String line) {
    long already = evidence.stream().filter(l -> l.startsWith(kind + ": ")).count();
    if (already < EVIDENCE) {
      evidence.add(kind + ": " + line);
    }
  }

  private static String secs(long nanos) {
    return nanos == Long.MIN_VALUE ? "?" : String.format(Locale.ROOT, "%.3fs", nanos / 1e9);
  }

  /** How many of the {@code count} IDs {@code first, first + stride, …} are at or below {@code floor}. */
  private static long idsAtOrBelow(long first, long count, long stride, long floor) {
    if (count < 1 || stride < 1 || first > floor) {
      return 0;
    }
    try {
      return Math.min(count, Math.subtractExact(floor, first) / stride + 1);
    } catch (ArithmeticException e) {
      return count;
    }
  }

  /** Sorted, merged intervals (adjacent ones joined). */
  private static List<long[]> union(List<long[]> intervals) {
    List<long[]> sorted = new ArrayList<>(intervals);
    sorted.sort(Comparator.comparingLong(x -> x[0]));
    List<long[]> merged = new ArrayList<>();
    for (long[] iv : sorted) {
      long[] lastOne = merged.isEmpty() ? null : merged.get(merged.size() - 1);
      if (lastOne != null && iv[0] <= lastOne[1] + 1) {
        lastOne[1] = Math.max(lastOne[1], iv[1]);
      } else {
        merged.add(new long[] {iv[0], iv[1]});
      }
    }
    return merged;
  }

  /** How many indexes of {@code [lo, hi]} lie in the merged, sorted {@code union}. */
  private static long covered(List<long[]> union, long lo, long hi) {
    int a = 0;
    int b = union.size() - 1;
    int first = union.size();
    while (a <= b) { // the first interval ending at or after lo
      int mid = (a + b) >>> 1;
      if (union.get(mid)[1] >= lo) {
        first = mid;
        b = mid - 1;
      } else {
        a = mid + 1;
      }
    }
    long covered = 0;
    for (int i = first; i < union.size() && union.get(i)[0] <= hi; i++) {
      covered += overlap(lo, hi, union.get(i)[0], union.get(i)[1]);
    }
    return covered;
  }

  private static List<List<long[]>> emptyStripes(int n) {
    List<List<long[]>> l = new ArrayList<>();
    for (int k = 0; k < n; k++) {
      l.add(new ArrayList<>());
    }
    return l;
  }

  /** The last of {@code count} IDs {@code first, first + stride, …}, or Long.MIN_VALUE if it overflows. */
  private static long lastId(long first, long count, long stride) {
    try {
      return Math.addExact(first, Math.multiplyExact(count - 1, stride));
    } catch (ArithmeticException e) {
      return Long.MIN_VALUE;
    }
  }

  private static long overlap(long lo, long hi, long lo2, long hi2) {
    long a = Math.max(lo, lo2);
    long b = Math.min(hi, hi2);
    return b < a ? 0 : b - a + 1;
  }

  /** The index (on stripe k) of the stripe's final global cursor: every index below it was reserved. */
  private static long cursorIndex(Contents run, SequenceSpec spec, int k, long unknown) {
    int n = spec.stripes();
    long stripeSize = spec.max() < spec.start() + k ? 0 : (spec.max() - spec.start() - k) / n + 1;
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
