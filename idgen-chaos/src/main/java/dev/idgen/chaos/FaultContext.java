package dev.idgen.chaos;

import java.util.Optional;
import java.util.Random;

/**
 * What a fault is given ({@link Fault#inject}): the run's settings and seeded random, its clock, log and
 * voice, the cluster ({@link #cassandra()}, {@link #network()}), the servers ({@link #fleet()}), the clients,
 * the sequences, the loss bounds, the advance bursts, the restarts under way and the owner monitor; and the
 * helpers faults share: {@link #hold} (apply, hold, heal, log), the number of the fault under way, the
 * fresh-advance episodes' helper, the redefine kind's ({@link #redefinitions()}), the membership changes' state
 * ({@link #membership()}) and the Cassandra nodes under a fake clock ({@link #cassandraClocks()}).
 *
 * <p>Threads: one per run, made by {@link ChaosRun}. The random and the fault count are the fault thread's
 * only (the schedule must stay the seed's); the fault's number is written by the fault thread and read by an
 * owner kill's restart too (volatile); the fresh-advance helper, the redefine kind's and the Cassandra clocks
 * are made by the fault thread and read by the shutdown hook or the end (volatile); the membership state is the fault thread's only. What it holds is immutable or thread-safe (see each).
 */
final class FaultContext {
  /** A step of a fault that may fail (a script, a signal) or be interrupted. */
  interface Step {
    void run() throws Exception;
  }

  /** The shortest a network, replica or Cassandra-kill fault holds. */
  static final long MIN_HOLD_MILLIS = 3_000;

  private final ChaosRun.Settings settings;
  private final Random random;
  private final RunClock clock;
  private final RunLog log;
  private final Narrator narrator;
  private final ChaosCassandra cassandra;
  /** The nodes' and servers' network namespaces, on a netns cluster. */
  private final Optional<ChaosNetwork> network;
  private final String keyspace;
  private final Fleet fleet;
  private final RunSequences sequences;
  private final Clients clients;
  private final LossBounds bounds;
  private final AdvanceBursts bursts;
  private final Restarts restarts = new Restarts();
  private final OwnerMonitor owners;
  /**
   * The number of the fault thread's fault under way (from 0; -1 before the first). Written by the fault
   * thread only; read by an owner kill's restart too.
   */
  private volatile int faultNo = -1;
  /** Faults injected, the bursts that come along with the faults that hold included (the fault thread's). */
  private int injected;
  /** The fresh-advance episodes' calls and prober (null until the first); the fault thread makes it. */
  private volatile FreshAdvance fresh;
  /** The redefine kind's sequences and calls (null until its first injection); the fault thread makes it. */
  private volatile Redefinitions redefinitions;
  /** Reads the pool rows for the fresh-advance episodes; opened at the first. */
  private volatile PoolWatch poolWatch;
  /** The membership changes' state (null until the first; the fault thread's). */
  private Membership membership;
  /** The Cassandra nodes under a fake clock (null until the first clock-cassandra); read by the shutdown hook. */
  private volatile CassandraClocks cassandraClocks;

  FaultContext(ChaosRun.Settings settings, RunClock clock, RunLog log, ChaosCassandra cassandra, String keyspace) {
    this.settings = settings;
    this.random = new Random(settings.seed());
    this.clock = clock;
    this.log = log;
    this.narrator = new Narrator(clock);
    this.cassandra = cassandra;
    this.network = cassandra.network();
    this.keyspace = keyspace;
    this.fleet = new Fleet(log, narrator);
    this.sequences = new RunSequences(log);
    this.clients = new Clients(settings, clock, log, fleet, sequences);
    this.bounds = new LossBounds(settings, sequences, clients, fleet);
    this.bursts = new AdvanceBursts(fleet, sequences, log, clock, narrator);
    this.owners = new OwnerMonitor(fleet, sequences, log, clock, narrator);
  }

  ChaosRun.Settings settings() {
    return settings;
  }

  /** The schedule's random, seeded: the fault thread's only, drawn in a fixed order. */
  Random random() {
    return random;
  }

  RunClock clock() {
    return clock;
  }

  RunLog log() {
    return log;
  }

  ChaosCassandra cassandra() {
    return cassandra;
  }

  /** The nodes' and servers' network namespaces, on a netns cluster. */
  Optional<ChaosNetwork> network() {
    return network;
  }

  String keyspace() {
    return keyspace;
  }

  Fleet fleet() {
    return fleet;
  }

  RunSequences sequences() {
    return sequences;
  }

  Clients clients() {
    return clients;
  }

  LossBounds bounds() {
    return bounds;
  }

  AdvanceBursts bursts() {
    return bursts;
  }

  Restarts restarts() {
    return restarts;
  }

  OwnerMonitor owners() {
    return owners;
  }

  void say(String message) {
    narrator.say(message);
  }

  /** The fault under way's number (-1 before the first). */
  int faultNo() {
    return faultNo;
  }

  /** The fault under way's number, as {@code window} and {@code counters} lines label it. */
  String faultLabel() {
    return Integer.toString(faultNo);
  }

  /** The fault under way's nftables tag. */
  String tag() {
    return "fault-" + faultNo;
  }

  /** The next fault begins (the fault thread's): its number. */
  int nextFault() {
    int no = faultNo + 1; // the fault thread is the only writer
    faultNo = no;
    return no;
  }

  /** One more fault injected (a fault, or a burst that came along with one). */
  void counted() {
    injected++;
  }

  int injected() {
    return injected;
  }

  /** Logs {@code node}'s reserves (at a kill), its counters and compare-and-sets ({@link Fleet#report}). */
  void report(ServerNode node, String when) {
    fleet.report(node, when, when.equals("end") ? "end" : faultLabel(), sequences.all());
  }

  /** A new incarnation of {@code node} started during the fault under way: its counters start at 0. */
  void started(ServerNode node) {
    fleet.started(node, faultLabel());
  }

  /** How long a network, replica or Cassandra fault holds: 3 s to {@link ChaosRun.Settings#maxHold()}, drawn. */
  long holdMillis() {
    long max = settings.maxHold().toMillis();
    return MIN_HOLD_MILLIS + (max > MIN_HOLD_MILLIS ? random.nextInt((int) (max - MIN_HOLD_MILLIS + 1)) : 0);
  }

  /**
   * A fault that holds: logs it ({@code fault}), applies it, starts a burst (if {@code withBurst}) at a random
   * moment in the first half of {@code holdMillis}, waits out the rest, and heals it in a {@code finally},
   * logging its time in force ({@code down} and {@code window}) however it ended.
   */
  void hold(String kind, long bound, String what, String detail, long holdMillis, boolean withBurst,
      Step apply, Step heal) throws Exception {
    long burstAfter = withBurst ? random.nextInt((int) Math.max(1, holdMillis / 2)) : -1;
    AdvanceBursts.Burst burst = withBurst ? bursts.plan(kind + ":" + what, faultNo, random) : null;
    // The cursor is read before the fault: read during it, it could wait for a node, and the burst start late.
    long cursor = burst == null ? 0 : bursts.cursorNow(burst.seq(), burst.asked());
    log.fault(clock.millis(), kind, bound, detail + " ms=" + holdMillis);
    say(kind + " " + detail + " for " + holdMillis + " ms");
    long from = clock.millis();
    try {
      apply.run();
      if (burst != null) {
        Thread.sleep(burstAfter);
        bursts.start(burst, cursor);
        counted();
      }
      Thread.sleep(holdMillis - Math.max(0, burstAfter));
    } finally {
      try {
        heal.run();
      } finally {
        long to = clock.millis();
        log.line("down", kind, what, from, to);
        log.window(faultLabel(), kind, from, to, detail);
      }
    }
  }

  /** The fresh-advance episodes' helper, made at the first (its record file is a client's). */
  FreshAdvance freshAdvance() {
    FreshAdvance f = fresh;
    if (f == null) {
      poolWatch = new PoolWatch(cassandra, keyspace);
      f = new FreshAdvance(clients.nextId(), settings.out(), log, clock, fleet.nodes(), poolWatch,
          settings.unloadIdleAfter(), bursts.pool(), settings.seed() * 13 + 5);
      fresh = f;
    }
    return f;
  }

  /** The fresh-advance helper if an episode made it, else null. */
  FreshAdvance freshOrNull() {
    return fresh;
  }

  /** The redefine kind's sequences and recorded calls, made at its first injection (its record file is a client's). */
  Redefinitions redefinitions() {
    Redefinitions r = redefinitions;
    if (r == null) {
      r = new Redefinitions(clients.nextId(), settings.out(), log, clock, fleet.nodes(), bursts.pool());
      redefinitions = r;
    }
    return r;
  }

  /** The redefine kind's helper if an injection made it, else null. */
  Redefinitions redefinitionsOrNull() {
    return redefinitions;
  }

  /** The membership changes' state, made at the first (a netns cluster of the launcher: see {@link Membership}). */
  Membership membership() {
    if (membership == null) {
      membership = new Membership((CassandraCluster) cassandra);
    }
    return membership;
  }

  /** The Cassandra nodes under a fake clock, made at the first clock-cassandra fault (their files in the run's out). */
  CassandraClocks cassandraClocks() {
    CassandraClocks c = cassandraClocks;
    if (c == null) {
      c = new CassandraClocks((CassandraCluster) cassandra, settings.out().resolve("cassandra-clocks"));
      cassandraClocks = c;
    }
    return c;
  }

  /** The Cassandra nodes under a fake clock, or null if no clock-cassandra fault came yet. */
  CassandraClocks cassandraClocksOrNull() {
    return cassandraClocks;
  }

  /** Closes the pool rows' reader, if an episode opened it. */
  void closePoolWatch() {
    PoolWatch w = poolWatch;
    if (w != null) {
      w.close();
    }
  }
}
