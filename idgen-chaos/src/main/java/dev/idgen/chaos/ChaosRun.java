package dev.idgen.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * One chaos run: the two-datacenter Cassandra (started here or already running), {@code servers} idgen
 * servers spread over dc1 and dc2 ({@link Fleet}), {@code clients} recording clients (half client stubs, half
 * raw {@code Allocate} callers; {@link Clients}), and one fault thread that follows a schedule drawn from the
 * seed ({@link FaultSchedule}), then the end ({@link Reckoning}). The rooms of a run:
 * <ul>
 *   <li>the fault kinds, one class each behind {@link Fault}, listed in {@link FaultKinds} (what each does is
 *       in its class: {@link ServerKill}, {@link CassandraPause}, {@link ClientKill}, {@link AdvanceBurstFault},
 *       {@link ServerRestart}, {@link RollingRestart}, {@link DcPartition}, {@link DcOneWay},
 *       {@link ServerIsolate}, {@link ReplicaFault}, {@link CassandraKill}, {@link OwnerKill},
 *       {@link OwnerIsolate}, {@link FreshAdvanceFault}; the clock steps {@link ClockServer} and
 *       {@link ClockCassandra}; the membership changes {@link Bootstrap}, {@link Decommission},
 *       {@link Replace}, {@link RepairCleanup} and {@link AddDatacenter}), given a {@link FaultContext};
 *   <li>what each fault may lose ({@link LossBounds}), the advance bursts that come along
 *       ({@link AdvanceBursts}), an owner kill's restarts ({@link Restarts}), the strict sequences' owners
 *       ({@link OwnerMonitor}), the sequences ({@link RunSequences});
 *   <li>the checker, which reads only the records ({@link Checker}).
 * </ul>
 * The servers run with a short {@code idgen.allocator.unload-idle-after} ({@link Settings#unloadIdleAfter()},
 * 2 s by default), so that sequences idle on a server (a fresh one between calls; a strict one on a server
 * that only forwards it, unless forwarding counts as use) are unloaded and loaded again under the faults.
 * Runs with strict clients ({@link Settings#strictClients()}, 0: none) also create
 * {@link RunSequences#STRICT} ({@code ORDERING_STRICT}, home datacenter dc1), on which strict clients make
 * 1-ID calls and small batches of raw {@code Allocate} on random servers, each call recorded whole
 * ({@link ChaosClient.Kind#STRICT}); the checker holds those calls to the strict order ({@link StrictOrder}).
 * On a netns cluster (three nodes per datacenter, every node and every server in a network namespace of its
 * own: {@link ChaosNetwork}), faults are also made with the network, nftables rules that drop packets by
 * address inside the namespaces, each held 3 s to {@link Settings#maxHold()} and healed by deleting them.
 * The kinds are chosen ({@link Settings#faultKinds()}, {@code --faults}; by default every kind the cluster
 * allows ({@link FaultKinds#defaultKinds}) but those only on request: {@code rolling-restart},
 * {@code clock-cassandra} and the membership changes). A run of planned restarts only is
 * judged strictly: the restarts may lose nothing (see {@link Checker}).
 *
 * <p>Threads: {@link #run} runs on the caller's thread, which is the fault thread; the clients, the bursts,
 * the restarts and the owner monitor run beside it (see each). A shutdown hook ({@link #emergencyStop})
 * never leaves a node frozen or a server running if the JVM ends mid-run; it reads the context through a
 * volatile field.
 */
final class ChaosRun {
  /** What a run is told; {@code maxHold} bounds how long a network, replica or Cassandra-kill fault holds. */
  record Settings(Duration duration, long seed, int servers, int clients, Path out, boolean useRunningCassandra,
      Path serverJar, Path repoRoot, long rate, long int32Space, List<String> faultKinds, Duration maxHold,
      int callScale, int strictClients, long strictRate, Duration strictOwnerLease, Duration unloadIdleAfter,
      int rounds, Map<String, Integer> perRound) {

    /**
     * {@code strictClients} strict clients (0: no strict sequence, and no owner faults), each at most
     * {@code strictRate} calls a second; {@code strictOwnerLease} the servers' {@code idgen.strict.owner-lease}
     * (null: their default, {@value #DEFAULT_OWNER_LEASE_MILLIS} ms); {@code unloadIdleAfter} the servers'
     * {@code idgen.allocator.unload-idle-after} (zero: never); {@code rounds} rounds of every kind before the
     * draws by weight, each with a kind of {@code perRound} that many times ({@link FaultSchedule}).
     */
    Settings {
      if (rounds < 1) {
        throw new IllegalArgumentException("rounds " + rounds + " (expected: >= 1)");
      }
      perRound = Map.copyOf(perRound);
      for (Map.Entry<String, Integer> e : perRound.entrySet()) {
        if (!faultKinds.contains(e.getKey()) || e.getValue() < 1) {
          throw new IllegalArgumentException("per round " + e.getKey() + "=" + e.getValue()
              + " (expected: a kind of the run " + faultKinds + ", at least 1)");
        }
      }
      if (unloadIdleAfter == null || unloadIdleAfter.isNegative()) {
        throw new IllegalArgumentException("unload idle after " + unloadIdleAfter + " (expected: >= 0)");
      }
      if (strictClients < 0 || strictRate < 1) {
        throw new IllegalArgumentException("strict clients " + strictClients + ", strict rate " + strictRate
            + " (expected: >= 0 and >= 1)");
      }
      if (strictClients == 0 && faultKinds.stream().anyMatch(FaultKinds.OWNER_KINDS::contains)) {
        throw new IllegalArgumentException("fault kinds " + FaultKinds.OWNER_KINDS
            + " need a strict sequence: strict clients > 0");
      }
      if (strictOwnerLease != null && strictOwnerLease.compareTo(Duration.ofSeconds(1)) < 0) {
        throw new IllegalArgumentException("strict owner lease " + strictOwnerLease + " (expected: >= 1s)");
      }
      if (callScale < 1 || callScale > ChaosClient.MAX_CALL_SCALE) {
        throw new IllegalArgumentException("call scale " + callScale + " (expected: 1 to " + ChaosClient.MAX_CALL_SCALE + ")");
      }
      faultKinds = List.copyOf(faultKinds);
      if (faultKinds.isEmpty() || !FaultKinds.NAMES.containsAll(faultKinds)) {
        throw new IllegalArgumentException("fault kinds " + faultKinds + ": expected some of " + FaultKinds.NAMES);
      }
      if (maxHold.compareTo(Duration.ofMillis(FaultContext.MIN_HOLD_MILLIS)) < 0) {
        throw new IllegalArgumentException("max hold " + maxHold + " (expected: >= " + FaultContext.MIN_HOLD_MILLIS
            + " ms)");
      }
    }
  }

  static final int DEFAULT_STRICT_CLIENTS = 2;
  static final long DEFAULT_STRICT_RATE = 400;
  /** The servers' default {@code idgen.strict.owner-lease}. */
  static final long DEFAULT_OWNER_LEASE_MILLIS = 10_000;
  static final Duration DEFAULT_MAX_HOLD = Duration.ofSeconds(20);
  /**
   * The servers' {@code idgen.allocator.unload-idle-after} (theirs: 1 h): short, so that their idle sweep
   * (every second at this setting) unloads sequences under the faults.
   */
  static final Duration DEFAULT_UNLOAD_IDLE_AFTER = Duration.ofSeconds(2);
  /**
   * The servers' {@code idgen.advance.client-lease-lifetime} (their ranges' {@code valid_for}): short, so that
   * an advance takes about 3 s (this plus a margin of max(1 s, a quarter)) and bursts stay short.
   */
  static final String CLIENT_LEASE_LIFETIME = "2s";
  /** How long clients may run beyond the run's duration if the first round is not over (then they are stopped). */
  private static final Duration CLIENT_GRACE = Duration.ofMinutes(30);

  private final Settings settings;
  private final RunClock clock = new RunClock();
  private final Narrator narrator = new Narrator(clock);
  private final ChaosCassandra cassandra;
  /** The launcher's cluster when this run starts and stops it, else null. */
  private final CassandraCluster launcher;
  /** The nodes' and servers' network namespaces, on a netns cluster. */
  private final Optional<ChaosNetwork> network;
  private final String keyspace;
  /** Made once the run's log is open (null before): read by the shutdown hook. */
  private volatile FaultContext context;
  private volatile boolean startedCassandra;

  /**
   * A run against {@code cassandra}; {@code launcher}, if not null, is started before and stopped after (unless
   * {@link Settings#useRunningCassandra()}).
   */
  ChaosRun(Settings settings, ChaosCassandra cassandra, CassandraCluster launcher) {
    this.settings = settings;
    this.cassandra = cassandra;
    this.launcher = launcher;
    this.network = cassandra.network();
    this.keyspace = "chaos_" + Long.toHexString(settings.seed() & 0xffff_ffffL) + "_"
        + Long.toHexString(System.currentTimeMillis() & 0xffff_ffL);
  }

  /** Runs, records everything in {@code out}, and returns once everything it started is stopped. */
  void run() throws Exception {
    Files.createDirectories(settings.out());
    clearEarlierRun();
    Thread hook = new Thread(this::emergencyStop, "chaos-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try (RunLog log = new RunLog(settings.out())) {
      FaultContext run = new FaultContext(settings, clock, log, cassandra, keyspace);
      context = run;
      log.line("seed", settings.seed());
      log.line("note", "keyspace", keyspace, "servers", settings.servers(), "clients", settings.clients(),
          "duration", settings.duration());
      log.line("kinds", String.join(",", settings.faultKinds()));
      try {
        start(run);
        new FaultSchedule(run).run(settings.duration().toNanos());
        new Reckoning(run).finish();
      } finally {
        stopEverything(run);
      }
    } finally {
      Runtime.getRuntime().removeShutdownHook(hook);
    }
  }

  /** Cassandra (unless running), the servers, the sequences, the clients and the owner monitor. */
  private void start(FaultContext run) throws Exception {
    if (launcher != null && !settings.useRunningCassandra()) {
      narrator.say("starting the two-datacenter Cassandra (" + CassandraCluster.SCRIPT + " start --topology "
          + launcher.topology() + ")");
      startedCassandra = true;
      launcher.start();
    }
    for (String dc : ChaosCassandra.DATACENTERS) {
      run.log().line("note", "datacenter", dc, "nodes", String.join(",", cassandra.nodes(dc)), "replication",
          cassandra.replication(dc), "contact-points", cassandra.contactPoint(dc));
    }
    if (settings.faultKinds().contains(ClockCassandra.KIND)) {
      ClockCassandra.prepare(run); // a restart: before the load, which makes it two or three times longer
    }
    run.fleet().startAll(settings, cassandra, keyspace);
    run.sequences().create(settings, Fleet.admin(run.fleet().get(0), 60));
    // The clients run until the reckoning stops them; this is only their safety net. The first round always
    // completes, and can outlast a short run by minutes (a restarted Cassandra node takes up to 4).
    long deadlineNanos = System.nanoTime() + settings.duration().toNanos() + CLIENT_GRACE.toNanos();
    run.clients().deadline(deadlineNanos);
    for (int i = 0; i < settings.clients(); i++) {
      run.clients().start(i % 2 == 0 ? ChaosClient.Kind.STUB : ChaosClient.Kind.RAW);
    }
    for (int i = 0; i < settings.strictClients(); i++) {
      run.clients().start(ChaosClient.Kind.STRICT);
    }
    run.owners().start(deadlineNanos);
    narrator.say("running for " + settings.duration() + " with " + settings.clients() + " clients"
        + (settings.strictClients() > 0 ? " and " + settings.strictClients() + " strict clients" : ""));
  }

  /** However the run ended: nothing left cut, frozen or running. */
  private void stopEverything(FaultContext run) throws Exception {
    run.bursts().shutdownNow();
    run.owners().stop();
    if (!run.restarts().shutdownAndWait()) {
      narrator.say("an owner kill's restart did not stop within 30 s");
    }
    network.ifPresent(ChaosNetwork::healAll);
    cassandra.resumeAll();
    FreshAdvance f = run.freshOrNull();
    if (f != null) {
      try {
        f.close();
      } catch (InterruptedException e) {
        f.thawAll(); // what matters here: no server left frozen; the rest is stopped below
        Thread.currentThread().interrupt();
      }
    }
    run.closePoolWatch();
    run.clients().killAll();
    run.fleet().closeAll();
    if (network.isPresent()) {
      network.get().removeHosts();
    }
    CassandraClocks clocks = run.cassandraClocksOrNull();
    if (clocks != null) {
      // A cluster this run stops needs nothing more; one that outlives it gets its nodes back on the real clock.
      if (!startedCassandra) {
        narrator.say("starting cassandra " + clocks.nodes() + " again on the real clock");
      }
      clocks.close(!startedCassandra);
    }
    if (startedCassandra) {
      launcher.stop();
    }
  }

  /**
   * Removes what an earlier run left in the output directory (its record and its servers' logs): the checker
   * reads every {@code client-*.bin} there, and must see this run's only.
   */
  private void clearEarlierRun() throws IOException {
    List<Path> stale = new ArrayList<>();
    try (Stream<Path> files = Files.list(settings.out())) {
      files.filter(p -> p.getFileName().toString().matches("client-\\d+\\.bin")
          || p.getFileName().toString().equals(RunLog.FILE)).forEach(stale::add);
    }
    Path serverLogs = settings.out().resolve("servers");
    if (Files.isDirectory(serverLogs)) {
      try (Stream<Path> files = Files.list(serverLogs)) {
        files.filter(p -> p.getFileName().toString().matches("server-\\d+-\\d+\\.log")).forEach(stale::add);
      }
    }
    for (Path p : stale) {
      Files.delete(p);
    }
    if (!stale.isEmpty()) {
      narrator.say("removed " + stale.size() + " files of an earlier run from " + settings.out());
    }
  }

  /** The shutdown hook: never leave a node frozen or a server running. */
  private void emergencyStop() {
    FaultContext run = context;
    if (run != null) {
      FreshAdvance f = run.freshOrNull();
      if (f != null) {
        f.thawAll(); // a frozen server would not die of SIGTERM
      }
      run.bursts().shutdownNow();
      run.restarts().shutdownNow();
      run.owners().signalStop();
      CassandraClocks clocks = run.cassandraClocksOrNull();
      if (clocks != null) {
        clocks.zeroAll(); // no time to restart them; their clocks at least are real again
      }
    }
    network.ifPresent(ChaosNetwork::healAll);
    cassandra.resumeAll();
    if (run != null) {
      run.fleet().killAll();
    }
    if (network.isPresent()) {
      try {
        network.get().removeHosts();
      } catch (IOException | InterruptedException e) {
        System.err.println("chaos: could not remove the servers' namespaces: " + e);
      }
    }
    if (startedCassandra) {
      try {
        launcher.stop();
      } catch (IOException | InterruptedException e) {
        System.err.println("chaos: could not stop Cassandra: " + e);
      }
    }
  }
}
