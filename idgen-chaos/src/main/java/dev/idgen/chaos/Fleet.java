package dev.idgen.chaos;

import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.chaos.RunLog.SequenceSpec;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The run's idgen servers: one slot per server ({@link ServerNode}, each on a fixed port that survives its
 * restarts), started here, and what the run logs of them (their counters, what they hold at a kill).
 *
 * <p>Threads: the slots are added by the main thread before any client or fault starts; every other thread
 * (faults, bursts, restarts, the owner monitor, the shutdown hook) reads them, hence a copy-on-write list. A
 * slot's own state is {@link ServerNode}'s (thread-safe); starting one slot twice at once is the callers' to
 * avoid (the fault thread waits for an owner kill's restart before it touches a server).
 */
final class Fleet {
  /** The copy of the server jar every incarnation runs from, in the run's {@code servers} directory. */
  private static final String SERVER_JAR_COPY = "idgen-server.jar";

  private final List<ServerNode> nodes = new CopyOnWriteArrayList<>();
  /** Each server's fake clock, by name: only in a run with {@code clock-server} (written before any fault). */
  private final Map<String, FakeClock> clocks = new java.util.concurrent.ConcurrentHashMap<>();
  private final RunLog log;
  private final Narrator narrator;

  Fleet(RunLog log, Narrator narrator) {
    this.log = log;
    this.narrator = narrator;
  }

  List<ServerNode> nodes() {
    return nodes;
  }

  ServerNode get(int slot) {
    return nodes.get(slot);
  }

  int size() {
    return nodes.size();
  }

  /** The run's servers ({@code settings.servers()}, alternately in dc1 and dc2), each started and SERVING. */
  void startAll(ChaosRun.Settings settings, ChaosCassandra cassandra, String keyspace)
      throws IOException, InterruptedException {
    Path dir = settings.out().resolve("servers");
    Files.createDirectories(dir);
    // Every incarnation runs from a copy taken now: a rebuild of the server jar during the run (other work
    // in the same checkout) would otherwise break the running JVMs (classes loaded lazily from a replaced
    // jar) and give restarted servers another build.
    Path jar = dir.resolve(SERVER_JAR_COPY);
    Files.copy(settings.serverJar(), jar, StandardCopyOption.REPLACE_EXISTING);
    String sha256 = sha256(jar);
    log.line("note", "server-jar", settings.serverJar(), "sha256", sha256);
    narrator.say("servers run from a copy of " + settings.serverJar() + " (sha256 " + sha256 + ")");
    Optional<ChaosNetwork> network = cassandra.network();
    // Only a run that steps the servers' clocks starts them on a fake wall clock.
    Optional<Path> faketime = settings.faultKinds().contains(ClockServer.KIND)
        ? Optional.of(FakeClock.library().orElseThrow(() -> new IllegalStateException(
            ClockServer.KIND + ": " + FakeClock.unavailable().orElse("the wall-clock shim is missing"))))
        : Optional.empty();
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
      List<String> serverSettings = serverSettings(settings, cassandra, keyspace, dc, host);
      ServerNode node = new ServerNode("server-" + i, dc, host, exec, freePort(), jar, dir, serverSettings);
      if (faketime.isPresent()) {
        FakeClock clock = new FakeClock(faketime.get(), dir.resolve("clocks").resolve(node.name()));
        node.environment(clock.environment());
        clocks.put(node.name(), clock);
      }
      nodes.add(node);
      log.line("server", node.name(), i, node.target(), dc);
      start(node);
      narrator.say("started " + node + (faketime.isPresent() ? " under a fake clock" : ""));
    }
  }

  /** {@code node}'s fake clock (a run with clock-server only). */
  FakeClock clock(ServerNode node) {
    FakeClock c = clocks.get(node.name());
    if (c == null) {
      throw new IllegalStateException(node.name() + " was not started under a fake clock: is " + ClockServer.KIND
          + " a kind of this run?");
    }
    return c;
  }

  /**
   * What every harness server says of its store: Cassandra, the cluster's contact point in {@code dc}, the
   * keyspace (created by the first server), the replication of both datacenters and a fast floor refresh.
   */
  static List<String> storeSettings(ChaosCassandra cassandra, String keyspace, String dc) {
    return List.of(
        "idgen.store=cassandra",
        "idgen.cassandra.contact-points=" + cassandra.contactPoint(dc),
        "idgen.cassandra.local-datacenter=" + dc,
        "idgen.cassandra.keyspace=" + keyspace,
        "idgen.cassandra.create-schema=true",
        // Every node of a datacenter, up to three: LOCAL_SERIAL and SERIAL need real quorums.
        "idgen.cassandra.replication.dc1=" + cassandra.replication("dc1"),
        "idgen.cassandra.replication.dc2=" + cassandra.replication("dc2"),
        "idgen.cassandra.floor-refresh=500ms");
  }

  private static List<String> serverSettings(ChaosRun.Settings settings, ChaosCassandra cassandra, String keyspace,
      String dc, String host) throws IOException {
    List<String> serverSettings = new ArrayList<>(storeSettings(cassandra, keyspace, dc));
    serverSettings.addAll(List.of(
        "idgen.allocator.unload-idle-after=" + settings.unloadIdleAfter().toMillis() + "ms",
        // Advances wait this (+ a margin) after every live server confirmed; stubs drop leases this old.
        "idgen.advance.client-lease-lifetime=" + ChaosRun.CLIENT_LEASE_LIFETIME,
        // Each server's metrics endpoint on a port of its own, kept across restarts.
        "idgen.metrics.host=" + host,
        "idgen.metrics.port=" + freePort()));
    if (settings.strictOwnerLease() != null) { // else the servers' default
      serverSettings.add("idgen.strict.owner-lease=" + settings.strictOwnerLease().toMillis() + "ms");
    }
    return serverSettings;
  }

  /** Starts a server, trying another time if its port was taken meanwhile or the start failed. */
  void start(ServerNode node) throws IOException, InterruptedException {
    for (int attempt = 1; ; attempt++) {
      try {
        node.start();
        return;
      } catch (IOException e) {
        if (attempt == 3) {
          throw e;
        }
        narrator.say("retrying the start of " + node + ": " + e.getMessage());
        Thread.sleep(2_000);
      }
    }
  }

  /** The server slot whose gRPC target is {@code target} (or, failing that, whose port it names). */
  Optional<ServerNode> nodeOf(String target) {
    Optional<ServerNode> exact = nodes.stream().filter(n -> n.target().equals(target)).findFirst();
    if (exact.isPresent()) {
      return exact;
    }
    return nodes.stream().filter(n -> target.endsWith(":" + n.port())).findFirst();
  }

  /**
   * Logs what a server says it holds in memory (GetSequence, of {@code sequences}, only {@code when} it is
   * about to be killed), has counted as lost, and its compare-and-set outcomes (its metrics, one scrape);
   * its counters under {@code label} (a fault's number, or {@code end}).
   */
  void report(ServerNode node, String when, String label, List<SequenceSpec> sequences) {
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
    logCounters(node, label, counters);
  }

  /** Every live server's counters at the start of fault {@code label}: what each kind did is the difference. */
  void snapshotCounters(String label) {
    for (ServerNode node : nodes) {
      if (node.alive()) {
        logCounters(node, label, node.counters());
      }
    }
  }

  /** A new incarnation of {@code node} started during fault {@code label}: its counters start at 0. */
  void started(ServerNode node, String label) {
    log.counters(label, node.name(), node.incarnation(), 0, Map.of());
  }

  private void logCounters(ServerNode node, String label, ServerNode.Counters counters) {
    if (counters == null) {
      return; // unreadable: its counts go to the fault of its previous line
    }
    Map<String, Long> counts = new TreeMap<>(counters.cas());
    counters.attempts().forEach((tier, n) -> counts.put(tier + ":attempts", n));
    log.counters(label, node.name(), node.incarnation(), counters.lost(), counts);
  }

  /** The compare-and-sets the live servers of {@code dc} have sent, both tiers (-1 if none could be read). */
  long casAttempts(String dc) {
    long sum = -1;
    for (ServerNode node : nodes) {
      if (node.datacenter().equals(dc) && node.alive()) {
        ServerNode.Counters c = node.counters();
        if (c != null) {
          sum = Math.max(sum, 0) + c.attempts().values().stream().mapToLong(Long::longValue).sum();
        }
      }
    }
    return sum;
  }

  /** Kills every server (the shutdown hook's); never throws. */
  void killAll() {
    for (ServerNode s : nodes) {
      try {
        s.kill();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Stops every server (the end of a run, in its {@code finally}). */
  void closeAll() throws InterruptedException {
    for (ServerNode s : nodes) {
      s.close();
    }
  }

  static SequenceAdminGrpc.SequenceAdminBlockingStub admin(ServerNode node, long seconds) {
    return SequenceAdminGrpc.newBlockingStub(node.adminChannel()).withDeadlineAfter(seconds, TimeUnit.SECONDS);
  }

  private static String sha256(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      return sha256(in);
    }
  }

  /** The SHA-256 of what {@code in} has left, in hex: the server jar's here, the shim's source in FakeClock. */
  static String sha256(InputStream in) throws IOException {
    try {
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
