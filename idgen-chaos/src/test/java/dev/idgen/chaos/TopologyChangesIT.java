package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.api.v1.StripeState;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Cassandra cluster's membership changed under idgen while clients allocate and advances run: a dead node
 * replaced ({@code replace_address_first_boot}), a node bootstrapped into dc1, a full repair and a cleanup, a
 * third datacenter added to the keyspace's replication (with a server of its own) and removed again, and the
 * bootstrapped node decommissioned ({@link TopologyChanges}), each once; five rounds of them are a recorded run
 * (RELIABILITY.md). Every change alters the replicas a compare-and-set's Paxos quorum is
 * drawn from (Jepsen found LWT split-brain in Scylla after joins and leaves).
 *
 * <p>Three servers (two in dc1, one in dc2) on loopback; two raw {@code Allocate} callers on a per-server sequence
 * and two on an {@code ORDERING_STRICT} one, each call on a random server; an advance of both sequences every
 * 8 s, at a floor above the global cursor (every ID cached anywhere is at or below it). Checked: no ID handed
 * out twice, no ID at or below the floor of an advance that had returned OK before its call started, the strict
 * order ({@link StrictOrder}), every server serving after each change, and the advance right after the
 * {@code ALTER KEYSPACE} that adds dc3 covers it (dc3's pool rows carry the floor). Printed: how long each change
 * took, and what the clients and the servers saw during it (outcomes by status, the servers' WARN and ERROR lines).
 *
 * <p>Needs the netns cluster ({@link ChaosClusterExtension}: root); skipped without, saying why. It leaves the
 * cluster as it found it (the spare it bootstraps is the one it decommissions, the dead node is replaced at its
 * own address, dc3 leaves again), and starts the cluster afresh if a change failed half-way, so that the other
 * chaos ITs of the JVM find their layout. About 7 minutes on the 2-core machine, most of it Cassandra's joins and
 * streams. Tagged {@code full}.
 */
@ExtendWith(ChaosClusterExtension.class)
@Tag("full")
class TopologyChangesIT {
  private static final Duration CHANGE_TIMEOUT = Duration.ofMinutes(10);
  private static final String PER_SERVER = "topo-default";
  private static final String STRICT = "topo-strict";
  private static final long CALL_DEADLINE_MILLIS = 5_000;
  private static final long SERVING_SECONDS = 90;
  /**
   * A stretch of load without a change, before the first and after the last (twice this with dc3's server):
   * the advances every 8 s and the callers' ~50 calls a second meet every phase anyway.
   */
  private static final int STEADY_SECONDS = 5;

  private final Map<String, Map<String, LongAdder>> outcomes = new ConcurrentHashMap<>();
  /** The first few failures of each phase, with the status's description: what the clients were told. */
  private final Map<String, List<String>> failures = new ConcurrentHashMap<>();
  /** When each phase's first call or advance ended: the report's order. */
  private final Map<String, Long> firstSeen = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<Advance> advances = new ConcurrentLinkedQueue<>();
  private final List<ServerNode> targets = new CopyOnWriteArrayList<>();
  private final Map<String, List<String>> serverLines = new LinkedHashMap<>();
  private final Map<Path, Long> logOffsets = new HashMap<>();
  private volatile String phase = "steady";
  private volatile boolean stopped;

  /** A call that handed out IDs: its sequence, phase, run times, and ranges as {first, count} (stride 1). */
  private record Call(String sequence, String phase, int client, int server, long startNanos, long endNanos,
      List<long[]> ranges, String status) {
    long min() {
      return ranges.stream().mapToLong(r -> r[0]).min().orElseThrow();
    }

    long max() {
      return ranges.stream().mapToLong(r -> r[0] + r[1] - 1).max().orElseThrow();
    }

    long ids() {
      return ranges.stream().mapToLong(r -> r[1]).sum();
    }
  }

  /** An advance that returned OK at {@code okNanos}: no call started after it may get an ID at or below the floor. */
  private record Advance(String sequence, long floor, long okNanos, String phase) {}

  @Test
  void should_serve_unique_ordered_ids_above_every_floor_through_membership_changes(ChaosCassandra cassandra)
      throws Exception {
    assumeTrue(cassandra.network().isPresent(), () -> "no network namespaces: " + cassandra.whyNoNetwork());
    CassandraCluster cluster = (CassandraCluster) cassandra;
    List<String> layout = cluster.members();
    TopologyChanges changes = new TopologyChanges(cluster, CHANGE_TIMEOUT);
    Path dir = Path.of(property("idgenChaosOut") + "-topology");
    Files.createDirectories(dir);
    Path jar = dir.resolve("idgen-server.jar"); // a copy: a rebuild meanwhile must not break the running JVMs
    Files.copy(Path.of(property("idgenServerJar")), jar, StandardCopyOption.REPLACE_EXISTING);
    String keyspace = "topology_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
    List<ServerNode> servers = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    List<TopologyChanges.Change> done = new ArrayList<>();
    boolean restored = false;
    long t0 = System.nanoTime();
    try {
      for (String dc : List.of("dc1", "dc2", "dc1")) {
        ServerNode s = server("server-" + servers.size(), dc, cluster, keyspace, jar, dir);
        servers.add(s);
        s.start();
      }
      targets.addAll(servers);
      SequenceAdminGrpc.SequenceAdminBlockingStub admin = SequenceAdminGrpc.newBlockingStub(servers.get(0).adminChannel())
          .withDeadlineAfter(60, TimeUnit.SECONDS);
      admin.createSequence(CreateSequenceRequest.newBuilder().setName(PER_SERVER).setStart(1).setStripes(1)
          .setNodeBlockSize(500).setDcBlockSize(5_000).build());
      admin.createSequence(CreateSequenceRequest.newBuilder().setName(STRICT).setStart(1).setStripes(1)
          .setNodeBlockSize(500).setDcBlockSize(5_000).setOrdering(Ordering.ORDERING_STRICT)
          .setHomeDatacenter("dc1").build());
      for (int i = 0; i < 2; i++) {
        threads.add(thread("topo-client-" + i, i, PER_SERVER, 200));
        threads.add(thread("topo-strict-" + i, 10 + i, STRICT, 4));
      }
      Thread advancer = new Thread(this::advanceEvery8s, "topo-advance");
      threads.add(advancer);
      threads.forEach(Thread::start);
      serverLog(servers, "start");

      steady(STEADY_SECONDS, servers);
      // The joins first, the departures last: a node starts only once no address has left the ring for the
      // gossip quarantine (TopologyChanges.QUARANTINE, 75 s), so a departure before a join or a replacement
      // is a wait of up to 75 s in which nothing changes. The in-place replacement keeps its address.
      String spare = cluster.spare("dc1").orElseThrow();
      done.add(change("replace", servers, () -> changes.replace(cluster.nodes("dc1").get(1), true)));
      done.add(change("bootstrap", servers, () -> changes.bootstrap("dc1")));
      done.add(change("repair", servers, () -> changes.repair(keyspace)));
      done.add(change("cleanup", servers, () -> changes.cleanup()));

      // A third datacenter: its node joins, the keyspace replicates there, and the next advance covers it.
      done.add(change("dc3-join", servers, () -> changes.joinDatacenter("dc3")));
      done.add(change("dc3-replicate", servers, () -> changes.replicate("dc3", List.of(keyspace))));
      long altered = System.nanoTime();
      Map<String, Long> floors = new TreeMap<>();
      for (String seq : List.of(PER_SERVER, STRICT)) {
        floors.put(seq, advanceUntilOk(servers.get(0), seq, "dc3-advance"));
      }
      System.out.printf(Locale.ROOT, "[topology-it] first advances after the ALTER KEYSPACE returned OK %.1f s after it%n",
          (System.nanoTime() - altered) / 1e9);
      try (CqlSession dc3 = ClusterSessions.session(cluster, "dc3")) {
        for (Map.Entry<String, Long> f : floors.entrySet()) {
          Row row = dc3.execute(SimpleStatement.newInstance("SELECT floor FROM " + keyspace + ".dc_pools WHERE"
              + " sequence = ? AND stripe = 0 AND datacenter = 'dc3'", f.getKey())
              .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM)).one();
          assertThat(row).as("dc3's pool row of %s after the advance", f.getKey()).isNotNull();
          assertThat(row.getLong("floor")).as("dc3's pool floor of %s", f.getKey()).isGreaterThanOrEqualTo(f.getValue());
        }
      }
      done.add(change("dc3-rebuild", servers, () -> changes.rebuild("dc3", List.of(keyspace))));
      ServerNode dc3Server = server("server-3", "dc3", cluster, keyspace, jar, dir);
      servers.add(dc3Server);
      phase = "dc3-serving";
      dc3Server.start();
      targets.add(dc3Server);
      steady(2 * STEADY_SECONDS, servers);
      assertServing(servers, "dc3-serving");
      targets.remove(dc3Server);
      assertThat(dc3Server.stop(Duration.ofSeconds(60))).as("server-3's graceful stop, within 60 s").isNotEqualTo(-1);
      servers.remove(dc3Server);
      dc3Server.close();
      done.add(change("dc3-remove", servers, () -> changes.removeDatacenter("dc3", List.of(keyspace))));
      done.add(change("decommission", servers, () -> changes.decommission(spare)));
      steady(STEADY_SECONDS, servers);
      restored = cluster.members().stream().sorted().toList().equals(layout.stream().sorted().toList());
    } finally {
      stopped = true;
      for (Thread t : threads) {
        t.join(TimeUnit.SECONDS.toMillis(90));
      }
      for (ServerNode s : servers) {
        s.close();
      }
      if (!restored) {
        System.out.println("[topology-it] the cluster is not as it was (" + cluster.members() + ", was " + layout
            + "): starting it afresh for the other ITs");
        cluster.stop();
        cluster.start();
      }
      System.out.printf(Locale.ROOT, "[topology-it] done in %.0f s%n", (System.nanoTime() - t0) / 1e9);
      report(done);
    }

    assertThat(threads).as("client and advance threads ended").noneMatch(Thread::isAlive);
    for (String seq : List.of(PER_SERVER, STRICT)) {
      List<Call> of = calls.stream().filter(c -> c.sequence().equals(seq)).toList();
      assertThat(of).as("calls of %s that got IDs", seq).isNotEmpty();
      assertThat(duplicates(of)).as("IDs of %s handed out twice", seq).isEmpty();
      assertThat(belowFloor(of, seq)).as("calls of %s with IDs at or below an advance's floor", seq).isEmpty();
    }
    List<StrictOrder.Call> strict = calls.stream().filter(c -> c.sequence().equals(STRICT))
        .map(c -> new StrictOrder.Call(c.client(), c.server(), c.startNanos(), c.endNanos(), c.min(), c.max(),
            c.ids(), c.status())).toList();
    StrictOrder.Result order = StrictOrder.check(strict, 5);
    assertThat(order.violations()).as("strict calls out of order: %s",
        order.examples().stream().map(StrictOrder.Violation::describe).toList()).isZero();
    assertThat(advances).as("advances that returned OK").hasSizeGreaterThan(10);
    assertThat(restored).as("the cluster's members as before").isTrue();
  }

  // --- changes, and what was seen during them ----------------------------------------------------------

  /** A step that changes the cluster. */
  private interface Step {
    TopologyChanges.Change run() throws Exception;
  }

  /** Runs {@code step} as phase {@code name}, then checks that every server serves both sequences. */
  private TopologyChanges.Change change(String name, List<ServerNode> servers, Step step) throws Exception {
    phase = name;
    System.out.println("[topology-it] " + name + "...");
    TopologyChanges.Change c = step.run();
    System.out.println("[topology-it] " + c.describe());
    assertServing(servers, name);
    serverLog(servers, name);
    phase = "after-" + name;
    return c;
  }

  private void steady(int seconds, List<ServerNode> servers) throws Exception {
    String was = phase;
    Thread.sleep(seconds * 1_000L); // load runs meanwhile: a stretch without a change
    serverLog(servers, was);
  }

  /** Every server hands out IDs of both sequences again, within {@value #SERVING_SECONDS} s. */
  private static void assertServing(List<ServerNode> servers, String after) throws InterruptedException {
    for (ServerNode s : servers) {
      for (String seq : List.of(PER_SERVER, STRICT)) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SERVING_SECONDS);
        String last = "";
        boolean ok = false;
        while (!ok && System.nanoTime() < deadline) {
          try {
            Iterator<IdRange> it = IdGenGrpc.newBlockingStub(s.adminChannel()).withDeadlineAfter(5, TimeUnit.SECONDS)
                .allocate(AllocateRequest.newBuilder().setSequence(seq).setCount(1).build());
            ok = it.hasNext();
            while (it.hasNext()) {
              it.next();
            }
          } catch (StatusRuntimeException e) {
            last = e.getStatus().getCode() + ": " + e.getStatus().getDescription();
            Thread.sleep(1_000); // the next try: a server may be re-resolving a compare-and-set
          }
        }
        assertThat(ok).as("%s serves %s after %s (last: %s)", s.name(), seq, after, last).isTrue();
      }
    }
  }

  /** The WARN and ERROR lines the servers logged since the last call, kept for the report under {@code phase}. */
  private void serverLog(List<ServerNode> servers, String name) {
    List<String> lines = serverLines.computeIfAbsent(name, k -> new ArrayList<>());
    for (ServerNode s : servers) {
      Path log = s.log();
      if (log == null || !Files.exists(log)) {
        continue;
      }
      try {
        byte[] all = Files.readAllBytes(log);
        long from = logOffsets.getOrDefault(log, 0L);
        logOffsets.put(log, (long) all.length);
        String text = new String(all, (int) Math.min(from, all.length), (int) (all.length - Math.min(from, all.length)),
            StandardCharsets.UTF_8);
        for (String line : text.split("\n")) {
          if (line.contains(" WARN ") || line.contains(" ERROR ")) {
            lines.add(s.name() + ": " + line);
          }
        }
      } catch (IOException e) {
        lines.add(s.name() + ": (log unreadable: " + e + ")");
      }
    }
  }

  private void report(List<TopologyChanges.Change> done) {
    System.out.println("[topology-it] changes:");
    for (TopologyChanges.Change c : done) {
      System.out.println("[topology-it]   " + c.describe());
    }
    System.out.println("[topology-it] outcomes by phase (calls; allocations and advances):");
    outcomes.keySet().stream().sorted(Comparator.comparingLong(p -> firstSeen.getOrDefault(p, 0L))).forEach(p -> {
      System.out.println("[topology-it]   " + p + ": " + new TreeMap<>(outcomes.get(p)));
      failures.getOrDefault(p, List.of()).forEach(f -> System.out.println("[topology-it]       " + f));
    });
    System.out.println("[topology-it] servers' WARN/ERROR lines by phase (count, first three):");
    serverLines.forEach((p, lines) -> {
      System.out.println("[topology-it]   " + p + ": " + lines.size());
      lines.stream().limit(3).forEach(l -> System.out.println("[topology-it]       "
          + (l.length() > 300 ? l.substring(0, 300) + "…" : l)));
    });
  }

  // --- load -------------------------------------------------------------------------------------------

  private Thread thread(String name, int client, String sequence, int maxCount) {
    Thread t = new Thread(() -> allocateLoop(client, sequence, maxCount), name);
    t.setDaemon(true);
    return t;
  }

  /** Raw Allocate calls on random servers until stopped, each recorded with its phase; at most ~50 calls a second. */
  private void allocateLoop(int client, String sequence, int maxCount) {
    Random random = new Random(client);
    while (!stopped) {
      List<ServerNode> now = List.copyOf(targets);
      int slot = random.nextInt(now.size());
      ServerNode s = now.get(slot);
      String during = phase;
      List<long[]> ranges = new ArrayList<>();
      String status = "OK";
      long start = System.nanoTime();
      try {
        Iterator<IdRange> it = IdGenGrpc.newBlockingStub(s.adminChannel())
            .withDeadlineAfter(CALL_DEADLINE_MILLIS, TimeUnit.MILLISECONDS)
            .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(1 + random.nextInt(maxCount)).build());
        while (it.hasNext()) {
          IdRange r = it.next();
          if (r.getCount() > 1 && r.getStride() != 1) {
            throw new AssertionError("a range with stride " + r.getStride() + " of a one-stripe sequence: " + r);
          }
          ranges.add(new long[] {r.getFirst(), r.getCount()});
        }
      } catch (StatusRuntimeException e) {
        status = e.getStatus().getCode().name();
        sample(during, sequence + " on " + s.name() + ": " + e.getStatus());
      }
      long end = System.nanoTime();
      count(during, sequence + ":" + status);
      if (!ranges.isEmpty()) {
        calls.add(new Call(sequence, during, client, Integer.parseInt(s.name().substring("server-".length())), start,
            end, List.copyOf(ranges), status));
      }
      try {
        Thread.sleep(status.equals("OK") ? 20 : 200); // a bounded rate; a failing server is not hammered
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void advanceEvery8s() {
    Random random = new Random(99);
    while (!stopped) {
      try {
        Thread.sleep(8_000); // the advances' pace: an advance takes ~3 s (its servers' lease lifetime, 2 s, and more)
      } catch (InterruptedException e) {
        return;
      }
      for (String seq : List.of(PER_SERVER, STRICT)) {
        List<ServerNode> now = List.copyOf(targets);
        advance(now.get(random.nextInt(now.size())), seq, phase);
      }
    }
  }

  /** One advance at a floor 1,000 above the global cursor; the floor if it returned OK, else -1. */
  private long advance(ServerNode s, String seq, String during) {
    try {
      SequenceAdminGrpc.SequenceAdminBlockingStub admin = SequenceAdminGrpc.newBlockingStub(s.adminChannel());
      long cursor = admin.withDeadlineAfter(10, TimeUnit.SECONDS)
          .getSequence(GetSequenceRequest.newBuilder().setName(seq).build()).getStripeStatesList().stream()
          .filter(StripeState::hasNextUnreserved).mapToLong(StripeState::getNextUnreserved).max().orElse(1);
      long floor = cursor + 1_000;
      admin.withDeadlineAfter(60, TimeUnit.SECONDS)
          .advanceSequence(AdvanceSequenceRequest.newBuilder().setName(seq).setFloor(floor).build());
      advances.add(new Advance(seq, floor, System.nanoTime(), during));
      count(during, "advance:OK");
      return floor;
    } catch (StatusRuntimeException e) {
      count(during, "advance:" + e.getStatus().getCode());
      sample(during, "advance of " + seq + " on " + s.name() + ": " + e.getStatus());
      return -1;
    }
  }

  /** Advances {@code seq} on {@code s} until one returns OK (at most {@value #SERVING_SECONDS} s); its floor. */
  private long advanceUntilOk(ServerNode s, String seq, String during) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SERVING_SECONDS);
    while (System.nanoTime() < deadline) {
      long floor = advance(s, seq, during);
      if (floor > 0) {
        return floor;
      }
      Thread.sleep(1_000); // and again: it failed, promising nothing
    }
    throw new AssertionError("no advance of " + seq + " returned OK within " + SERVING_SECONDS + " s: "
        + outcomes.get(during));
  }

  private void sample(String during, String what) {
    List<String> of = failures.computeIfAbsent(during, k -> new CopyOnWriteArrayList<>());
    if (of.size() < 4) {
      of.add(what.length() > 400 ? what.substring(0, 400) + "…" : what);
    }
  }

  private void count(String during, String what) {
    firstSeen.putIfAbsent(during, System.nanoTime());
    outcomes.computeIfAbsent(during, k -> new ConcurrentHashMap<>()).computeIfAbsent(what, k -> new LongAdder())
        .increment();
  }

  // --- checks -----------------------------------------------------------------------------------------

  /** Overlapping ranges (stride 1), as "first+count and first+count" pairs; at most 10. */
  private static List<String> duplicates(List<Call> of) {
    List<long[]> ranges = new ArrayList<>();
    of.forEach(c -> ranges.addAll(c.ranges()));
    ranges.sort(Comparator.comparingLong(r -> r[0]));
    List<String> out = new ArrayList<>();
    for (int i = 1; i < ranges.size() && out.size() < 10; i++) {
      long[] prev = ranges.get(i - 1);
      long[] r = ranges.get(i);
      if (r[0] < prev[0] + prev[1]) {
        out.add(prev[0] + "+" + prev[1] + " and " + r[0] + "+" + r[1]);
      }
    }
    return out;
  }

  /** Calls that started after an advance of {@code seq} returned OK and got an ID at or below its floor; at most 10. */
  private List<String> belowFloor(List<Call> of, String seq) {
    List<String> out = new ArrayList<>();
    for (Advance a : advances) {
      if (!a.sequence().equals(seq)) {
        continue;
      }
      for (Call c : of) {
        if (c.startNanos() > a.okNanos() && c.min() <= a.floor() && out.size() < 10) {
          out.add(c.phase() + ": server-" + c.server() + " gave " + c.min() + " after the floor " + a.floor()
              + " (advanced during " + a.phase() + ")");
        }
      }
    }
    return out;
  }

  // --- set-up -----------------------------------------------------------------------------------------

  private static ServerNode server(String name, String dc, CassandraCluster cluster, String keyspace, Path jar,
      Path dir) throws IOException {
    String host = "127.0.0.1";
    List<String> settings = new ArrayList<>(Fleet.storeSettings(cluster, keyspace, dc));
    settings.addAll(List.of(
        "idgen.advance.client-lease-lifetime=" + ChaosRun.CLIENT_LEASE_LIFETIME,
        "idgen.metrics.host=" + host,
        "idgen.metrics.port=" + freePort()));
    return new ServerNode(name, dc, freePort(), jar, dir, settings);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    assertThat(value).as("system property %s (set by failsafe)", name).isNotNull();
    return value;
  }
}
