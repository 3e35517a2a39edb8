package dev.idgen.chaos;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * {@code run.txt}: what the harness did and saw, one event a line, flushed as it happens. Together with the
 * clients' {@code client-*.bin} files (ranges received, calls failed, batches stubs handed out: see
 * {@link Recorder}) it is all {@link Checker} needs. Lines (space-separated):
 * <pre>
 *   seed SEED
 *   sequence NAME START MAX STRIPES NODE_BLOCK DC_BLOCK [strict HOME_DC]
 *                                                    "strict": created with ORDERING_STRICT, owned in HOME_DC
 *                                                    (absent: ORDERING_PER_SERVER)
 *   client ID stub|raw|strict|fresh                  a client the run started: its record is client-ID.bin
 *                                                    (strict: 1-ID calls and small batches of raw Allocate on
 *                                                    the strict sequences, each call recorded whole, and a
 *                                                    stub's batches of them; fresh: the fresh-advance
 *                                                    episodes' calls)
 *   kinds KIND,KIND…                                 the fault kinds the run chose (absent: runs before the
 *                                                    choice, which had the four first ones)
 *   fault AT_MILLIS KIND LOST_BOUND DETAIL…          KIND: one of FaultKinds.NAMES (a burst's DETAIL says during
 *                                                    which fault, if any)
 *   stopped SERVER EXIT RETURNED ABANDONED MILLIS    a graceful stop (SIGTERM) of a server: its exit code (-1: it
 *                                                    did not exit in time and was killed), what its log says it
 *                                                    gave back to the store and did not (-1: no such line), how
 *                                                    long from SIGTERM to exit
 *   advance NAME FLOOR RETURNED_NANOS ok|failed:CODE STARTED_NANOS SERVER
 *                                                    one AdvanceSequence call of a burst: RETURNED_NANOS is
 *                                                    taken after the call returned (run clock, as the client
 *                                                    files' times), so "asked for after it" is certain
 *   down KIND WHAT FROM_MILLIS TO_MILLIS              how long a fault held: a node paused (KIND cassandra-pause,
 *                                                    WHAT dc1|dc2) or a server dead (server-kill, its name),
 *                                                    from the pause or kill until the resume or the restarted
 *                                                    server reported SERVING
 *   final-stripe NAME STRIPE NEXT_UNRESERVED|- REMAINING
 *   final-held NAME WHERE IDS                        WHERE: dc:DC:STRIPE or server:NAME
 *   reported SERVER WHEN HELD COUNTED                what a server said of its own losses: WHEN kill (just
 *                                                    before its kill -9), stop (just before its SIGTERM)
 *                                                    or end; HELD its in-memory reserve (GetSequence; read
 *                                                    at kills only, else 0: a stop gives it back), COUNTED
 *                                                    its idgen_ids_lost_total (abandoned + dc_block) since
 *                                                    it started; -1: unknown
 *   cas SERVER WHEN TIER:OUTCOME=N…|-                the same incarnation's idgen_store_cas_total at the same
 *                                                    moment, one token per tier and outcome; "-": unreachable
 *   stub CLIENT NAME SERVED EXPIRED                  a stub's own counters for one sequence when it stopped
 *                                                    or was killed: IDs handed out, IDs dropped unused because
 *                                                    their range's valid_for ran out
 *   window SEQ KIND FROM_MILLIS TO_MILLIS DETAIL…    when a fault was in force: from its apply to its heal (a
 *                                                    node resumed or restarted, a rule deleted, a server
 *                                                    SERVING again; FROM = TO for a client kill). SEQ numbers
 *                                                    the fault thread's faults from 0; "-" for an advance
 *                                                    burst (from its first call's start to its last return)
 *   counters SEQ SERVER INCARNATION LOST TIER:OUTCOME=N…
 *                                                    a live server's counters just before the fault thread's
 *                                                    fault SEQ (or SEQ "end": after the clients stopped), and
 *                                                    just before a kill -9 (SEQ: the kill's): LOST its
 *                                                    idgen_ids_lost_total (abandoned + dc_block), then its
 *                                                    idgen_store_cas_total and (OUTCOME "attempts")
 *                                                    idgen_store_cas_attempts_total by tier. A restarted
 *                                                    incarnation gets a line of zeros, no tokens, when it
 *                                                    started; its counts until its next line are SEQ's
 *   owner NAME AT_MILLIS TARGET|- EPOCH|-             a strict sequence's owner as GetSequence showed it (the
 *                                                    highest epoch of the live servers' answers), logged when
 *                                                    it changed (polled every 500 ms): the owner's gRPC target
 *                                                    and its record's fencing epoch ("-": none)
 *   server NAME SLOT TARGET DC                       a server slot: its gRPC target (host:port), which the
 *                                                    strict calls' records name by slot and the owner lines
 *                                                    by target
 *   fresh NAME FLOOR ok|failed:CODE CREATED_NANOS ADVANCE_STARTED_NANOS ADVANCE_RETURNED_NANOS KEY=VALUE…
 *                                                    one fresh-advance episode (FreshAdvance): the sequence,
 *                                                    the advance's floor and outcome, when the creation
 *                                                    returned and the advance started and returned (run
 *                                                    clock; MIN_VALUE: never), then loaders=, in_flight=
 *                                                    (loaders' first calls in flight when the advance
 *                                                    started), frozen=, frozen_ms=, dc1= and dc2= (what the
 *                                                    pool rows showed: case1, trim-created, append-first,
 *                                                    seen-late, floor, no-floor, absent, unread), reads=,
 *                                                    unread=, others=CALLS/OK (after the advance, on servers
 *                                                    that had not loaded it), idle=CALLS/OK (after their idle
 *                                                    unload)
 *   fresh-probes KEY=VALUE…                          the prober's calls on the fresh sequences: calls=, ok=,
 *                                                    restarted= and restarted_ok= (on a server restarted since
 *                                                    the sequence's advance)
 *   stub-try CLIENT TRIES EMPTY                      a stub caller's tryNext() calls and those that found the
 *                                                    source empty (then next() took the ID), when it ended
 *   unloads IDLE_AFTER_MILLIS LINES SEQUENCES         the servers' idgen.allocator.unload-idle-after (0: never)
 *                                                    and what their logs say they unloaded as idle: log lines,
 *                                                    sequences in all (every incarnation's log, at the end)
 *   end DURATION_MILLIS
 * </pre>
 */
final class RunLog implements AutoCloseable {
  static final String FILE = "run.txt";

  /**
   * A sequence of the run; {@code homeDatacenter} is null for ORDERING_PER_SERVER, the datacenter that owns
   * it for ORDERING_STRICT ({@link #strict()}).
   */
  record SequenceSpec(String name, long start, long max, int stripes, long nodeBlock, long dcBlock,
      String homeDatacenter) {
    /** An ORDERING_PER_SERVER sequence. */
    SequenceSpec(String name, long start, long max, int stripes, long nodeBlock, long dcBlock) {
      this(name, start, max, stripes, nodeBlock, dcBlock, null);
    }

    boolean inBounds(long id) {
      return id >= start && id <= max;
    }

    /** Created with ORDERING_STRICT. */
    boolean strict() {
      return homeDatacenter != null;
    }
  }

  /** A strict sequence's owner as seen at {@code atMillis}: its gRPC target and fencing epoch, or none ("-", -1). */
  record OwnerSeen(String name, long atMillis, String target, long epoch) {}

  record Fault(long atMillis, String kind, long lostBound, String detail) {}

  /**
   * One AdvanceSequence call: {@code outcome} is {@code ok} or {@code failed:CODE}; {@code startedNanos}
   * {@link Long#MIN_VALUE} and {@code server} "?" if not recorded.
   */
  record Advance(String name, long floor, long returnedNanos, String outcome, long startedNanos, String server) {
    boolean ok() {
      return outcome.equals("ok");
    }
  }

  record FinalStripe(String name, int stripe, OptionalLong nextUnreserved, long remaining) {}

  record FinalHeld(String name, String where, long ids) {}

  /** What a server reported of its own losses, just before a kill or at the end (-1: could not ask). */
  record Reported(String server, String when, long held, long counted) {}

  /** A server incarnation's {@code idgen_store_cas_total} by {@code tier:outcome}; null if unreachable. */
  record CasReport(String server, String when, Map<String, Long> counts) {}

  /** A fault's time in force: {@code what} (a datacenter, a server) was down from one time to the other. */
  record Down(String kind, String what, long fromMillis, long toMillis) {}

  /** A graceful stop: exit code (-1: killed after the timeout), IDs given back and abandoned (-1: unknown). */
  record Stopped(String server, int exit, long returned, long abandoned, long millis) {}

  /** A stub's counters for one sequence when it ended. */
  record StubStats(String client, String sequence, long served, long expired) {}

  /** A fault in force from one time to the other; {@code seq} the fault thread's number, or "-" (a burst). */
  record Window(String seq, String kind, long fromMillis, long toMillis, String detail) {}

  /** A server incarnation's counters at the start of fault {@code seq} (or "end"); see {@code counters}. */
  record Snapshot(String seq, String server, int incarnation, long lost, Map<String, Long> counts) {}

  /** A server slot and its gRPC target. */
  record ServerSlot(String name, int slot, String target, String datacenter) {}

  /**
   * One fresh-advance episode: its sequence, floor and advance outcome, run-clock times ({@link Long#MIN_VALUE}:
   * never), and its {@code KEY=VALUE} fields.
   */
  record FreshRun(String name, long floor, String outcome, long createdNanos, long advanceStartedNanos,
      long advanceReturnedNanos, Map<String, String> fields) {
    boolean ok() {
      return outcome.equals("ok");
    }

    /** A numeric field, 0 if absent. */
    long number(String key) {
      String v = fields.get(key);
      return v == null ? 0 : Long.parseLong(v);
    }

    /** A {@code CALLS/OK} field as {@code {calls, ok}}, zeros if absent. */
    long[] pair(String key) {
      String v = fields.get(key);
      if (v == null) {
        return new long[2];
      }
      int slash = v.indexOf('/');
      return new long[] {Long.parseLong(v.substring(0, slash)), Long.parseLong(v.substring(slash + 1))};
    }
  }

  /** A stub caller's tryNext() calls and those that found its source empty. */
  record StubTries(String client, long tries, long empty) {}

  /** The servers' unload-idle-after and the idle unloads their logs show (-1 each: not recorded). */
  record Unloads(long idleAfterMillis, long lines, long sequences) {
    static final Unloads NONE = new Unloads(-1, -1, -1);
  }

  /** Everything a run.txt says. */
  record Contents(String seed, List<SequenceSpec> sequences, List<Fault> faults, List<Advance> advances,
      List<FinalStripe> finalStripes, List<FinalHeld> finalHeld, List<Reported> reported,
      List<CasReport> cas, List<StubStats> stubs, List<Integer> clients, List<Down> down, List<String> kinds,
      List<Stopped> stopped, List<Window> windows, List<Snapshot> snapshots, List<OwnerSeen> owners,
      boolean ended, List<ServerSlot> servers, List<FreshRun> fresh, Map<String, Long> freshProbes,
      List<StubTries> tries, Unloads unloads) {

    /** Whether the run chose planned restarts only: then nothing may be lost. */
    boolean restartsOnly() {
      return !kinds.isEmpty() && FaultKinds.GRACEFUL.containsAll(kinds);
    }
  }

  private final BufferedWriter out;

  RunLog(Path dir) throws IOException {
    out = Files.newBufferedWriter(dir.resolve(FILE), StandardCharsets.UTF_8);
  }

  synchronized void line(Object... tokens) {
    StringBuilder sb = new StringBuilder();
    for (Object t : tokens) {
      if (sb.length() > 0) {
        sb.append(' ');
      }
      sb.append(t);
    }
    try {
      out.write(sb.append('\n').toString());
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  void sequence(SequenceSpec s) {
    if (s.strict()) {
      line("sequence", s.name(), s.start(), s.max(), s.stripes(), s.nodeBlock(), s.dcBlock(), "strict",
          s.homeDatacenter());
    } else {
      line("sequence", s.name(), s.start(), s.max(), s.stripes(), s.nodeBlock(), s.dcBlock());
    }
  }

  /** An {@code owner} line: {@code target} null when no server owns {@code name}. */
  void owner(String name, long atMillis, String target, long epoch) {
    line("owner", name, atMillis, target == null ? "-" : target, target == null ? "-" : Long.toString(epoch));
  }

  void fault(long atMillis, String kind, long lostBound, String detail) {
    line("fault", atMillis, kind, lostBound, detail);
  }

  /** A {@code window} line. */
  void window(String seq, String kind, long fromMillis, long toMillis, String detail) {
    line("window", seq, kind, fromMillis, toMillis, detail);
  }

  /** A {@code counters} line: {@code counts} by {@code tier:outcome} (outcome "attempts" too). */
  void counters(String seq, String server, int incarnation, long lost, Map<String, Long> counts) {
    StringBuilder sb = new StringBuilder("counters ").append(seq).append(' ').append(server).append(' ')
        .append(incarnation).append(' ').append(lost);
    counts.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
    line(sb.toString());
  }

  /** A {@code cas} line: {@code counts} by {@code tier:outcome}, or null if the server could not be read. */
  void cas(String server, String when, Map<String, Long> counts) {
    StringBuilder sb = new StringBuilder("cas ").append(server).append(' ').append(when);
    if (counts == null) {
      sb.append(" -");
    } else {
      counts.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v));
    }
    line(sb.toString());
  }

  @Override
  public synchronized void close() throws IOException {
    out.close();
  }

  static Contents read(Path dir) throws IOException {
    String seed = "?";
    List<SequenceSpec> sequences = new ArrayList<>();
    List<Fault> faults = new ArrayList<>();
    List<Advance> advances = new ArrayList<>();
    List<FinalStripe> stripes = new ArrayList<>();
    List<FinalHeld> held = new ArrayList<>();
    List<Reported> reported = new ArrayList<>();
    List<CasReport> cas = new ArrayList<>();
    List<StubStats> stubs = new ArrayList<>();
    List<Integer> clients = new ArrayList<>();
    List<Down> down = new ArrayList<>();
    List<String> kinds = new ArrayList<>();
    List<Stopped> stopped = new ArrayList<>();
    List<Window> windows = new ArrayList<>();
    List<Snapshot> snapshots = new ArrayList<>();
    List<OwnerSeen> owners = new ArrayList<>();
    List<ServerSlot> servers = new ArrayList<>();
    List<FreshRun> fresh = new ArrayList<>();
    Map<String, Long> freshProbes = new TreeMap<>();
    List<StubTries> tries = new ArrayList<>();
    Unloads unloads = Unloads.NONE;
    boolean ended = false;
    for (String line : Files.readAllLines(dir.resolve(FILE), StandardCharsets.UTF_8)) {
      String[] t = line.split(" ");
      switch (t[0]) {
        case "seed" -> seed = t[1];
        case "sequence" -> sequences.add(new SequenceSpec(t[1], Long.parseLong(t[2]), Long.parseLong(t[3]),
            Integer.parseInt(t[4]), Long.parseLong(t[5]), Long.parseLong(t[6]),
            t.length > 8 && t[7].equals("strict") ? t[8] : null));
        case "owner" -> owners.add(new OwnerSeen(t[1], Long.parseLong(t[2]), t[3],
            t[4].equals("-") ? -1 : Long.parseLong(t[4])));
        case "fault" -> faults.add(new Fault(Long.parseLong(t[1]), t[2], Long.parseLong(t[3]),
            line.split(" ", 5).length == 5 ? line.split(" ", 5)[4] : ""));
        case "advance" -> advances.add(new Advance(t[1], Long.parseLong(t[2]), Long.parseLong(t[3]), t[4],
            t.length > 5 ? Long.parseLong(t[5]) : Long.MIN_VALUE, t.length > 6 ? t[6] : "?"));
        case "down" -> down.add(new Down(t[1], t[2], Long.parseLong(t[3]), Long.parseLong(t[4])));
        case "final-stripe" -> stripes.add(new FinalStripe(t[1], Integer.parseInt(t[2]),
            t[3].equals("-") ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(t[3])), Long.parseLong(t[4])));
        case "final-held" -> held.add(new FinalHeld(t[1], t[2], Long.parseLong(t[3])));
        case "reported" -> reported.add(new Reported(t[1], t[2], Long.parseLong(t[3]), Long.parseLong(t[4])));
        case "cas" -> cas.add(new CasReport(t[1], t[2], t.length > 3 && t[3].equals("-") ? null : counts(t, 3)));
        case "client" -> clients.add(Integer.parseInt(t[1]));
        case "stub" -> stubs.add(new StubStats(t[1], t[2], Long.parseLong(t[3]), Long.parseLong(t[4])));
        case "kinds" -> kinds.addAll(List.of(t[1].split(",")));
        case "stopped" -> stopped.add(new Stopped(t[1], Integer.parseInt(t[2]), Long.parseLong(t[3]),
            Long.parseLong(t[4]), Long.parseLong(t[5])));
        case "window" -> windows.add(new Window(t[1], t[2], Long.parseLong(t[3]), Long.parseLong(t[4]),
            line.split(" ", 6).length == 6 ? line.split(" ", 6)[5] : ""));
        case "counters" -> snapshots.add(new Snapshot(t[1], t[2], Integer.parseInt(t[3]), Long.parseLong(t[4]),
            counts(t, 5)));
        case "server" -> servers.add(new ServerSlot(t[1], Integer.parseInt(t[2]), t[3], t[4]));
        case "fresh" -> fresh.add(new FreshRun(t[1], Long.parseLong(t[2]), t[3], Long.parseLong(t[4]),
            Long.parseLong(t[5]), Long.parseLong(t[6]), fields(t, 7)));
        case "fresh-probes" -> fields(t, 1).forEach((k, v) -> freshProbes.put(k, Long.parseLong(v)));
        case "stub-try" -> tries.add(new StubTries(t[1], Long.parseLong(t[2]), Long.parseLong(t[3])));
        case "unloads" -> unloads = new Unloads(Long.parseLong(t[1]), Long.parseLong(t[2]), Long.parseLong(t[3]));
        case "end" -> ended = true;
        default -> { } // informational lines (e.g. "note"), ignored
      }
    }
    return new Contents(seed, sequences, faults, advances, stripes, held, reported, cas, stubs, clients, down, kinds,
        stopped, windows, snapshots, owners, ended, servers, fresh, freshProbes, tries, unloads);
  }

  /** {@code KEY=VALUE} tokens from index {@code from} on, in order. */
  private static Map<String, String> fields(String[] t, int from) {
    Map<String, String> fields = new LinkedHashMap<>();
    for (int i = from; i < t.length; i++) {
      int eq = t[i].indexOf('=');
      if (eq > 0) {
        fields.put(t[i].substring(0, eq), t[i].substring(eq + 1));
      }
    }
    return fields;
  }

  /** {@code TIER:OUTCOME=N} tokens from index {@code from} on. */
  private static Map<String, Long> counts(String[] t, int from) {
    Map<String, Long> counts = new TreeMap<>();
    for (int i = from; i < t.length; i++) {
      int eq = t[i].lastIndexOf('=');
      counts.merge(t[i].substring(0, eq), Long.parseLong(t[i].substring(eq + 1)), Long::sum);
    }
    return counts;
  }
}
