package dev.idgen.chaos;

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
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
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
 *   <li>{@code below_floor}: IDs at or below an advanced floor in a range whose call started after that
 *       {@code AdvanceSequence} returned (0);
 *   <li>{@code unleased}: IDs a client stub handed out that are in none of the ranges it leased (0);
 *   <li>{@code bad_calls}: calls that ended OK with more or fewer IDs than they asked for (0);
 *   <li>{@code reported}: what the servers said of their own losses (reserves held just before each
 *       kill, and their {@code idgen_ids_lost_total} counters), printed beside {@code lost} as a cross-check;
 *       not a verdict.
 *   <li>{@code lost}: IDs reserved from the global cursors above the highest floor that nobody received and
 *       that no datacenter pool or live server still holds at the end, against {@code lost_bound}, the sum of
 *       what each fault may lose (see {@link ChaosRun}) and of what each failed or cancelled call had asked
 *       for and not received.
 * </ul>
 * It ends with one line, {@code checked ids=… duplicates=… … seed=…}, and exits non-zero on any violation.
 */
@Command(name = "idgen-chaos-check", mixinStandardHelpOptions = true,
    description = "Checks the files a chaos run recorded; exits 1 on any violation.")
public final class Checker implements Callable<Integer> {

  @Parameters(index = "0", description = "the run's output directory")
  Path dir;

  /** The verdict of one check. */
  public record Report(long ids, long served, long duplicates, long outOfBounds, long belowFloor,
      long unleased, long badCalls, long lost, long lostBound, long reported, long faults, long advances,
      String seed, boolean complete) {

    public boolean ok() {
      return complete && duplicates == 0 && outOfBounds == 0 && belowFloor == 0 && unleased == 0
          && badCalls == 0 && lost <= lostBound && lost >= 0;
    }

    public String line() {
      return "checked ids=" + ids + " duplicates=" + duplicates + " out_of_bounds=" + outOfBounds
          + " below_floor=" + belowFloor + " unleased=" + unleased + " bad_calls=" + badCalls
          + " lost=" + lost + " lost_bound=" + lostBound + " reported=" + reported + " faults=" + faults
          + " seed=" + seed
          + (complete ? "" : " INCOMPLETE") + (ok() ? "" : " FAILED");
    }
  }

  private record Range(int client, long callStartNanos, long first, long count, long stride) {}

  /** Growable long array: the stubs' served IDs can be millions. */
  private static final class Longs {
    long[] a = new long[1024];
    int n;

    void add(long v) {
      if (n == a.length) {
        a = Arrays.copyOf(a, a.length * 2);
      }
      a[n++] = v;
    }
  }

  private static final class PerSequence {
    final SequenceSpec spec;
    final List<Range> ranges = new ArrayList<>();
    final Longs served = new Longs();
    /** client -> its served IDs, for the "served only what it leased" check. */
    final Map<Integer, Longs> servedByClient = new HashMap<>();

    PerSequence(SequenceSpec spec) {
      this.spec = spec;
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

  /** Checks the run in {@code dir}, printing details and, last, the one-line verdict to {@code out}. */
  public static Report check(Path dir, PrintStream out) throws IOException {
    Contents run = RunLog.read(dir);
    Map<String, PerSequence> sequences = new HashMap<>();
    for (SequenceSpec s : run.sequences()) {
      sequences.put(s.name(), new PerSequence(s));
    }
    long ids = 0;
    long served = 0;
    long outOfBounds = 0;
    long badCalls = 0;
    long failedOutstanding = 0;
    List<Path> files;
    try (Stream<Path> list = Files.list(dir)) {
      files = list.filter(p -> p.getFileName().toString().matches("client-\\d+\\.bin")).sorted().toList();
    }
    for (Path file : files) {
      String fileName = file.getFileName().toString();
      int client = Integer.parseInt(fileName.substring("client-".length(), fileName.length() - ".bin".length()));
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
            case Recorder.RANGE -> {
              long callStart = in.readLong();
              in.readLong(); // the time the client read the range: for people; the verdict uses the call's start
              Range r = new Range(client, callStart, in.readLong(), in.readLong(), in.readLong());
              ids += r.count();
              if (seq == null) {
                outOfBounds += r.count();
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
            case Recorder.SERVED -> {
              int n = in.readInt();
              Longs byClient = seq == null ? null : seq.servedByClient.computeIfAbsent(client, c -> new Longs());
              for (int i = 0; i < n; i++) {
                long id = in.readLong();
                served++;
                if (seq != null) {
                  seq.served.add(id);
                  byClient.add(id);
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
    for (PerSequence seq : sequences.values()) {
      SequenceSpec spec = seq.spec;
      int n = spec.stripes();
      // In-bounds ranges as intervals of stripe indexes: stripe k's i-th ID is start + k + i·n.
      List<List<long[]>> byStripe = new ArrayList<>();
      for (int k = 0; k < n; k++) {
        byStripe.add(new ArrayList<>());
      }
      Map<Integer, List<List<long[]>>> leasesByClient = new HashMap<>();
      long seqOut = 0;
      for (Range r : seq.ranges) {
        long last = lastId(r);
        if (r.stride() != n || r.count() < 1 || last == Long.MIN_VALUE || !spec.inBounds(r.first())
            || !spec.inBounds(last)) {
          seqOut += Math.max(r.count(), 0);
          continue;
        }
        int k = (int) ((r.first() - spec.start()) % n);
        long lo = (r.first() - spec.start()) / n;
        long[] interval = {lo, lo + r.count() - 1};
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
        intervals.sort((x, y) -> Long.compare(x[0], y[0]));
        long firstAbove = floor < spec.start() + k ? 0 : (floor - spec.start() - k) / n + 1;
        long cursor = cursorIndex(run, spec, k,
            intervals.stream().mapToLong(iv -> iv[1] + 1).max().orElse(0));
        reservedAbove += Math.max(0, cursor - firstAbove);
        long maxHi = -1;
        for (long[] iv : intervals) {
          long lo = iv[0];
          long hi = iv[1];
          if (lo <= maxHi) {
            duplicates += Math.min(hi, maxHi) - lo + 1;
          }
          // The part of this interval not covered before (the union), split by the floor and the cursor.
          long newLo = Math.max(lo, maxHi + 1);
          if (newLo <= hi) {
            receivedAbove += overlap(newLo, hi, firstAbove, cursor - 1);
            seqOut += overlap(newLo, hi, cursor, Long.MAX_VALUE); // handed out but never reserved
          }
          maxHi = Math.max(maxHi, hi);
        }
      }
      outOfBounds += seqOut;

      for (Advance a : run.advances()) {
        if (!a.ok() || !a.name().equals(spec.name())) {
          continue;
        }
        for (Range r : seq.ranges) {
          if (r.callStartNanos() > a.returnedNanos() && r.first() <= a.floor() && r.stride() > 0) {
            belowFloor += Math.min(r.count(), (a.floor() - r.first()) / r.stride() + 1);
          }
        }
      }

      long[] all = Arrays.copyOf(seq.served.a, seq.served.n);
      Arrays.sort(all);
      for (int i = 1; i < all.length; i++) {
        if (all[i] == all[i - 1]) {
          duplicates++;
        }
      }
      for (Map.Entry<Integer, Longs> e : seq.servedByClient.entrySet()) {
        List<List<long[]>> leases = leasesByClient.getOrDefault(e.getKey(), emptyStripes(n));
        leases.forEach(l -> l.sort((x, y) -> Long.compare(x[0], y[0])));
        Longs mine = e.getValue();
        for (int i = 0; i < mine.n; i++) {
          long id = mine.a[i];
          if (!spec.inBounds(id) || !covered(leases.get((int) ((id - spec.start()) % n)), (id - spec.start()) / n)) {
            unleased++;
          }
        }
      }

      long held = run.finalHeld().stream().filter(h -> h.name().equals(spec.name()))
          .mapToLong(RunLog.FinalHeld::ids).sum();
      long seqLost = reservedAbove - receivedAbove - held;
      lost += seqLost;
      out.printf("sequence %s: ranges=%d served=%d floor=%d reserved_above_floor=%d received_above_floor=%d "
              + "held_at_end=%d lost=%d%n", spec.name(), seq.ranges.size(), seq.served.n, floor, reservedAbove,
          receivedAbove, held, seqLost);
    }

    long faultBound = run.faults().stream().mapToLong(RunLog.Fault::lostBound).sum();
    out.printf("lost_bound = %d (faults) + %d (asked for by failed or cancelled calls, not received)%n",
        faultBound, failedOutstanding);
    Map<String, Long> kinds = new HashMap<>();
    run.faults().forEach(f -> kinds.merge(f.kind(), 1L, Long::sum));
    out.printf("faults by kind: %s; advances: %d; client files: %d; stub IDs served: %d%n", kinds,
        run.advances().size(), files.size(), served);
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
    long reported = heldAtKills + counted;
    out.printf("servers_reported = %d (reserves held just before the kills: %d; their own lost counters,"
        + " abandoned + dc_block: %d; %d reports unknown); lost - reported = %d%n", reported, heldAtKills,
        counted, unknown, lost - reported);
    Report report = new Report(ids, served, duplicates, outOfBounds, belowFloor, unleased, badCalls, lost,
        faultBound + failedOutstanding, reported, run.faults().size(), run.advances().size(), run.seed(),
        run.ended());
    if (lost < 0) {
      out.println("WARNING: lost < 0: more IDs received or held than were ever reserved");
    }
    out.println(report.line());
    return report;
  }

  private static List<List<long[]>> emptyStripes(int n) {
    List<List<long[]>> l = new ArrayList<>();
    for (int k = 0; k < n; k++) {
      l.add(new ArrayList<>());
    }
    return l;
  }

  /** The last ID of a range, or Long.MIN_VALUE if it overflows. */
  private static long lastId(Range r) {
    try {
      return Math.addExact(r.first(), Math.multiplyExact(r.count() - 1, r.stride()));
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

  /** True if index {@code i} lies in one of the intervals (sorted by start). */
  private static boolean covered(List<long[]> sorted, long i) {
    int lo = 0;
    int hi = sorted.size() - 1;
    int best = -1;
    while (lo <= hi) { // the last interval starting at or before i
      int mid = (lo + hi) >>> 1;
      if (sorted.get(mid)[0] <= i) {
        best = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (best < 0) {
      return false;
    }
    // Intervals may overlap only if there are duplicates; scan back a little to be exact anyway.
    for (int j = best; j >= 0 && j > best - 64; j--) {
      if (sorted.get(j)[1] >= i) {
        return true;
      }
    }
    return false;
  }
}
