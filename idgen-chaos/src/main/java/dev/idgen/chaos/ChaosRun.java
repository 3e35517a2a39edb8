package dev.idgen.chaos;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.DatacenterReserve;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.Ordering;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.api.v1.StripeState;
import dev.idgen.chaos.RunLog.SequenceSpec;
import dev.idgen.client.IdSourceStats;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One chaos run: the two-datacenter Cassandra (started here or already running), {@code servers} idgen
 * servers spread over dc1 and dc2, {@code clients} recording clients (half client stubs, half raw
 * {@code Allocate} callers), and one fault thread that follows a schedule drawn from the seed:
 * <ul>
 *   <li>{@code server-kill}: {@code kill -9} of a random server, restarted on the same port after 0.5–2 s;
 *   <li>{@code cassandra-pause}: SIGSTOP of every node of dc1 or dc2 for 2–6 s, then SIGCONT ({@code docker
 *       pause} and {@code unpause} when ChaosIT's cluster runs in containers; always resumed: also in a
 *       {@code finally} and a shutdown hook). Shorter than the servers' {@code cas-deadline} (10 s), so every
 *       compare-and-set with an unknown outcome is read back and resolved once the nodes answer;
 *   <li>{@code client-kill}: a random client dies mid-stream ({@link ChaosClient#kill()}) and a new one takes
 *       its place;
 *   <li>{@code advance-burst}: 3–6 concurrent {@code AdvanceSequence} calls on random servers, floors a little
 *       above the sequence's current cursors (so every ID cached anywhere, in a pool, a server or a stub's
 *       lease, is at or below them). A burst runs on threads of its own, at any time: the fault thread goes
 *       on meanwhile, and every fault that holds (a kill, a pause, a cut, a Cassandra kill) also starts one
 *       while it holds (always in the first round, then one time in three). An advance returns OK only when
 *       every live server confirmed the floor and the stubs' leases from before have expired
 *       ({@code valid_for}, here {@value #CLIENT_LEASE_LIFETIME}); those that cannot (a datacenter cut off
 *       cannot be trimmed, a dead or isolated server has not confirmed) fail, are recorded as failed, and
 *       promise nothing;
 *   <li>{@code server-restart}: a planned restart of a random server: SIGTERM, wait until it has exited (its
 *       shutdown gives its reserves back to its datacenter's pool), start it again on the same port, wait
 *       until it reports SERVING;
 *   <li>{@code rolling-restart}: every server in turn, as {@code server-restart}, the next one once the
 *       previous one is SERVING again (not in the default kinds: it takes half a minute or more);
 *   <li>{@code cassandra-kill}: {@code kill -9} of one Cassandra node, started again on its data after 1–5 s
 *       (its commit log is replayed), held until it serves CQL again;
 *   <li>{@code owner-kill}: {@code kill -9} of the server that owns the strict sequence ({@link #STRICT}: its
 *       owner as {@code GetSequence} names it, by its gRPC target), restarted after 0.5–2 s as for a server
 *       kill, but on a thread of its own: the fault thread goes on meanwhile (a server's start takes tens of
 *       seconds on a busy machine), and waits for the restart only before a fault that starts, stops, kills or
 *       cuts a server, and at the end. Its window runs from the kill to the restarted server's SERVING.
 *   <li>{@code fresh-advance}: an {@code AdvanceSequence} right after a sequence is created, while a server of
 *       each datacenter loads it and makes its first refill, at a floor inside the first DC block; in two
 *       episodes of three the loaders are frozen (SIGSTOP) as soon as the global cursor shows a datacenter's
 *       first take, until both pools show the floor; then runtimes loaded after the advance (other servers, servers that unloaded it
 *       as idle, servers restarted later) allocate from it ({@link FreshAdvance}). The pool rows are read
 *       meanwhile, over CQL, for the evidence of the race ({@code fresh} lines).
 * </ul>
 * The servers run with a short {@code idgen.allocator.unload-idle-after} ({@link Settings#unloadIdleAfter()},
 * 2 s by default), so that sequences idle on a server (a fresh one between calls; a strict one on a server
 * that only forwards it, unless forwarding counts as use) are unloaded and loaded again under the faults.
 * Runs with strict clients ({@link Settings#strictClients()}, 0: none) also create {@link #STRICT}
 * ({@code ORDERING_STRICT}, home datacenter dc1), on which strict clients make 1-ID calls and small batches of
 * raw {@code Allocate} on random servers, each call recorded whole ({@link ChaosClient.Kind#STRICT}); a
 * thread polls its owner every 500 ms ({@code owner} lines in {@code run.txt}: the take-overs). The checker
 * holds those calls to the strict order ({@link StrictOrder}).
 * On a netns cluster (three nodes per datacenter, every node and every server in a network namespace of its
 * own: {@link ChaosNetwork}), faults are also made with the network, nftables rules that drop packets by
 * address inside the namespaces, each held 3 s to {@link Settings#maxHold()} and healed by deleting them:
 * <ul>
 *   <li>{@code dc-partition}: dc1 | dc2, both directions (every dc1 node drops what comes from and goes to
 *       dc2's nodes, and the other way round): neither side has a SERIAL quorum for the global cursors;
 *   <li>{@code dc-oneway}: only one direction, dc1 → dc2 or dc2 → dc1 (drawn): the sender's nodes drop what
 *       they send to the other datacenter's (TCP connections then fail both ways: their answers are lost);
 *   <li>{@code server-isolate}: a server cut off from its own datacenter's nodes (rules in its namespace),
 *       while the clients, in the root namespace, still reach it;
 *   <li>{@code owner-isolate}: the strict sequence's owner cut off, drawn: from every Cassandra node only
 *       (clients and the other servers still reach it and forward to it: it must stop serving when its lease
 *       runs out, before another server takes over), or from everything (every packet of its link). In the
 *       first round, and then one time in two, held long enough for a take-over (1.5 owner leases + 1 s);
 *       else as the other network faults;
 *   <li>{@code replica-one}, {@code replica-two}: one, or two, of the three replicas of a datacenter isolated
 *       (every packet of their link dropped) or paused (SIGSTOP), drawn: LOCAL_QUORUM holds with one, is lost
 *       with two. Applied once the datacenter's servers are seen refilling (their compare-and-set count
 *       moving), and a small-block sequence ({@code chaos-small}) keeps refills frequent, so that rounds
 *       are caught half accepted.
 * </ul>
 * The kinds are chosen ({@link Settings#faultKinds()}, {@code --faults}; by default every kind the cluster
 * allows ({@link #injectable}) but {@code rolling-restart}). The first round injects each chosen kind once, in
 * an order drawn from the seed; then kinds are drawn at random ({@link #WEIGHTS}). A run of planned restarts
 * only is judged strictly: the restarts may lose nothing (see {@link Checker}). The checker holds every range
 * whose call started, and every batch a stub was asked for, after an advance returned OK to that advance's
 * floor. Every fault's time in force is logged ({@code window}), and every live server's counters at the
 * start of each fault ({@code counters}), for the checker's table by kind.
 *
 * <p><b>The lost-ID bound.</b> IDs leave the global cursors and are then either received by a client, still
 * held (a datacenter pool, a live server's memory) at the end, or lost. Each fault may lose at most:
 * <ul>
 *   <li>server-kill: per sequence and stripe, one node block (a server's pool never holds more than one
 *       block) plus one DC block (a refill taken from the global cursor but not yet appended to the
 *       datacenter's pool); plus whatever its open calls had been given and not delivered, at most every
 *       client's one call in flight per sequence ({@code stubs × sequences × max lease + raw callers × max
 *       count});
 *   <li>cassandra-pause: per live server, twice (one operation that fails at its deadline and its retry) one
 *       node block plus one DC block per sequence and stripe, for compare-and-sets whose outcome could not be
 *       resolved in time;
 *   <li>the network faults, the replica faults and cassandra-kill: the same per server they can reach (every
 *       server; the isolated one for server-isolate), once per second held plus twice (an unresolved outcome
 *       takes at least a second: the nodes' CAS contention timeout), counting a Cassandra kill as held 30 s
 *       beyond its downtime (its restart);
 *   <li>client-kill: its open calls ({@code sequences × max lease} for a stub, {@code max count} for a raw
 *       caller): ranges sent and never read;
 *   <li>advance-burst: nothing counted: IDs at or below the highest floor are excluded from the reckoning,
 *       since an advance drops them on purpose;
 *   <li>server-restart, rolling-restart: nothing: a planned stop gives its reserves back.
 * </ul>
 * Calls that end CANCELLED or DEADLINE_EXCEEDED (timeouts during faults, stubs closed at the end) add what
 * they asked for and did not receive (the checker reads this from the records).
 */
final class ChaosRun {
  /** What a run is told; {@code maxHold} bounds how long a network, replica or Cassandra-kill fault holds. */
  record Settings(Duration duration, long seed, int servers, int clients, Path out, boolean useRunningCassandra,
      Path serverJar, Path repoRoot, long rate, long int32Space, List<String> faultKinds, Duration maxHold,
      int callScale, int strictClients, long strictRate, Duration strictOwnerLease, Duration unloadIdleAfter) {

    /** As before fault kinds could be chosen: the kinds every cluster allows ({@link #DEFAULT_FAULTS}). */
    Settings(Duration duration, long seed, int servers, int clients, Path out, boolean useRunningCassandra,
        Path serverJar, Path repoRoot, long rate, long int32Space) {
      this(duration, seed, servers, clients, out, useRunningCassandra, serverJar, repoRoot, rate, int32Space,
          DEFAULT_FAULTS, DEFAULT_MAX_HOLD, 1, DEFAULT_STRICT_CLIENTS, DEFAULT_STRICT_RATE, null,
          DEFAULT_UNLOAD_IDLE_AFTER);
    }

    /**
     * {@code strictClients} strict clients (0: no strict sequence, and no owner faults), each at most
     * {@code strictRate} calls a second; {@code strictOwnerLease} the servers' {@code idgen.strict.owner-lease}
     * (null: their default, {@value #DEFAULT_OWNER_LEASE_MILLIS} ms); {@code unloadIdleAfter} the servers'
     * {@code idgen.allocator.unload-idle-after} (zero: never).
     */
    Settings {
      if (unloadIdleAfter == null || unloadIdleAfter.isNegative()) {
        throw new IllegalArgumentException("unload idle after " + unloadIdleAfter + " (expected: >= 0)");
      }
      if (strictClients < 0 || strictRate < 1) {
        throw new IllegalArgumentException("strict clients " + strictClients + ", strict rate " + strictRate
            + " (expected: >= 0 and >= 1)");
      }
      if (strictClients == 0 && faultKinds.stream().anyMatch(OWNER_KINDS::contains)) {
        throw new IllegalArgumentException("fault kinds " + OWNER_KINDS + " need a strict sequence: strict clients > 0");
      }
      if (strictOwnerLease != null && strictOwnerLease.compareTo(Duration.ofSeconds(1)) < 0) {
        throw new IllegalArgumentException("strict owner lease " + strictOwnerLease + " (expected: >= 1s)");
      }
      if (callScale < 1 || callScale > ChaosClient.MAX_CALL_SCALE) {
        throw new IllegalArgumentException("call scale " + callScale + " (expected: 1 to " + ChaosClient.MAX_CALL_SCALE + ")");
      }
      faultKinds = List.copyOf(faultKinds);
      if (faultKinds.isEmpty() || !KINDS.containsAll(faultKinds)) {
        throw new IllegalArgumentException("fault kinds " + faultKinds + ": expected some of " + KINDS);
      }
      if (maxHold.compareTo(Duration.ofMillis(MIN_HOLD_MILLIS)) < 0) {
        throw new IllegalArgumentException("max hold " + maxHold + " (expected: >= " + MIN_HOLD_MILLIS + " ms)");
      }
    }
  }

  /** Every fault kind. */
  static final List<String> KINDS = List.of("server-kill", "cassandra-pause", "client-kill", "advance-burst",
      "server-restart", "rolling-restart", "dc-partition", "dc-oneway", "server-isolate", "replica-one",
      "replica-two", "cassandra-kill", "owner-kill", "owner-isolate", "fresh-advance");
  /** Kinds aimed at the owner of a strict sequence: only in runs with one (strict clients > 0). */
  static final Set<String> OWNER_KINDS = Set.of("owner-kill", "owner-isolate");
  /**
   * Kinds that start, stop, kill, freeze or cut a server, or need every server up (fresh-advance: its loaders
   * and its advance): they wait first for an owner kill's restart under way.
   */
  private static final Set<String> SERVER_KINDS = Set.of("server-kill", "server-restart", "rolling-restart",
      "server-isolate", "owner-kill", "owner-isolate", "fresh-advance");
  static final int DEFAULT_STRICT_CLIENTS = 2;
  static final long DEFAULT_STRICT_RATE = 400;
  /** The servers' default {@code idgen.strict.owner-lease}. */
  static final long DEFAULT_OWNER_LEASE_MILLIS = 10_000;
  /** The strict sequence (ORDERING_STRICT, one stripe, owned in dc1). */
  static final String STRICT = "chaos-strict";
  static final String STRICT_HOME = "dc1";
  /** The kinds every cluster allows (the first five of {@link #KINDS}; rolling-restart is never a default). */
  static final List<String> DEFAULT_FAULTS = List.of("server-kill", "cassandra-pause", "client-kill",
      "advance-burst", "server-restart");
  /** Kinds made with nftables rules in the namespaces (replica faults: when drawn "isolate"). */
  static final Set<String> NETWORK_KINDS = Set.of("dc-partition", "dc-oneway", "server-isolate", "replica-one",
      "replica-two", "owner-isolate");
  /** Faults that hold for a while and bring an advance burst along (first round always, then one in three). */
  private static final Set<String> WITH_BURST = Set.of("server-kill", "cassandra-pause", "dc-partition",
      "dc-oneway", "server-isolate", "replica-one", "replica-two", "cassandra-kill", "owner-kill",
      "owner-isolate");
  /**
   * How often each kind is drawn after the first round, relative to the others of the run. The five default
   * kinds keep the proportions they always had; partitions and Cassandra kills are drawn often enough that a
   * run of 100 faults has about 20 of the first and 15 of the second.
   */
  static final Map<String, Integer> WEIGHTS = Map.ofEntries(Map.entry("server-kill", 3),
      Map.entry("cassandra-pause", 2), Map.entry("client-kill", 3), Map.entry("advance-burst", 2),
      Map.entry("server-restart", 1), Map.entry("rolling-restart", 1), Map.entry("dc-partition", 4),
      Map.entry("dc-oneway", 2), Map.entry("server-isolate", 2), Map.entry("replica-one", 2),
      Map.entry("replica-two", 2), Map.entry("cassandra-kill", 4), Map.entry("owner-kill", 2),
      Map.entry("owner-isolate", 2), Map.entry("fresh-advance", 3));
  /** Planned stops: in a run of only these the restarts must lose nothing ({@code restart_lost} = 0). */
  static final Set<String> GRACEFUL = Set.of("server-restart", "rolling-restart");
  /** How long a graceful stop may take (SIGTERM to exit) before the server is killed and the run fails. */
  static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);
  static final Duration DEFAULT_MAX_HOLD = Duration.ofSeconds(20);
  /**
   * The servers' {@code idgen.allocator.unload-idle-after} (theirs: 1 h): short, so that their idle sweep
   * (every second at this setting) unloads sequences under the faults.
   */
  static final Duration DEFAULT_UNLOAD_IDLE_AFTER = Duration.ofSeconds(2);
  /** How long clients may run beyond the run's duration if the first round is not over (then they are stopped). */
  private static final Duration CLIENT_GRACE = Duration.ofMinutes(30);
  private static final long MIN_HOLD_MILLIS = 3_000;

  /**
   * The kinds {@code cassandra} cannot take, each with the reason; the others can be injected. Network kinds
   * need its network namespaces; replica kinds a datacenter of three nodes; a Cassandra kill nodes whose JVMs
   * the harness may kill and start.
   */
  static Map<String, String> injectable(ChaosCassandra cassandra) {
    Map<String, String> not = new LinkedHashMap<>();
    boolean network = cassandra.network().isPresent();
    boolean threeNodes = ChaosCassandra.DATACENTERS.stream().anyMatch(dc -> cassandra.nodes(dc).size() >= 3);
    for (String kind : KINDS) {
      if (kind.startsWith("replica-") && !threeNodes) {
        not.put(kind, "no datacenter has three replicas (one node per datacenter)");
      } else if (NETWORK_KINDS.contains(kind) && !kind.startsWith("replica-") && !network) {
        not.put(kind, "no network namespaces: " + cassandra.whyNoNetwork());
      } else if (kind.equals("cassandra-kill") && !cassandra.canKill()) {
        not.put(kind, cassandra.whyNoKill());
      }
    }
    return not;
  }

  /** Every kind {@code cassandra} can take but rolling-restart: what a run injects unless told otherwise. */
  static List<String> defaultKinds(ChaosCassandra cassandra) {
    Map<String, String> not = injectable(cassandra);
    return KINDS.stream().filter(k -> !k.equals("rolling-restart") && !not.containsKey(k)).toList();
  }

  private static final long INT32_MAX = 2_147_483_647L;
  /** The sequence with small blocks (frequent refills). */
  static final String SMALL = "chaos-small";
  private static final long SMALL_NODE_BLOCK = 200;
  private static final long SMALL_DC_BLOCK = 1_000;
  private static final long STRICT_NODE_BLOCK = 1_000;
  private static final long STRICT_DC_BLOCK = 10_000;
  /**
   * The servers' {@code idgen.advance.client-lease-lifetime} (their ranges' {@code valid_for}): short, so that
   * an advance takes about 3 s (this plus a margin of max(1 s, a quarter)) and bursts stay short.
   */
  static final String CLIENT_LEASE_LIFETIME = "2s";
  /** The copy of the server jar every incarnation runs from, in the run's {@code servers} directory. */
  private static final String SERVER_JAR_COPY = "idgen-server.jar";
  /** How long the fault thread waits for an owner kill's restart (three starts of at most 120 s each). */
  private static final long RESTART_WAIT_SECONDS = 400;
  /** How long the end of a run waits for the advance bursts still under way. */
  private static final long BURST_WAIT_SECONDS = 120;

  private final Settings settings;
  private final RunClock clock = new RunClock();
  private final Random random;
  private final ChaosCassandra cassandra;
  /** The launcher's cluster when this run starts and stops it, else null. */
  private final CassandraCluster launcher;
  private final List<ServerNode> servers = new ArrayList<>();
  private final List<ChaosClient> clients = new CopyOnWriteArrayList<>();
  /** Written by the main and fault threads (fresh-advance adds its sequences); read at the end too. */
  private final List<SequenceSpec> sequences = new CopyOnWriteArrayList<>();
  private final String keyspace;
  private RunLog log;
  private int nextClientId;
  private int faults;
  /** Advance bursts run here, beside the fault thread. */
  private final ExecutorService advancePool = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "chaos-advance");
    t.setDaemon(true);
    return t;
  });
  private final List<Future<?>> bursts = new ArrayList<>();
  /** The fresh-advance episodes' calls and prober (null until the first); the fault thread makes it. */
  private volatile FreshAdvance fresh;
  /** Reads the pool rows for the fresh-advance episodes; opened at the first. */
  private PoolWatch poolWatch;
  /** Owner kills' restarts run here, beside the fault thread ({@link #awaitRestarts}). */
  private final ExecutorService restarts = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "chaos-restart");
    t.setDaemon(true);
    return t;
  });
  /** The restarts under way (the fault thread's only). */
  private final List<Future<?>> pendingRestarts = new ArrayList<>();
  /** The thread that polls the strict sequences' owners, while the clients run; null without them. */
  private Thread ownerMonitor;
  private volatile boolean monitorStopped;
  /** The highest floor of each sequence that an advance tried and failed to set: completed at the end. */
  private final Map<String, Long> unfinishedFloors = new ConcurrentHashMap<>();
  /** The highest cursor each sequence was seen at, for a burst whose GetSequence fails. */
  private final Map<String, Long> lastCursor = new ConcurrentHashMap<>();
  private long deadlineNanos;
  private boolean startedCassandra;
  /** The nodes' and servers' network namespaces, on a netns cluster. */
  private final Optional<ChaosNetwork> network;
  /**
   * The number of the fault thread's fault under way (from 0; -1 before the first). Written by the fault
   * thread only; read by an owner kill's restart too.
   */
  private volatile int faultNo = -1;

  /**
   * A run against {@code cassandra}; {@code launcher}, if not null, is started before and stopped after (unless
   * {@link Settings#useRunningCassandra()}).
   */
  ChaosRun(Settings settings, ChaosCassandra cassandra, CassandraCluster launcher) {
    this.settings = settings;
    this.random = new Random(settings.seed());
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
    try (RunLog runLog = new RunLog(settings.out())) {
      this.log = runLog;
      log.line("seed", settings.seed());
      log.line("note", "keyspace", keyspace, "servers", settings.servers(), "clients", settings.clients(),
          "duration", settings.duration());
      log.line("kinds", String.join(",", settings.faultKinds()));
      try {
        if (launcher != null && !settings.useRunningCassandra()) {
          say("starting the two-datacenter Cassandra (" + CassandraCluster.SCRIPT + " start --topology "
              + launcher.topology() + ")");
          startedCassandra = true;
          launcher.start();
        }
        for (String dc : ChaosCassandra.DATACENTERS) {
          log.line("note", "datacenter", dc, "nodes", String.join(",", cassandra.nodes(dc)), "replication",
              cassandra.replication(dc), "contact-points", cassandra.contactPoint(dc));
        }
        startServers();
        createSequences();
        long runNanos = settings.duration().toNanos();
        // The clients run until finish() stops them; this is only their safety net. The first round always
        // completes, and can outlast a short run by minutes (a restarted Cassandra node takes up to 4).
        deadlineNanos = System.nanoTime() + runNanos + CLIENT_GRACE.toNanos();
        for (int i = 0; i < settings.clients(); i++) {
          startClient(i % 2 == 0 ? ChaosClient.Kind.STUB : ChaosClient.Kind.RAW);
        }
        for (int i = 0; i < settings.strictClients(); i++) {
          startClient(ChaosClient.Kind.STRICT);
        }
        startOwnerMonitor();
        say("running for " + settings.duration() + " with " + settings.clients() + " clients"
            + (settings.strictClients() > 0 ? " and " + settings.strictClients() + " strict clients" : ""));
        faults(runNanos);
        finish();
      } finally {
        advancePool.shutdownNow();
        stopOwnerMonitor();
        restarts.shutdownNow();
        if (!restarts.awaitTermination(30, TimeUnit.SECONDS)) {
          say("an owner kill's restart did not stop within 30 s");
        }
        network.ifPresent(ChaosNetwork::healAll);
        cassandra.resumeAll();
        FreshAdvance f = fresh;
        if (f != null) {
          try {
            f.close();
          } catch (InterruptedException e) {
            f.thawAll(); // what matters here: no server left frozen; the rest is stopped below
            Thread.currentThread().interrupt();
          }
        }
        if (poolWatch != null) {
          poolWatch.close();
        }
        for (ChaosClient c : clients) {
          c.kill();
        }
        for (ServerNode s : servers) {
          s.close();
        }
        if (network.isPresent()) {
          network.get().removeHosts();
        }
        if (startedCassandra) {
          launcher.stop();
        }
      }
    } finally {
      Runtime.getRuntime().removeShutdownHook(hook);
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
      say("removed " + stale.size() + " files of an earlier run from " + settings.out());
    }
  }

  /** The shutdown hook: never leave a node frozen or a server running. */
  private void emergencyStop() {
    FreshAdvance f = fresh;
    if (f != null) {
      f.thawAll(); // a frozen server would not die of SIGTERM
    }
    advancePool.shutdownNow();
    restarts.shutdownNow();
    monitorStopped = true;
    network.ifPresent(ChaosNetwork::healAll);
    cassandra.resumeAll();
    for (ServerNode s : servers) {
      try {
        s.kill();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
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

  private void startServers() throws IOException, InterruptedException {
    Path dir = settings.out().resolve("servers");
    Files.createDirectories(dir);
    // Every incarnation runs from a copy taken now: a rebuild of the server jar during the run (other work
    // in the same checkout) would otherwise break the running JVMs (classes loaded lazily from a replaced
    // jar) and give restarted servers another build.
    Path jar = dir.resolve(SERVER_JAR_COPY);
    Files.copy(settings.serverJar(), jar, StandardCopyOption.REPLACE_EXISTING);
    String sha256 = sha256(jar);
    log.line("note", "server-jar", settings.serverJar(), "sha256", sha256);
    say("servers run from a copy of " + settings.serverJar() + " (sha256 " + sha256 + ")");
    for (int i = 0; i < settings.servers(); i++) {
      String dc = i % 2 == 0 ? "dc1" : "dc2";
      // On a netns cluster every server has a namespace of its own, so that it can be cut off from its
      // datacenter's nodes while the clients (here, in the root namespace) still reach it.
      String host = "127.0.0.1";
      List<String> exec = List.of();
      if (network.isPresent()) {
        host = ChaosNetwork.serverAddress(i);
        network.get().addHost(ChaosNetwork.serverHost(i), host);
        exec = ChaosNetwork.exec(ChaosNetwork.serverHost(i));
      }
      List<String> serverSettings = new ArrayList<>(List.of(
          "idgen.store=cassandra",
          "idgen.cassandra.contact-points=" + cassandra.contactPoint(dc),
          "idgen.cassandra.local-datacenter=" + dc,
          "idgen.cassandra.keyspace=" + keyspace,
          "idgen.cassandra.create-schema=true",
          // Every node of a datacenter, up to three: LOCAL_SERIAL and SERIAL need real quorums.
          "idgen.cassandra.replication.dc1=" + cassandra.replication("dc1"),
          "idgen.cassandra.replication.dc2=" + cassandra.replication("dc2"),
          "idgen.cassandra.floor-refresh=500ms",
          "idgen.allocator.unload-idle-after=" + settings.unloadIdleAfter().toMillis() + "ms",
          // Advances wait this (+ a margin) after every live server confirmed; stubs drop leases this old.
          "idgen.advance.client-lease-lifetime=" + CLIENT_LEASE_LIFETIME,
          // Each server's metrics endpoint on a port of its own, kept across restarts.
          "idgen.metrics.host=" + host,
          "idgen.metrics.port=" + freePort()));
      if (settings.strictOwnerLease() != null) { // else the servers' default
        serverSettings.add("idgen.strict.owner-lease=" + settings.strictOwnerLease().toMillis() + "ms");
      }
      ServerNode node = new ServerNode("server-" + i, dc, host, exec, freePort(), jar, dir, serverSettings);
      servers.add(node);
      log.line("server", node.name(), i, node.target(), dc);
      startServer(node);
      say("started " + node);
    }
  }

  /** Starts a server, trying another time if its port was taken meanwhile or the start failed. */
  private void startServer(ServerNode node) throws IOException, InterruptedException {
    for (int attempt = 1; ; attempt++) {
      try {
        node.start();
        return;
      } catch (IOException e) {
        if (attempt == 3) {
          throw e;
        }
        say("retrying the start of " + node + ": " + e.getMessage());
        Thread.sleep(2_000);
      }
    }
  }

  private void createSequences() {
    // Blocks grow with the call scale, as the calls do, so that a long run's IDs per second are not bound by
    // Cassandra's compare-and-sets per second (a few dozen a second on the 2-core netns cluster).
    long scale = settings.callScale();
    sequences.add(new SequenceSpec("chaos-dense", 1, Long.MAX_VALUE, 1, 2_000 * scale, 20_000 * scale));
    sequences.add(new SequenceSpec("chaos-striped", 1_000, Long.MAX_VALUE, 4, 1_000 * scale, 10_000 * scale));
    sequences.add(new SequenceSpec("chaos-int32", INT32_MAX - settings.int32Space() + 1, INT32_MAX, 2,
        1_000 * scale, 10_000 * scale));
    // Small blocks, whatever the call scale: its datacenter pools are appended to several times a second and
    // its servers refill from them more often still, so that faults catch compare-and-sets of both tiers under way.
    sequences.add(new SequenceSpec(SMALL, 1, Long.MAX_VALUE, 1, SMALL_NODE_BLOCK, SMALL_DC_BLOCK));
    // The strict sequence: one stripe, owned in dc1 (three replicas on the netns topologies), called with 1 ID
    // or a few at a time, whatever the call scale.
    if (settings.strictClients() > 0) {
      sequences.add(new SequenceSpec(STRICT, 1, Long.MAX_VALUE, 1, STRICT_NODE_BLOCK, STRICT_DC_BLOCK, STRICT_HOME));
    }
    SequenceAdminGrpc.SequenceAdminBlockingStub admin = admin(servers.get(0), 60);
    for (SequenceSpec s : sequences) {
      CreateSequenceRequest.Builder request = CreateSequenceRequest.newBuilder().setName(s.name())
          .setStart(s.start()).setMax(s.max()).setStripes(s.stripes()).setNodeBlockSize(s.nodeBlock())
          .setDcBlockSize(s.dcBlock());
      if (s.strict()) {
        request.setOrdering(Ordering.ORDERING_STRICT).setHomeDatacenter(s.homeDatacenter());
      }
      Sequence created = admin.createSequence(request.build());
      if (s.strict() && created.getOrdering() != Ordering.ORDERING_STRICT) {
        throw new IllegalStateException("the servers created " + s.name() + " with ordering " + created.getOrdering()
            + ", not ORDERING_STRICT: a server jar without strict sequences? (--strict-clients 0 runs without)");
      }
      log.sequence(s);
    }
  }

  /**
   * The per-server sequences (stubs and raw callers) or the strict ones (strict clients); not the fresh-advance
   * episodes' sequences, which only their own calls use.
   */
  private List<SequenceSpec> sequencesOf(ChaosClient.Kind kind) {
    boolean strict = kind == ChaosClient.Kind.STRICT;
    return sequences.stream().filter(s -> s.strict() == strict && !s.name().startsWith(FreshAdvance.PREFIX))
        .toList();
  }

  private void startClient(ChaosClient.Kind kind) {
    int id = nextClientId++;
    List<String> targets = servers.stream().map(ServerNode::target).toList();
    ChaosClient c = new ChaosClient(id, kind, targets, sequencesOf(kind).stream().map(SequenceSpec::name).toList(),
        settings.out(), clock, settings.seed() * 31 + id, deadlineNanos,
        kind == ChaosClient.Kind.STRICT ? settings.strictRate() : settings.rate(), settings.callScale());
    log.line("client", id, kind.word());
    clients.add(c);
    c.start();
  }

  // --- strict sequences' owners ------------------------------------------------------------------

  /**
   * Starts the thread that polls the strict sequences' owners every 500 ms (every live server, the highest
   * epoch) and logs each change ({@code owner} lines): the take-overs the checker counts. Bounded by the
   * clients' deadline and stopped at the end.
   */
  private void startOwnerMonitor() {
    List<SequenceSpec> strict = sequencesOf(ChaosClient.Kind.STRICT);
    if (strict.isEmpty()) {
      return;
    }
    ownerMonitor = new Thread(() -> {
      Map<String, String> last = new java.util.HashMap<>();
      try {
        while (!monitorStopped && System.nanoTime() < deadlineNanos) {
          for (SequenceSpec seq : strict) {
            Optional<OwnerView> owner = readOwner(seq, 2);
            if (owner.isEmpty()) {
              continue;
            }
            String target = owner.get().target();
            long epoch = owner.get().epoch();
            String key = target + "#" + epoch;
            if (!key.equals(last.put(seq.name(), key))) {
              log.owner(seq.name(), clock.millis(), target, epoch);
              say("owner of " + seq.name() + ": " + (target == null ? "none" : nodeOf(target).map(ServerNode::name)
                  .orElse("?") + " (" + target + ", epoch " + epoch + ")"));
            }
          }
          Thread.sleep(500);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "chaos-owner-monitor");
    ownerMonitor.setDaemon(true);
    ownerMonitor.start();
  }

  private void stopOwnerMonitor() throws InterruptedException {
    monitorStopped = true;
    if (ownerMonitor != null) {
      ownerMonitor.interrupt();
      ownerMonitor.join(10_000);
    }
  }

  /** A strict sequence's owner as a server shows it: its gRPC target (null: none) and fencing epoch (-1: none). */
  private record OwnerView(String target, long epoch) {}

  /**
   * {@code seq}'s owner as the live servers show it, all asked at once (each within {@code seconds}): the
   * answer with the highest fencing epoch, since a server of another datacenter than the sequence's home shows
   * its own replicas' copy of the owner row (LOCAL_QUORUM), which may lag for a moment after a take-over;
   * empty if none answered.
   */
  private Optional<OwnerView> readOwner(SequenceSpec seq, long seconds) throws InterruptedException {
    GetSequenceRequest request = GetSequenceRequest.newBuilder().setName(seq.name()).build();
    List<Future<Sequence>> answers = new ArrayList<>();
    for (ServerNode node : servers) {
      if (node.alive()) {
        answers.add(SequenceAdminGrpc.newFutureStub(node.adminChannel())
            .withDeadlineAfter(seconds, TimeUnit.SECONDS).getSequence(request));
      }
    }
    OwnerView best = null;
    for (Future<Sequence> answer : answers) {
      try {
        Sequence s = answer.get(seconds + 1, TimeUnit.SECONDS);
        OwnerView seen = s.hasOwner() ? new OwnerView(s.getOwner(), s.hasOwnerEpoch() ? s.getOwnerEpoch() : -1)
            : new OwnerView(null, -1);
        if (best == null || seen.epoch() > best.epoch()) {
          best = seen;
        }
      } catch (ExecutionException | TimeoutException e) {
        answer.cancel(true); // that server did not answer: the others may
      }
    }
    return Optional.ofNullable(best);
  }

  /** The server slot whose gRPC target is {@code target} (or, failing that, whose port it names). */
  private Optional<ServerNode> nodeOf(String target) {
    Optional<ServerNode> exact = servers.stream().filter(n -> n.target().equals(target)).findFirst();
    if (exact.isPresent()) {
      return exact;
    }
    return servers.stream().filter(n -> target.endsWith(":" + n.port())).findFirst();
  }

  /**
   * The server that owns {@code seq} now, asking for up to 15 s (during a take-over there is none, or none
   * that serves); empty if none could be found.
   */
  private Optional<ServerNode> currentOwner(SequenceSpec seq) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (System.nanoTime() < deadline) {
      Optional<OwnerView> owner = readOwner(seq, 2);
      if (owner.isPresent() && owner.get().target() != null) {
        Optional<ServerNode> node = nodeOf(owner.get().target());
        if (node.isPresent() && node.get().alive()) {
          return node;
        }
      }
      Thread.sleep(250);
    }
    return Optional.empty();
  }

  // --- faults ----------------------------------------------------------------------------------------

  /** A step of a fault that may fail (a script, a signal) or be interrupted. */
  private interface Step {
    void run() throws Exception;
  }

  private void faults(long runNanos) throws Exception {
    long start = System.nanoTime();
    long warmup = Math.min(TimeUnit.SECONDS.toNanos(10), runNanos / 8);
    long cooldown = Math.min(TimeUnit.SECONDS.toNanos(20), runNanos / 6);
    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(warmup));
    // Every kind once first (in a seeded order), then kinds drawn at random.
    List<String> kinds = settings.faultKinds();
    List<String> firstRound = new ArrayList<>(kinds);
    Collections.shuffle(firstRound, random);
    int weights = kinds.stream().mapToInt(WEIGHTS::get).sum();
    // The first round always completes (even on a slow machine), so that every run sees every kind.
    // (`drawn` counts the draws; `faults` also counts the bursts that come along with the faults that hold.)
    int drawn = 0;
    while (drawn < firstRound.size() || System.nanoTime() - start < runNanos - cooldown) {
      // Between faults: 1-5 s; in the first round 0.5-1.5 s, so that a short run gets through every kind.
      Thread.sleep(drawn < firstRound.size() ? 500 + random.nextInt(1_000) : 1_000 + random.nextInt(4_000));
      if (drawn >= firstRound.size() && System.nanoTime() - start >= runNanos - cooldown) {
        break;
      }
      String kind;
      boolean firstRoundFault = drawn < firstRound.size();
      drawn++;
      if (firstRoundFault) {
        kind = firstRound.get(drawn - 1);
      } else {
        int pick = random.nextInt(weights);
        kind = kinds.get(kinds.size() - 1);
        for (String k : kinds) {
          pick -= WEIGHTS.get(k);
          if (pick < 0) {
            kind = k;
            break;
          }
        }
      }
      // A fault that holds brings an advance burst along while it holds: always in the first round, so that
      // every run sees each, then one time in three. Only in runs that have advance bursts: a run without
      // them keeps every ID in the reckoning.
      boolean withBurst = WITH_BURST.contains(kind) && kinds.contains("advance-burst")
          && (firstRoundFault || random.nextInt(3) == 0);
      if (SERVER_KINDS.contains(kind)) {
        awaitRestarts();
      }
      int no = faultNo + 1; // the fault thread is the only writer
      faultNo = no;
      snapshotCounters();
      switch (kind) {
        case "server-kill" -> killServer(withBurst);
        case "owner-kill" -> killOwner(withBurst);
        case "owner-isolate" -> isolateOwner(withBurst, firstRoundFault);
        case "cassandra-pause" -> pauseCassandra(withBurst);
        case "client-kill" -> killClient();
        case "server-restart" -> {
          ServerNode node = servers.get(random.nextInt(servers.size()));
          log.fault(clock.millis(), "server-restart", strictStopBound(), node.name());
          long from = clock.millis();
          restartServer(node);
          log.window(Integer.toString(faultNo), kind, from, clock.millis(), node.name());
        }
        case "rolling-restart" -> rollingRestart();
        case "dc-partition" -> partition(withBurst);
        case "dc-oneway" -> oneWay(withBurst);
        case "server-isolate" -> isolateServer(withBurst);
        case "replica-one" -> replicas(1, withBurst);
        case "replica-two" -> replicas(2, withBurst);
        case "cassandra-kill" -> killCassandra(withBurst);
        case "fresh-advance" -> freshAdvance();
        default -> advanceBurst();
      }
      faults++;
    }
    long left = runNanos - (System.nanoTime() - start);
    if (left > 0) {
      Thread.sleep(TimeUnit.NANOSECONDS.toMillis(left));
    }
    say("faults injected: " + faults);
  }

  private long blocksPerServer() {
    return sequences.stream().mapToLong(s -> s.stripes() * (s.nodeBlock() + s.dcBlock())).sum();
  }

  /**
   * What a planned stop may lose: nothing of a per-server sequence (its reserves go back), but what the owner
   * of a strict sequence held, which is never given back (docs/design.md): a node block and a DC block each.
   */
  private long strictStopBound() {
    return sequencesOf(ChaosClient.Kind.STRICT).stream().mapToLong(s -> s.nodeBlock() + s.dcBlock()).sum();
  }

  private long callsInFlightBound() {
    long bound = 0;
    for (ChaosClient c : clients) {
      bound += clientBound(c.kind());
    }
    return bound;
  }

  /** What a client of {@code kind} may have open: its calls in flight, at most. */
  private long clientBound(ChaosClient.Kind kind) {
    return switch (kind) {
      case STUB -> sequencesOf(kind).size() * ChaosClient.stubMaxLease(settings.callScale());
      case RAW -> ChaosClient.rawMaxCount(settings.callScale());
      case STRICT -> (long) (ChaosClient.STRICT_CALLERS + 1) * ChaosClient.STRICT_MAX_COUNT; // + its stub
    };
  }

  /**
   * What a fault that keeps {@code servers} servers from their store for {@code holdMillis} may lose: for each,
   * per sequence and stripe, a node block and a DC block per unresolved compare-and-set, at most one a second
   * (the nodes' CAS contention timeout) plus two.
   */
  private long storeFaultBound(int serversCut, long holdMillis) {
    return serversCut * blocksPerServer() * (holdMillis / 1_000 + 2);
  }

  /** How long a network, replica or Cassandra fault holds: 3 s to {@link Settings#maxHold()}, drawn. */
  private long holdMillis() {
    long max = settings.maxHold().toMillis();
    return MIN_HOLD_MILLIS + (max > MIN_HOLD_MILLIS ? random.nextInt((int) (max - MIN_HOLD_MILLIS + 1)) : 0);
  }

  /**
   * A fault that holds: logs it ({@code fault}), applies it, starts {@code burst} (if any) at a random moment
   * in the first half of {@code holdMillis}, waits out the rest, and heals it in a {@code finally}, logging
   * its time in force ({@code down} and {@code window}) however it ended.
   */
  private void hold(String kind, long bound, String what, String detail, long holdMillis, boolean withBurst,
      Step apply, Step heal) throws Exception {
    long burstAfter = withBurst ? random.nextInt((int) Math.max(1, holdMillis / 2)) : -1;
    Burst burst = withBurst ? planBurst(kind + ":" + what) : null;
    // The cursor is read before the fault: read during it, it could wait for a node, and the burst start late.
    long cursor = burst == null ? 0 : cursorNow(burst.seq(), burst.asked());
    log.fault(clock.millis(), kind, bound, detail + " ms=" + holdMillis);
    say(kind + " " + detail + " for " + holdMillis + " ms");
    long from = clock.millis();
    try {
      apply.run();
      if (burst != null) {
        Thread.sleep(burstAfter);
        startBurst(burst, cursor);
        faults++;
      }
      Thread.sleep(holdMillis - Math.max(0, burstAfter));
    } finally {
      try {
        heal.run();
      } finally {
        long to = clock.millis();
        log.line("down", kind, what, from, to);
        log.window(Integer.toString(faultNo), kind, from, to, detail);
      }
    }
  }

  private void killServer(boolean withBurst) throws Exception {
    ServerNode node = servers.get(random.nextInt(servers.size()));
    killServer(node, "server-kill", "", withBurst, false);
  }

  /**
   * {@code kill -9} of the server that owns the strict sequence now (a server of its home datacenter if no
   * owner can be found within 15 s: said in the fault's line), restarted as for a server kill but on the
   * restarts' thread ({@link #awaitRestarts}).
   */
  private void killOwner(boolean withBurst) throws Exception {
    List<SequenceSpec> strict = sequencesOf(ChaosClient.Kind.STRICT);
    SequenceSpec seq = strict.get(random.nextInt(strict.size()));
    List<ServerNode> home = servers.stream().filter(n -> n.datacenter().equals(seq.homeDatacenter())).toList();
    ServerNode fallback = home.get(random.nextInt(home.size()));
    Optional<ServerNode> owner = currentOwner(seq);
    killServer(owner.orElse(fallback), "owner-kill", " of " + seq.name() + (owner.isPresent() ? "" : " owner-unknown"),
        withBurst, true);
  }

  /**
   * {@code kill -9} of {@code node}, started again after 0.5–2 s: here, or if {@code background} on the
   * restarts' thread (the fault thread goes on; {@link #awaitRestarts}). The window and the {@code down} line
   * (kind server-kill: a server was dead) are logged once it is SERVING again.
   */
  private void killServer(ServerNode node, String kind, String detail, boolean withBurst, boolean background)
      throws Exception {
    long delay = 500 + random.nextInt(1_500);
    long bound = blocksPerServer() + callsInFlightBound();
    log.fault(clock.millis(), kind, bound, node.name() + detail + " restart-after-ms=" + delay);
    report(node, "kill"); // what it is about to lose, in its own words
    Burst burst = withBurst ? planBurst(kind + ":" + node.name()) : null;
    long cursor = burst == null ? 0 : cursorNow(burst.seq(), burst.asked());
    say("kill -9 " + node + (kind.equals("server-kill") ? "" : " (" + kind + detail + ")"));
    String seqNo = Integer.toString(faultNo);
    long downAt = clock.millis();
    node.kill();
    Step restart = () -> {
      try {
        Thread.sleep(delay);
        startServer(node);
        started(node);
      } finally {
        long to = clock.millis();
        log.line("down", "server-kill", node.name(), downAt, to);
        log.window(seqNo, kind, downAt, to, node.name());
      }
      clients.forEach(ChaosClient::resetConnectBackoff);
      say("restarted " + node);
    };
    if (burst != null) {
      startBurst(burst, cursor);
      faults++;
    }
    if (background) {
      pendingRestarts.add(restarts.submit(() -> {
        restart.run();
        return null;
      }));
    } else {
      restart.run();
    }
  }

  /**
   * Waits for the owner kills' restarts under way (each at most {@link #RESTART_WAIT_SECONDS}); a restart that
   * failed fails the run here, as it would have on the fault thread.
   */
  private void awaitRestarts() throws Exception {
    try {
      for (Future<?> f : pendingRestarts) {
        try {
          f.get(RESTART_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
          throw e.getCause() instanceof Exception cause ? cause : e;
        }
      }
    } finally {
      pendingRestarts.clear();
    }
  }

  /**
   * A planned restart of {@code node}: SIGTERM, wait until it has exited (its shutdown gives its reserves
   * back to its datacenter's pool), start it again on the same port, wait until it reports SERVING. Loses
   * nothing. A stop that does not end within {@link #STOP_TIMEOUT} ends in a {@code kill -9}, logged with
   * exit code -1 (the checker then counts it as a failed stop). The caller logs the fault.
   */
  private void restartServer(ServerNode node) throws Exception {
    report(node, "stop"); // its counters so far: this incarnation takes them along when it exits
    say("SIGTERM " + node);
    long downAt = clock.millis();
    try {
      int exit = node.stop(STOP_TIMEOUT);
      long stoppedAt = clock.millis();
      long[] returned = node.returnedAtStop();
      log.line("stopped", node.name(), exit, returned == null ? -1 : returned[0],
          returned == null ? -1 : returned[1], stoppedAt - downAt);
      say("stopped " + node + " in " + (stoppedAt - downAt) + " ms, exit " + exit
          + (returned == null ? ", no give-back logged" : ", gave back " + returned[0] + " IDs, abandoned "
              + returned[1]));
      startServer(node);
      started(node);
    } finally {
      log.line("down", "server-restart", node.name(), downAt, clock.millis());
    }
    clients.forEach(ChaosClient::resetConnectBackoff);
    say("restarted " + node);
  }

  /** Every server in turn: a planned restart ({@link #restartServer}), the next once it is SERVING again. */
  private void rollingRestart() throws Exception {
    String names = servers.stream().map(ServerNode::name).toList().toString().replace(" ", "");
    log.fault(clock.millis(), "rolling-restart", servers.size() * strictStopBound(), names);
    say("rolling restart of " + servers.size() + " servers");
    long from = clock.millis();
    for (ServerNode node : servers) {
      restartServer(node);
    }
    log.window(Integer.toString(faultNo), "rolling-restart", from, clock.millis(), names);
  }

  private void pauseCassandra(boolean withBurst) throws Exception {
    String dc = random.nextBoolean() ? "dc1" : "dc2";
    long pauseMillis = 2_000 + random.nextInt(4_000);
    hold("cassandra-pause", 2 * servers.size() * blocksPerServer(), dc, dc + " " + cassandra.describe(dc),
        pauseMillis, withBurst, () -> cassandra.pause(dc), () -> cassandra.resume(dc));
  }

  /** dc1 | dc2: every node of each datacenter drops what comes from, and goes to, the other's nodes. */
  private void partition(boolean withBurst) throws Exception {
    ChaosNetwork net = network.orElseThrow();
    String tag = "fault-" + faultNo;
    long hold = holdMillis();
    AtomicReference<ChaosNetwork.Cut> cut = new AtomicReference<>();
    hold("dc-partition", storeFaultBound(servers.size(), hold), "dc1|dc2", "dc1|dc2 " + tag, hold, withBurst,
        () -> cut.set(net.partition(cassandra, tag)), () -> heal(cut));
  }

  /** One way only: the sending datacenter's nodes drop what they send to the other's (drawn: dc1 or dc2). */
  private void oneWay(boolean withBurst) throws Exception {
    ChaosNetwork net = network.orElseThrow();
    String from = random.nextBoolean() ? "dc1" : "dc2";
    String to = from.equals("dc1") ? "dc2" : "dc1";
    String tag = "fault-" + faultNo;
    long hold = holdMillis();
    AtomicReference<ChaosNetwork.Cut> cut = new AtomicReference<>();
    hold("dc-oneway", storeFaultBound(servers.size(), hold), from + "->" + to, from + "->" + to + " " + tag, hold,
        withBurst, () -> cut.set(net.oneWay(cassandra, from, to, tag)), () -> heal(cut));
  }

  /** A server cut off from its own datacenter's nodes (rules in its namespace); clients still reach it. */
  private void isolateServer(boolean withBurst) throws Exception {
    ChaosNetwork net = network.orElseThrow();
    int slot = random.nextInt(servers.size());
    ServerNode node = servers.get(slot);
    List<String> targets = ChaosNetwork.addresses(cassandra, cassandra.nodes(node.datacenter()));
    String tag = "fault-" + faultNo;
    long hold = holdMillis();
    AtomicReference<ChaosNetwork.Cut> cut = new AtomicReference<>();
    hold("server-isolate", storeFaultBound(1, hold), node.name(), node.name() + " from " + node.datacenter()
        + " " + tag, hold, withBurst,
        () -> cut.set(net.isolateFrom(ChaosNetwork.serverHost(slot), targets, tag)), () -> heal(cut));
  }

  /**
   * The strict sequence's owner (a server of its home datacenter if none can be found) cut off, drawn: from
   * every Cassandra node (clients and the other servers still reach it), or from everything (its namespace's
   * link). Held long enough for a take-over (1.5 owner leases + 1 s) in the first round and then one time in
   * two, else as the other network faults.
   */
  private void isolateOwner(boolean withBurst, boolean firstRound) throws Exception {
    ChaosNetwork net = network.orElseThrow();
    List<SequenceSpec> strict = sequencesOf(ChaosClient.Kind.STRICT);
    SequenceSpec seq = strict.get(random.nextInt(strict.size()));
    List<ServerNode> home = servers.stream().filter(n -> n.datacenter().equals(seq.homeDatacenter())).toList();
    ServerNode fallback = home.get(random.nextInt(home.size()));
    boolean whole = random.nextBoolean();
    long hold = holdMillis();
    boolean takeOver = random.nextBoolean() || firstRound;
    if (takeOver) {
      hold = Math.max(hold, ownerLeaseMillis() * 3 / 2 + 1_000);
    }
    Optional<ServerNode> owner = currentOwner(seq);
    ServerNode node = owner.orElse(fallback);
    int slot = servers.indexOf(node);
    List<String> nodes = new ArrayList<>();
    ChaosCassandra.DATACENTERS.forEach(dc -> nodes.addAll(ChaosNetwork.addresses(cassandra, cassandra.nodes(dc))));
    String tag = "fault-" + faultNo;
    AtomicReference<ChaosNetwork.Cut> cut = new AtomicReference<>();
    hold("owner-isolate", storeFaultBound(1, hold), node.name(), node.name() + " of " + seq.name()
        + (owner.isPresent() ? "" : " owner-unknown") + (whole ? " from everything " : " from cassandra ") + tag
        + (takeOver ? " take-over" : ""), hold, withBurst,
        () -> cut.set(whole ? net.isolate(List.of(ChaosNetwork.serverHost(slot)), tag)
            : net.isolateFrom(ChaosNetwork.serverHost(slot), nodes, tag)),
        () -> heal(cut));
  }

  /** The servers' owner lease: the run's, or their default. */
  private long ownerLeaseMillis() {
    return settings.strictOwnerLease() == null ? DEFAULT_OWNER_LEASE_MILLIS : settings.strictOwnerLease().toMillis();
  }

  private static void heal(AtomicReference<ChaosNetwork.Cut> cut) throws Exception {
    ChaosNetwork.Cut c = cut.get();
    if (c != null) { // null: applying it failed before any rule was made (healAll covers a half-made one)
      c.heal();
    }
  }

  /**
   * {@code count} of the three replicas of a datacenter isolated (every packet of their link dropped) or
   * paused (SIGSTOP), drawn; applied once the datacenter's servers are seen refilling.
   */
  private void replicas(int count, boolean withBurst) throws Exception {
    List<String> dcs = ChaosCassandra.DATACENTERS.stream().filter(d -> cassandra.nodes(d).size() >= 3).toList();
    String dc = dcs.get(random.nextInt(dcs.size()));
    List<String> nodes = new ArrayList<>(cassandra.nodes(dc));
    Collections.shuffle(nodes, random);
    List<String> picked = List.copyOf(nodes.subList(0, count));
    boolean isolate = network.isPresent() && random.nextBoolean();
    String kind = count == 1 ? "replica-one" : "replica-two";
    String tag = "fault-" + faultNo;
    long hold = holdMillis();
    double refills = awaitRefills(dc);
    String detail = dc + " " + String.join(",", picked) + (isolate ? " isolated " : " paused ") + tag
        + String.format(Locale.ROOT, " refills/s=%.1f", refills);
    AtomicReference<ChaosNetwork.Cut> cut = new AtomicReference<>();
    Step apply = isolate
        ? () -> cut.set(network.get().isolate(picked, tag))
        : () -> {
          for (String n : picked) {
            cassandra.pauseNode(n);
          }
        };
    Step heal = isolate
        ? () -> heal(cut)
        : () -> {
          for (String n : picked) {
            cassandra.resumeNode(n);
          }
        };
    hold(kind, storeFaultBound(servers.size(), hold), dc + ":" + String.join(",", picked), detail, hold,
        withBurst, apply, heal);
  }

  /**
   * Waits (at most 3 s) until the servers of {@code dc} are seen sending compare-and-sets (their count moving
   * between two reads 250 ms apart), so that the fault that follows lands among refills under way; returns
   * the rate seen (per second; 0 if none was seen in time).
   */
  private double awaitRefills(String dc) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    long before = casAttempts(dc);
    long t0 = System.nanoTime();
    while (System.nanoTime() < deadline) {
      Thread.sleep(250);
      long now = casAttempts(dc);
      if (now > before && before >= 0) {
        return (now - before) * 1e9 / (System.nanoTime() - t0);
      }
      before = now;
      t0 = System.nanoTime();
    }
    return 0;
  }

  /** The compare-and-sets the live servers of {@code dc} have sent, both tiers (-1 if none could be read). */
  private long casAttempts(String dc) {
    long sum = -1;
    for (ServerNode node : servers) {
      if (node.datacenter().equals(dc) && node.alive()) {
        ServerNode.Counters c = node.counters();
        if (c != null) {
          sum = Math.max(sum, 0) + c.attempts().values().stream().mapToLong(Long::longValue).sum();
        }
      }
    }
    return sum;
  }

  /** {@code kill -9} of a Cassandra node, started again on its data after 1–5 s; held until it serves CQL. */
  private void killCassandra(boolean withBurst) throws Exception {
    List<String> all = new ArrayList<>(cassandra.nodes("dc1"));
    all.addAll(cassandra.nodes("dc2"));
    String node = all.get(random.nextInt(all.size()));
    long down = 1_000 + random.nextInt(4_000);
    // Held: the downtime, then the restart (its commit log replayed), which takes 10-30 s here.
    hold("cassandra-kill", storeFaultBound(servers.size(), down + 30_000), node, node + " restart-after-ms="
        + down, down, withBurst, () -> cassandra.kill(node), () -> cassandra.restart(node));
  }

  private void killClient() throws InterruptedException {
    ChaosClient victim = clients.get(random.nextInt(clients.size()));
    long bound = clientBound(victim.kind());
    long at = clock.millis();
    log.fault(at, "client-kill", bound, victim.toString());
    say("killing " + victim);
    victim.kill();
    logStubStats(victim);
    clients.remove(victim);
    startClient(victim.kind());
    log.window(Integer.toString(faultNo), "client-kill", at, at, victim.toString());
  }

  /**
   * A fresh-advance episode ({@link FreshAdvance}), drawn here from the seed: the creating server, one loader
   * per datacenter with its count, whether they are frozen at the first global take (two in three), when the
   * advance starts (0–30 ms after the freeze, or 0–100 ms after the loaders), its floor inside the first DC
   * block and its server (not a loader). Its lost bound: what a kill of each frozen server may lose (a freeze can cost an owner its lease),
   * and per server a node block and a DC block of the new sequence.
   */
  private void freshAdvance() throws Exception {
    FreshAdvance episodes = fresh();
    String name = FreshAdvance.PREFIX + faultNo;
    List<Integer> loaders = new ArrayList<>();
    List<Long> counts = new ArrayList<>();
    for (String dc : ChaosCassandra.DATACENTERS) {
      List<Integer> slots = new ArrayList<>();
      for (int i = 0; i < servers.size(); i++) {
        if (servers.get(i).datacenter().equals(dc)) {
          slots.add(i);
        }
      }
      loaders.add(slots.get(random.nextInt(slots.size())));
      counts.add(1L + random.nextInt(10));
    }
    boolean pause = random.nextInt(3) != 0;
    long advanceAfter = random.nextInt(pause ? 30 : 100);
    long floorOffset = FreshAdvance.MIN_FLOOR_OFFSET
        + random.nextInt((int) (FreshAdvance.MAX_FLOOR_OFFSET - FreshAdvance.MIN_FLOOR_OFFSET));
    List<Integer> others = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      if (!loaders.contains(i)) {
        others.add(i);
      }
    }
    int advancer = others.get(random.nextInt(others.size()));
    int creator = random.nextInt(servers.size());
    FreshAdvance.Plan plan = new FreshAdvance.Plan(name, creator, loaders, counts, pause, advanceAfter,
        floorOffset, advancer);
    long bound = (pause ? loaders.size() * (blocksPerServer() + callsInFlightBound()) : 0)
        + servers.size() * (FreshAdvance.NODE_BLOCK + FreshAdvance.DC_BLOCK);
    String loaderNames = loaders.stream().map(i -> servers.get(i).name()).toList().toString().replace(" ", "");
    String detail = name + " loaders=" + loaderNames + " advance-on=" + servers.get(advancer).name()
        + " advance-after-ms=" + advanceAfter + " floor-offset=" + floorOffset
        + (pause ? " freeze-at-first-take" : "");
    long at = clock.millis();
    log.fault(at, "fresh-advance", bound, detail);
    say("fresh-advance " + detail);
    String outcome = name;
    try {
      outcome = episodes.run(plan, new FreshAdvance.Hooks() {
        @Override
        public void created(SequenceSpec spec) {
          sequences.add(spec);
          log.sequence(spec);
        }

        @Override
        public void advanceFailed(String sequence, long floor) {
          unfinishedFloors.merge(sequence, floor, Math::max);
        }
      });
      say("fresh-advance: " + outcome);
    } finally {
      log.window(Integer.toString(faultNo), "fresh-advance", at, clock.millis(), outcome);
    }
    episodes.startProber();
  }

  /** The fresh-advance episodes' helper, made at the first (its record file is a client's). */
  private FreshAdvance fresh() {
    FreshAdvance f = fresh;
    if (f == null) {
      poolWatch = new PoolWatch(cassandra, keyspace);
      f = new FreshAdvance(nextClientId++, settings.out(), log, clock, servers, poolWatch,
          settings.unloadIdleAfter(), advancePool, settings.seed() * 13 + 5);
      fresh = f;
    }
    return f;
  }

  /** An advance burst as drawn from the seed: the sequence, the calls' floors above the cursor, their servers. */
  private record Burst(SequenceSpec seq, ServerNode asked, long offset, long[] extra, ServerNode[] targets,
      String during, String faultSeq) {}

  /**
   * Draws a burst (on the fault thread, so the schedule stays the seed's). {@code during} names the pause or
   * kill it comes with, or is empty.
   */
  private Burst planBurst(String during) {
    // Only the unbounded sequences: the 32-bit one is left to run out by itself.
    List<SequenceSpec> unbounded = sequences.stream().filter(s -> s.max() == Long.MAX_VALUE).toList();
    SequenceSpec seq = unbounded.get(random.nextInt(unbounded.size()));
    ServerNode asked = servers.get(random.nextInt(servers.size()));
    long offset = random.nextInt((int) seq.dcBlock());
    int calls = 3 + random.nextInt(4);
    long[] extra = new long[calls];
    ServerNode[] targets = new ServerNode[calls];
    for (int i = 0; i < calls; i++) {
      extra[i] = random.nextInt(1_000);
      targets[i] = servers.get(random.nextInt(servers.size()));
    }
    // A burst that comes along with a fault is in that fault's window; one of its own is a fault itself.
    return new Burst(seq, asked, offset, extra, targets, during, during.isEmpty() ? Integer.toString(faultNo) : "-");
  }

  /** An advance burst with no other fault: its cursor is read on its own thread. */
  private void advanceBurst() {
    Burst burst = planBurst("");
    bursts.add(advancePool.submit(() -> {
      runBurst(burst, cursorNow(burst.seq(), burst.asked()));
      return null;
    }));
  }

  /** Starts {@code burst} from {@code cursor} on its own threads and returns at once. */
  private void startBurst(Burst burst, long cursor) {
    bursts.add(advancePool.submit(() -> {
      runBurst(burst, cursor);
      return null;
    }));
  }

  /** The burst's calls, all at once, each on a random server; logs each call's outcome when it returns. */
  private void runBurst(Burst burst, long cursor) throws Exception {
    SequenceSpec seq = burst.seq();
    String during = burst.during();
    int calls = burst.extra().length;
    long base = cursor + burst.offset();
    log.fault(clock.millis(), "advance-burst", 0, seq.name() + " calls=" + calls + " base-floor=" + base
        + (during.isEmpty() ? "" : " during=" + during));
    say("advance burst on " + seq.name() + ": " + calls + " calls from floor " + base
        + (during.isEmpty() ? "" : " during " + during));
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    long from = clock.millis();
    for (int i = 0; i < calls; i++) {
      long floor = base + burst.extra()[i];
      ServerNode target = burst.targets()[i];
      done.add(advancePool.submit(() -> {
        go.await();
        long started = clock.nanos();
        String outcome;
        try {
          admin(target, 60).advanceSequence(
              AdvanceSequenceRequest.newBuilder().setName(seq.name()).setFloor(floor).build());
          outcome = "ok";
        } catch (StatusRuntimeException e) {
          outcome = "failed:" + e.getStatus().getCode();
        }
        // Taken after the call returned: a batch asked for, or a call started, later is certainly later.
        log.line("advance", seq.name(), floor, clock.nanos(), outcome, started, target.name());
        if (!outcome.equals("ok")) {
          unfinishedFloors.merge(seq.name(), floor, Math::max);
        }
        return null;
      }));
    }
    go.countDown();
    try {
      for (Future<?> f : done) {
        f.get(90, TimeUnit.SECONDS);
      }
    } finally {
      log.window(burst.faultSeq(), "advance-burst", from, clock.millis(), seq.name() + " calls=" + calls
          + (during.isEmpty() ? "" : " during=" + during));
    }
  }

  /**
   * The sequence's highest global cursor as {@code first} (or, if it cannot answer, the next server) sees it;
   * the highest seen before if none can say.
   */
  private long cursorNow(SequenceSpec seq, ServerNode first) {
    int from = servers.indexOf(first);
    for (int i = 0; i < servers.size(); i++) {
      ServerNode node = servers.get((from + i) % servers.size());
      try {
        Sequence state = admin(node, 10).getSequence(GetSequenceRequest.newBuilder().setName(seq.name()).build());
        long cursor = state.getStripeStatesList().stream().filter(StripeState::hasNextUnreserved)
            .mapToLong(StripeState::getNextUnreserved).max().orElse(seq.start());
        return lastCursor.merge(seq.name(), cursor, Math::max);
      } catch (StatusRuntimeException e) {
        // the next one
      }
    }
    return lastCursor.getOrDefault(seq.name(), seq.start());
  }

  /** A stub's own counters, per sequence, and its caller's tryNext() counts, when it ends (killed or stopped). */
  private void logStubStats(ChaosClient c) {
    for (IdSourceStats st : c.stubStats()) {
      log.line("stub", "client-" + c.id(), st.sequence(), st.idsServed(), st.idsExpired());
    }
    long[] tries = c.tryStats();
    if (c.kind() != ChaosClient.Kind.RAW) {
      log.line("stub-try", "client-" + c.id(), tries[0], tries[1]);
    }
  }

  // --- the end -------------------------------------------------------------------------------------

  private void finish() throws Exception {
    awaitRestarts();
    for (Future<?> burst : bursts) {
      try {
        burst.get(BURST_WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (ExecutionException | TimeoutException e) {
        say("an advance burst did not end cleanly: " + e);
      }
    }
    network.ifPresent(ChaosNetwork::healAll);
    cassandra.resumeAll();
    for (ServerNode s : servers) {
      if (!s.alive()) {
        startServer(s);
        started(s);
      }
    }
    say("stopping the clients");
    stopOwnerMonitor();
    FreshAdvance f = fresh;
    if (f != null) {
      f.close(); // its prober's calls finish and are recorded first
    }
    for (ChaosClient c : clients) {
      c.stop();
      logStubStats(c);
    }
    completeFailedAdvances();
    // What is still held, once the servers' refills and floor polls have settled: two equal snapshots.
    List<String> previous = List.of();
    for (int attempt = 0; attempt < 30; attempt++) {
      Thread.sleep(1_500);
      List<String> snapshot = snapshot();
      if (snapshot.equals(previous)) {
        break;
      }
      previous = snapshot;
    }
    for (String line : previous) {
      log.line(line);
    }
    for (ServerNode node : servers) {
      report(node, "end");
    }
    logUnloads();
    log.line("faults-injected", faults);
    log.line("end", clock.millis());
  }

  /** What the servers unloaded as idle, from every incarnation's log: an {@code unloads} line. */
  private void logUnloads() {
    long lines = 0;
    long unloaded = 0;
    try (Stream<Path> logs = Files.list(settings.out().resolve("servers"))) {
      for (Path p : logs.filter(p -> p.getFileName().toString().matches("server-\\d+-\\d+\\.log")).toList()) {
        try (Stream<String> text = Files.lines(p, StandardCharsets.ISO_8859_1)) {
          for (String line : (Iterable<String>) text::iterator) {
            Matcher m = UNLOADED.matcher(line);
            if (m.find()) {
              lines++;
              unloaded += Long.parseLong(m.group(1));
            }
          }
        }
      }
    } catch (IOException | UncheckedIOException e) {
      say("could not read the servers' logs for their idle unloads: " + e);
      lines = -1;
      unloaded = -1;
    }
    log.line("unloads", settings.unloadIdleAfter().toMillis(), lines, unloaded);
  }

  /** The line a server logs after an idle sweep that unloaded something (Allocator). */
  private static final Pattern UNLOADED = Pattern.compile("unloaded (\\d+) sequence\\(s\\) idle for");

  /**
   * Logs what a server says it holds in memory (GetSequence), has counted as lost, and its compare-and-set
   * outcomes (its metrics, one scrape).
   */
  private void report(ServerNode node, String when) {
    long held = 0;
    if (when.equals("kill")) {
      for (SequenceSpec seq : sequences) {
        try {
          held += admin(node, 2).getSequence(GetSequenceRequest.newBuilder().setName(seq.name()).build())
              .getServerReserve();
        } catch (RuntimeException e) {
          held = -1;
          break;
        }
      }
    }
    ServerNode.Counters counters = node.counters();
    log.line("reported", node.name(), when, held, counters == null ? -1 : counters.lost());
    log.cas(node.name(), when, counters == null ? null : counters.cas());
    logCounters(node, when.equals("end") ? "end" : Integer.toString(faultNo), counters);
  }

  /** Every live server's counters at the start of fault {@link #faultNo}: what each kind did is the difference. */
  private void snapshotCounters() {
    for (ServerNode node : servers) {
      if (node.alive()) {
        logCounters(node, Integer.toString(faultNo), node.counters());
      }
    }
  }

  private void logCounters(ServerNode node, String label, ServerNode.Counters counters) {
    if (counters == null) {
      return; // unreadable: its counts go to the fault of its previous line
    }
    Map<String, Long> counts = new TreeMap<>(counters.cas());
    counters.attempts().forEach((tier, n) -> counts.put(tier + ":attempts", n));
    log.counters(label, node.name(), node.incarnation(), counters.lost(), counts);
  }

  /** A new incarnation of {@code node} started during fault {@link #faultNo}: its counters start at 0. */
  private void started(ServerNode node) {
    log.counters(Integer.toString(faultNo), node.name(), node.incarnation(), 0, Map.of());
  }

  /**
   * Retries, once the clients have stopped, the highest floor of each sequence whose advance failed, as an
   * operator would ("advance again to complete it"): a failed advance may have moved the global cursors but
   * not trimmed every pool, and the final reckoning counts what the pools hold above the floor. Logged as
   * advances; no ID is handed out after them.
   */
  private void completeFailedAdvances() {
    for (Map.Entry<String, Long> e : unfinishedFloors.entrySet()) {
      String outcome = "failed:none";
      for (int attempt = 0; attempt < 5 && !outcome.equals("ok"); attempt++) {
        ServerNode target = servers.get(attempt % servers.size());
        long started = clock.nanos();
        try {
          admin(target, 60).advanceSequence(
              AdvanceSequenceRequest.newBuilder().setName(e.getKey()).setFloor(e.getValue()).build());
          outcome = "ok";
        } catch (StatusRuntimeException failed) {
          outcome = "failed:" + failed.getStatus().getCode();
        }
        log.line("advance", e.getKey(), e.getValue(), clock.nanos(), outcome, started, target.name());
      }
      say("completed the failed advance of " + e.getKey() + " to " + e.getValue() + ": " + outcome);
    }
  }

  private List<String> snapshot() {
    List<String> lines = new ArrayList<>();
    for (SequenceSpec seq : sequences) {
      GetSequenceRequest request = GetSequenceRequest.newBuilder().setName(seq.name()).build();
      Sequence state = admin(servers.get(0), 30).getSequence(request);
      for (StripeState s : state.getStripeStatesList()) {
        lines.add("final-stripe " + seq.name() + " " + s.getStripe() + " "
            + (s.hasNextUnreserved() ? Long.toString(s.getNextUnreserved()) : "-") + " " + s.getRemaining());
      }
      // Each datacenter's pool as a server of that datacenter reads it: a pool row is written in its own
      // datacenter, and another datacenter's replica of it may still lag (hints after a pause), which
      // would count IDs twice.
      Set<String> poolsRead = new HashSet<>();
      for (ServerNode node : servers) {
        Sequence own = admin(node, 30).getSequence(request);
        if (poolsRead.add(node.datacenter())) {
          for (DatacenterReserve r : own.getDatacenterReservesList()) {
            if (r.getDatacenter().equals(node.datacenter())) {
              lines.add("final-held " + seq.name() + " dc:" + r.getDatacenter() + ":" + r.getStripe() + " "
                  + r.getIds());
            }
          }
        }
        lines.add("final-held " + seq.name() + " server:" + node.name() + " " + own.getServerReserve());
      }
    }
    return lines;
  }

  private static SequenceAdminGrpc.SequenceAdminBlockingStub admin(ServerNode node, long seconds) {
    return SequenceAdminGrpc.newBlockingStub(node.adminChannel()).withDeadlineAfter(seconds, TimeUnit.SECONDS);
  }

  private synchronized void say(String message) {
    System.out.printf("[chaos %6.1fs] %s%n", clock.nanos() / 1e9, message);
  }

  private static String sha256(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = in.read(buffer)) > 0; ) {
        digest.update(buffer, 0, n);
      }
      return HexFormat.of().formatHex(digest.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
