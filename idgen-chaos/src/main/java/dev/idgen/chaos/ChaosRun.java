package dev.idgen.chaos;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.DatacenterReserve;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.api.v1.StripeState;
import dev.idgen.chaos.RunLog.SequenceSpec;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * One chaos run: the two-datacenter Cassandra (started here or already running), {@code servers} idgen
 * servers spread over dc1 and dc2, {@code clients} recording clients (half client stubs, half raw
 * {@code Allocate} callers), and one fault thread that follows a schedule drawn from the seed:
 * <ul>
 *   <li>{@code server-kill}: {@code kill -9} of a random server, restarted on the same port after 0.5–2 s;
 *   <li>{@code cassandra-pause}: SIGSTOP of dc1's or dc2's node for 2–6 s, then SIGCONT ({@code docker pause}
 *       and {@code unpause} when ChaosIT's cluster runs in containers; always resumed: also in a
 *       {@code finally} and a shutdown hook). Shorter than the servers' {@code cas-deadline} (10 s), so every
 *       compare-and-set with an unknown outcome is read back and resolved once the node answers;
 *   <li>{@code client-kill}: a random client dies mid-stream ({@link ChaosClient#kill()}) and a new one takes
 *       its place;
 *   <li>{@code advance-burst}: 3–6 concurrent {@code AdvanceSequence} calls on random servers, floors a little
 *       above the sequence's current cursors. Never within 25 s after a pause ended: a server cut off from
 *       its datacenter's Cassandra learns a floor only when it reconnects (README, "AdvanceSequence"), which
 *       this harness would otherwise report as a violation of a promise the design does not make.
 * </ul>
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
 *   <li>client-kill: its open calls ({@code sequences × max lease} for a stub, {@code max count} for a raw
 *       caller): ranges sent and never read;
 *   <li>advance-burst: nothing counted: IDs at or below the highest floor are excluded from the reckoning,
 *       since an advance drops them on purpose.
 * </ul>
 * Calls that end CANCELLED or DEADLINE_EXCEEDED (timeouts during faults, stubs closed at the end) add what
 * they asked for and did not receive (the checker reads this from the records).
 */
final class ChaosRun {
  /** What a run is told. */
  record Settings(Duration duration, long seed, int servers, int clients, Path out, boolean useRunningCassandra,
      Path serverJar, Path repoRoot, long rate, long int32Space) {}

  private static final long INT32_MAX = 2_147_483_647L;
  private static final long PAUSE_SHADOW_NANOS = TimeUnit.SECONDS.toNanos(25);

  private final Settings settings;
  private final RunClock clock = new RunClock();
  private final Random random;
  private final ChaosCassandra cassandra;
  /** The launcher's cluster when this run starts and stops it, else null. */
  private final CassandraCluster launcher;
  private final List<ServerNode> servers = new ArrayList<>();
  private final List<ChaosClient> clients = new CopyOnWriteArrayList<>();
  private final List<SequenceSpec> sequences = new ArrayList<>();
  private final String keyspace;
  private RunLog log;
  private int nextClientId;
  private int faults;
  private long lastPauseEndNanos = Long.MIN_VALUE / 2;
  private long deadlineNanos;
  private boolean startedCassandra;

  /**
   * A run against {@code cassandra}; {@code launcher}, if not null, is started before and stopped after (unless
   * {@link Settings#useRunningCassandra()}).
   */
  ChaosRun(Settings settings, ChaosCassandra cassandra, CassandraCluster launcher) {
    this.settings = settings;
    this.random = new Random(settings.seed());
    this.cassandra = cassandra;
    this.launcher = launcher;
    this.keyspace = "chaos_" + Long.toHexString(settings.seed() & 0xffff_ffffL) + "_"
        + Long.toHexString(System.currentTimeMillis() & 0xffff_ffL);
  }

  /** Runs, records everything in {@code out}, and returns once everything it started is stopped. */
  void run() throws Exception {
    Files.createDirectories(settings.out());
    Thread hook = new Thread(this::emergencyStop, "chaos-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try (RunLog runLog = new RunLog(settings.out())) {
      this.log = runLog;
      log.line("seed", settings.seed());
      log.line("note", "keyspace", keyspace, "servers", settings.servers(), "clients", settings.clients(),
          "duration", settings.duration());
      try {
        if (launcher != null && !settings.useRunningCassandra()) {
          say("starting the two-datacenter Cassandra (" + CassandraCluster.SCRIPT + ")");
          launcher.start();
          startedCassandra = true;
        }
        startServers();
        createSequences();
        long runNanos = settings.duration().toNanos();
        deadlineNanos = System.nanoTime() + runNanos + TimeUnit.SECONDS.toNanos(30);
        for (int i = 0; i < settings.clients(); i++) {
          startClient(i % 2 == 0);
        }
        say("running for " + settings.duration() + " with " + settings.clients() + " clients");
        faults(runNanos);
        finish();
      } finally {
        cassandra.resumeAll();
        for (ChaosClient c : clients) {
          c.kill();
        }
        for (ServerNode s : servers) {
          s.close();
        }
        if (startedCassandra) {
          launcher.stop();
        }
      }
    } finally {
      Runtime.getRuntime().removeShutdownHook(hook);
    }
  }

  /** The shutdown hook: never leave a node frozen or a server running. */
  private void emergencyStop() {
    cassandra.resumeAll();
    for (ServerNode s : servers) {
      try {
        s.kill();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
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
    for (int i = 0; i < settings.servers(); i++) {
      String dc = i % 2 == 0 ? "dc1" : "dc2";
      ServerNode node = new ServerNode("server-" + i, dc, freePort(), settings.serverJar(), dir, List.of(
          "idgen.store=cassandra",
          "idgen.cassandra.contact-points=" + cassandra.contactPoint(dc),
          "idgen.cassandra.local-datacenter=" + dc,
          "idgen.cassandra.keyspace=" + keyspace,
          "idgen.cassandra.create-schema=true",
          "idgen.cassandra.replication.dc1=1",
          "idgen.cassandra.replication.dc2=1",
          "idgen.cassandra.floor-refresh=500ms",
          // Each server's metrics endpoint on a port of its own, kept across restarts.
          "idgen.metrics.host=127.0.0.1",
          "idgen.metrics.port=" + freePort()));
      servers.add(node);
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
    sequences.add(new SequenceSpec("chaos-dense", 1, Long.MAX_VALUE, 1, 2_000, 20_000));
    sequences.add(new SequenceSpec("chaos-striped", 1_000, Long.MAX_VALUE, 4, 1_000, 10_000));
    sequences.add(new SequenceSpec("chaos-int32", INT32_MAX - settings.int32Space() + 1, INT32_MAX, 2, 1_000,
        10_000));
    SequenceAdminGrpc.SequenceAdminBlockingStub admin = admin(servers.get(0), 60);
    for (SequenceSpec s : sequences) {
      admin.createSequence(CreateSequenceRequest.newBuilder().setName(s.name()).setStart(s.start())
          .setMax(s.max()).setStripes(s.stripes()).setNodeBlockSize(s.nodeBlock()).setDcBlockSize(s.dcBlock())
          .build());
      log.sequence(s);
    }
  }

  private void startClient(boolean stub) {
    int id = nextClientId++;
    List<String> targets = servers.stream().map(ServerNode::target).toList();
    ChaosClient c = new ChaosClient(id, stub, targets, sequences.stream().map(SequenceSpec::name).toList(),
        settings.out(), clock, settings.seed() * 31 + id, deadlineNanos, settings.rate());
    clients.add(c);
    c.start();
  }

  // --- faults ----------------------------------------------------------------------------------------

  private void faults(long runNanos) throws Exception {
    long start = System.nanoTime();
    long warmup = Math.min(TimeUnit.SECONDS.toNanos(10), runNanos / 8);
    long cooldown = Math.min(TimeUnit.SECONDS.toNanos(20), runNanos / 6);
    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(warmup));
    // Every kind once first (in a seeded order, the advance burst before the pause so that it is not held
    // back by the pause's shadow), then kinds drawn at random.
    List<String> firstRound = new ArrayList<>(List.of("server-kill", "cassandra-pause", "client-kill",
        "advance-burst"));
    Collections.shuffle(firstRound, random);
    if (firstRound.indexOf("cassandra-pause") < firstRound.indexOf("advance-burst")) {
      Collections.swap(firstRound, firstRound.indexOf("cassandra-pause"),
          firstRound.indexOf("advance-burst"));
    }
    // The first round always completes (even on a slow machine), so that every run sees every kind.
    while (faults < firstRound.size() || System.nanoTime() - start < runNanos - cooldown) {
      Thread.sleep(1_000 + random.nextInt(4_000));
      if (faults >= firstRound.size() && System.nanoTime() - start >= runNanos - cooldown) {
        break;
      }
      String kind;
      if (faults < firstRound.size()) {
        kind = firstRound.get(faults);
      } else {
        int pick = random.nextInt(10);
        kind = pick < 3 ? "server-kill" : pick < 5 ? "cassandra-pause" : pick < 8 ? "client-kill" : "advance-burst";
      }
      if (kind.equals("advance-burst") && System.nanoTime() < lastPauseEndNanos + PAUSE_SHADOW_NANOS) {
        kind = "client-kill";
      }
      switch (kind) {
        case "server-kill" -> killServer();
        case "cassandra-pause" -> pauseCassandra();
        case "client-kill" -> killClient();
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

  private long callsInFlightBound() {
    long stubs = clients.stream().filter(ChaosClient::isStub).count();
    long raws = clients.size() - stubs;
    return stubs * sequences.size() * ChaosClient.STUB_MAX_LEASE + raws * ChaosClient.RAW_MAX_COUNT;
  }

  private void killServer() throws Exception {
    ServerNode node = servers.get(random.nextInt(servers.size()));
    long delay = 500 + random.nextInt(1_500);
    long bound = blocksPerServer() + callsInFlightBound();
    log.fault(clock.millis(), "server-kill", bound, node.name() + " restart-after-ms=" + delay);
    report(node, "kill"); // what it is about to lose, in its own words
    say("kill -9 " + node);
    node.kill();
    Thread.sleep(delay);
    startServer(node);
    clients.forEach(ChaosClient::resetConnectBackoff);
    say("restarted " + node);
  }

  private void pauseCassandra() throws Exception {
    String dc = random.nextBoolean() ? "dc1" : "dc2";
    long pauseMillis = 2_000 + random.nextInt(4_000);
    long bound = 2 * servers.size() * blocksPerServer();
    log.fault(clock.millis(), "cassandra-pause", bound, dc + " " + cassandra.describe(dc) + " ms=" + pauseMillis);
    say("pausing cassandra " + dc + " for " + pauseMillis + " ms");
    try {
      cassandra.pause(dc);
      Thread.sleep(pauseMillis);
    } finally {
      cassandra.resume(dc);
      lastPauseEndNanos = System.nanoTime();
    }
  }

  private void killClient() throws InterruptedException {
    ChaosClient victim = clients.get(random.nextInt(clients.size()));
    long bound = victim.isStub() ? sequences.size() * ChaosClient.STUB_MAX_LEASE : ChaosClient.RAW_MAX_COUNT;
    log.fault(clock.millis(), "client-kill", bound, victim.toString());
    say("killing " + victim);
    victim.kill();
    clients.remove(victim);
    startClient(victim.isStub());
  }

  private void advanceBurst() throws Exception {
    // Only the unbounded sequences: the 32-bit one is left to run out by itself.
    SequenceSpec seq = sequences.get(random.nextInt(2));
    Sequence state = admin(servers.get(random.nextInt(servers.size())), 30)
        .getSequence(GetSequenceRequest.newBuilder().setName(seq.name()).build());
    long cursor = state.getStripeStatesList().stream().filter(StripeState::hasNextUnreserved)
        .mapToLong(StripeState::getNextUnreserved).max().orElse(seq.start());
    long base = cursor + random.nextInt((int) seq.dcBlock());
    int calls = 3 + random.nextInt(4);
    log.fault(clock.millis(), "advance-burst", 0, seq.name() + " calls=" + calls + " base-floor=" + base);
    say("advance burst on " + seq.name() + ": " + calls + " calls from floor " + base);
    ExecutorService pool = Executors.newFixedThreadPool(calls);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < calls; i++) {
        long floor = base + random.nextInt(1_000);
        ServerNode target = servers.get(random.nextInt(servers.size()));
        done.add(pool.submit(() -> {
          go.await();
          try {
            admin(target, 60).advanceSequence(
                AdvanceSequenceRequest.newBuilder().setName(seq.name()).setFloor(floor).build());
            log.line("advance", seq.name(), floor, clock.nanos(), "ok");
          } catch (StatusRuntimeException e) {
            log.line("advance", seq.name(), floor, clock.nanos(), "failed:" + e.getStatus().getCode());
          }
          return null;
        }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(90, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  // --- the end -------------------------------------------------------------------------------------

  private void finish() throws Exception {
    cassandra.resumeAll();
    for (ServerNode s : servers) {
      if (!s.alive()) {
        startServer(s);
      }
    }
    say("stopping the clients");
    for (ChaosClient c : clients) {
      c.stop();
    }
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
    log.line("faults-injected", faults);
    log.line("end", clock.millis());
  }

  /** Logs what a server says it holds in memory (GetSequence) and has counted as lost (its metrics). */
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
    log.line("reported", node.name(), when, held, node.lostCounted());
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
      for (DatacenterReserve r : state.getDatacenterReservesList()) {
        lines.add("final-held " + seq.name() + " dc:" + r.getDatacenter() + ":" + r.getStripe() + " " + r.getIds());
      }
      for (ServerNode node : servers) {
        Sequence own = admin(node, 30).getSequence(request);
        lines.add("final-held " + seq.name() + " server:" + node.name() + " " + own.getServerReserve());
      }
    }
    return lines;
  }

  private static SequenceAdminGrpc.SequenceAdminBlockingStub admin(ServerNode node, long seconds) {
    return SequenceAdminGrpc.newBlockingStub(node.adminChannel()).withDeadlineAfter(seconds, TimeUnit.SECONDS);
  }

  private void say(String message) {
    System.out.printf("[chaos %6.1fs] %s%n", clock.nanos() / 1e9, message);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
