package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.metadata.Node;
import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import dev.idgen.api.v1.SequenceAdminGrpc;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Wall clocks stepped while idgen serves: an idgen server's by ±10 min, a Cassandra node's by ±500 ms and
 * ±10 min ({@link ClockFault}, {@link FakeClock}), with clients allocating from a default and a strict sequence
 * through two servers of dc1 and an {@code AdvanceSequence} during a step. Asserts that no ID is handed out
 * twice, none at or below a floor after its advance returned, every strict call above every call that
 * completed before it started, and that both servers serve both sequences again once the clocks are back;
 * prints what each step did (calls served and failed by status, the servers' compare-and-set outcomes) and
 * measures, through the skewed node and a correct one, what a Cassandra node 10 minutes ahead or behind does
 * to compare-and-sets, write timestamps and TTLs (docs/design.md, "Clocks").
 *
 * <p>Needs the wall-clock shim ({@link FakeClock#unavailable()}: without it the test is skipped, saying why). The
 * Cassandra steps need a node that can be started again on a fake wall clock: the netns cluster
 * ({@link ChaosClusterExtension}: root); on the two-datacenter cluster they are skipped with the reason and
 * the server steps still run. Tagged {@code full}: about 3 minutes on the netns cluster.
 */
@ExtendWith(ChaosClusterExtension.class)
@Tag("full")
class ClockFaultsIT {
  private static final Duration TEN_MINUTES = Duration.ofMinutes(10);
  /** A phase with a clock step: the step held this long, the advance halfway. */
  private static final long PHASE_MILLIS = 8_000;
  /**
   * A phase without a step (the baseline, each healed clock, the end): load only, its calls and compare-and-sets
   * printed. Whether the servers serve again is checked at the end, within 60 s, not within a phase.
   */
  private static final long QUIET_PHASE_MILLIS = 5_000;
  private static final String PLAIN = "clock-plain";
  private static final String STRICT = "clock-strict";

  /** One finished Allocate call: when (harness nanos) it started and completed, its IDs, or its failure. */
  private record Call(String phase, String server, String sequence, long start, long end, List<long[]> ranges,
      String failure) {}

  private final List<Call> calls = java.util.Collections.synchronizedList(new ArrayList<>());
  private volatile String phase = "start";

  @Test
  void should_hand_out_nothing_twice_nor_below_a_floor_while_wall_clocks_are_stepped(ChaosCassandra cassandra,
      @TempDir Path tmp) throws Exception {
    // The servers' logs and the clocks' files: failsafe's chaos-it directory, kept after the run.
    String out = System.getProperty("idgenChaosOut");
    Path dir = out == null ? tmp : Files.createDirectories(Path.of(out, "clock-faults-it"));
    assumeTrue(FakeClock.unavailable().isEmpty(), () -> "clock faults not injected: " + FakeClock.unavailable().get());
    Path library = FakeClock.library().orElseThrow();
    CassandraCluster cluster = cassandra instanceof CassandraCluster c && c.canKill() ? c : null;
    String skewed = null;
    FakeClock nodeClock = null;
    if (cluster == null) {
      say("the Cassandra clock steps are not injected: the node must be started again on a fake wall clock, and "
          + (cassandra instanceof CassandraCluster c ? c.whyNoKill() : new CassandraCluster(Path.of(".")).whyNoKill()));
    }
    List<ServerNode> servers = new ArrayList<>();
    Map<String, FakeClock> serverClocks = new HashMap<>();
    ExecutorService clients = Executors.newFixedThreadPool(4);
    AtomicBoolean stop = new AtomicBoolean();
    Map<String, Long> floors = new TreeMap<>();
    try {
      if (cluster != null) {
        skewed = cluster.nodes("dc1").get(cluster.nodes("dc1").size() > 1 ? 1 : 0);
        say("starting cassandra " + skewed + " again on a fake wall clock");
        nodeClock = ClockFault.underFakeClock(cluster, skewed, dir.resolve("cassandra-clocks"));
      }
      String keyspace = "clock_it_" + Long.toString(System.currentTimeMillis() % 1_000_000, 36);
      Path jar = Path.of(System.getProperty("idgenServerJar", "idgen-server/target/idgen-server-all.jar"));
      assertThat(jar).as("the server jar (build idgen-server first: -pl idgen-server,idgen-chaos -am)").isRegularFile();
      for (int i = 0; i < 2; i++) {
        List<String> settings = new ArrayList<>(Fleet.storeSettings(cassandra, keyspace, "dc1"));
        settings.addAll(List.of(
            "idgen.advance.client-lease-lifetime=2s",
            "idgen.metrics.host=127.0.0.1",
            "idgen.metrics.port=" + freePort()));
        ServerNode server = new ServerNode("clock-s" + i, "dc1", freePort(), jar, dir, settings);
        FakeClock clock = new FakeClock(library, dir.resolve("server-clocks").resolve(server.name()));
        server.environment(clock.environment());
        serverClocks.put(server.name(), clock);
        servers.add(server);
        server.start(); // one at a time: the first creates the schema
        say("started " + server + " under " + clock);
      }
      SequenceAdminGrpc.SequenceAdminBlockingStub admin = SequenceAdminGrpc.newBlockingStub(servers.get(0).adminChannel());
      admin.withDeadlineAfter(60, TimeUnit.SECONDS).createSequence(CreateSequenceRequest.newBuilder().setName(PLAIN)
          .setStart(1).setStripes(1).setNodeBlockSize(200).setDcBlockSize(2_000).build());
      admin.withDeadlineAfter(60, TimeUnit.SECONDS).createSequence(CreateSequenceRequest.newBuilder().setName(STRICT)
          .setStart(1).setStripes(1).setNodeBlockSize(200).setDcBlockSize(2_000)
          .setOrdering(Ordering.ORDERING_STRICT).setHomeDatacenter("dc1").build());
      long t0 = System.nanoTime();
      for (ServerNode s : servers) {
        for (String sequence : List.of(PLAIN, STRICT)) {
          // Stopped by the flag after the last phase; the deadline only bounds a test that hangs, far above this
          // test's usual 6 minutes, so that callers on a slow machine never stop before the last phase.
          clients.execute(() -> allocateUntil(stop, s, sequence, t0 + TimeUnit.MINUTES.toNanos(45)));
        }
      }
      phase("baseline", servers, null);

      ServerNode stepped = servers.get(1);
      FakeClock steppedClock = serverClocks.get(stepped.name());
      for (Duration offset : List.of(TEN_MINUTES, TEN_MINUTES.negated())) {
        ClockFault fault = new ClockFault("server " + stepped.name(), steppedClock, offset);
        try {
          fault.inject();
          phase(fault.describe(), servers, () -> floors.put(fault.describe(), advance(stepped, PLAIN)));
        } finally {
          fault.heal();
        }
        phase("healed " + fault.describe(), servers, null);
      }

      if (cluster != null) {
        for (Duration offset : List.of(Duration.ofMillis(500), Duration.ofMillis(-500), TEN_MINUTES,
            TEN_MINUTES.negated())) {
          ClockFault fault = new ClockFault("cassandra " + skewed, nodeClock, offset);
          try {
            fault.inject();
            Thread.sleep(ClockFault.SETTLE.toMillis());
            if (offset.abs().compareTo(TEN_MINUTES) >= 0) {
              measureCql(cluster, keyspace, skewed, fault);
            }
            phase(fault.describe(), servers, () -> floors.put(fault.describe(), advance(servers.get(0), PLAIN)));
          } finally {
            fault.heal();
          }
          phase("healed " + fault.describe(), servers, null);
        }
      }
      phase("end", servers, null);
      // "Serves again once the clocks are back" within a bound, not within one 5 s phase, which a caller may
      // spend in a call that fails at its 5 s deadline and the pause after it: up to 60 s more for each.
      long endBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!unservedAtEnd().isEmpty() && System.nanoTime() - endBy < 0) {
        Thread.sleep(500);
      }
    } finally {
      stop.set(true);
      clients.shutdown();
      clients.awaitTermination(30, TimeUnit.SECONDS);
      for (FakeClock c : serverClocks.values()) {
        c.set(Duration.ZERO);
      }
      for (ServerNode s : servers) {
        s.close();
      }
      if (nodeClock != null) {
        nodeClock.set(Duration.ZERO);
        say("starting cassandra " + skewed + " again on the real clock");
        ClockFault.restoreRealClock(cluster, skewed);
      }
    }
    report();
    check(floors);
  }

  /**
   * Runs a phase of {@link #PHASE_MILLIS} with its action halfway, or of {@link #QUIET_PHASE_MILLIS} without one,
   * printing what the servers did in it.
   */
  private void phase(String name, List<ServerNode> servers, ThrowingRunnable action) throws Exception {
    Map<String, ServerNode.Counters> before = new HashMap<>();
    for (ServerNode s : servers) {
      before.put(s.name(), s.counters());
    }
    phase = name;
    say("phase " + name);
    Thread.sleep(action == null ? QUIET_PHASE_MILLIS : PHASE_MILLIS / 2);
    if (action != null) {
      action.run();
      Thread.sleep(PHASE_MILLIS / 2);
    }
    for (ServerNode s : servers) {
      ServerNode.Counters now = s.counters();
      ServerNode.Counters was = before.get(s.name());
      if (now != null && was != null) {
        Map<String, Long> delta = new TreeMap<>();
        now.cas().forEach((k, v) -> {
          long d = v - was.cas().getOrDefault(k, 0L);
          if (d != 0) {
            delta.put(k, d);
          }
        });
        say("  " + s.name() + " compare-and-set outcomes in phase " + name + ": " + delta);
      }
    }
  }

  /** An AdvanceSequence through {@code server} to a little above what was handed out; returns the floor. */
  private long advance(ServerNode server, String sequence) {
    long highest = 0;
    synchronized (calls) {
      for (Call c : calls) {
        if (c.sequence().equals(sequence)) {
          for (long[] r : c.ranges()) {
            highest = Math.max(highest, r[1]);
          }
        }
      }
    }
    long floor = highest + 5_000;
    long start = System.nanoTime();
    try {
      SequenceAdminGrpc.newBlockingStub(server.adminChannel()).withDeadlineAfter(120, TimeUnit.SECONDS)
          .advanceSequence(AdvanceSequenceRequest.newBuilder().setName(sequence).setFloor(floor).build());
      long returned = System.nanoTime();
      say(String.format("  AdvanceSequence %s to %d through %s returned OK after %.1f s", sequence, floor,
          server.name(), (returned - start) / 1e9));
      advances.put(floor, returned);
      return floor;
    } catch (StatusRuntimeException e) {
      say(String.format("  AdvanceSequence %s to %d through %s failed after %.1f s: %s", sequence, floor,
          server.name(), (System.nanoTime() - start) / 1e9, e.getStatus()));
      return -1;
    }
  }

  /** Floor → when (nanos) its advance returned OK. */
  private final Map<Long, Long> advances = new ConcurrentHashMap<>();

  private void allocateUntil(AtomicBoolean stop, ServerNode server, String sequence, long deadline) {
    IdGenGrpc.IdGenBlockingStub stub = IdGenGrpc.newBlockingStub(server.adminChannel());
    while (!stop.get() && System.nanoTime() < deadline) {
      int count = 1 + ThreadLocalRandom.current().nextInt(5);
      String p = phase;
      long start = System.nanoTime();
      List<long[]> ranges = new ArrayList<>();
      String failure = null;
      try {
        Iterator<IdRange> it = stub.withDeadlineAfter(5, TimeUnit.SECONDS)
            .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build());
        while (it.hasNext()) {
          IdRange r = it.next();
          ranges.add(new long[] {r.getFirst(), r.getFirst() + (r.getCount() - 1) * r.getStride(), r.getStride()});
        }
      } catch (StatusRuntimeException e) {
        failure = e.getStatus().getCode() + ": " + e.getStatus().getDescription();
      }
      calls.add(new Call(p, server.name(), sequence, start, System.nanoTime(), ranges, failure));
      try {
        // About 50 calls a second per caller (a failed call is retried after a longer pause, as a stub would):
        // enough to see every phase, little enough for a 2-core machine that also runs Cassandra.
        Thread.sleep(failure == null ? 20 : 100);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Prints, per phase, server and sequence, the calls served and the failures by status. */
  private void report() {
    List<Call> all;
    synchronized (calls) {
      all = new ArrayList<>(calls);
    }
    outcomes(all, c -> true).forEach((k, v) -> say("  " + k + ": " + v));
  }

  /** The outcomes ("OK" or the failure, digits as N) by phase, server and sequence of the calls that match. */
  private static Map<String, Map<String, Integer>> outcomes(List<Call> all, java.util.function.Predicate<Call> which) {
    Map<String, Map<String, Integer>> table = new java.util.LinkedHashMap<>();
    for (Call c : all) {
      if (which.test(c)) {
        String outcome = c.failure() == null ? "OK" : c.failure().replaceAll("\\d+", "N");
        table.computeIfAbsent(c.phase() + " | " + c.server() + " " + c.sequence(), k -> new TreeMap<>())
            .merge(outcome, 1, Integer::sum);
      }
    }
    return table;
  }

  private void check(Map<String, Long> floors) {
    List<Call> all;
    synchronized (calls) {
      all = new ArrayList<>(calls);
    }
    // No ID twice.
    Map<String, Map<Long, Call>> seen = new HashMap<>();
    List<String> duplicates = new ArrayList<>();
    for (Call c : all) {
      for (long[] r : c.ranges()) {
        for (long id = r[0]; id <= r[1]; id += r[2]) {
          Call earlier = seen.computeIfAbsent(c.sequence(), k -> new HashMap<>()).put(id, c);
          if (earlier != null && duplicates.size() < 20) {
            duplicates.add(c.sequence() + " " + id + ": " + earlier.server() + " in " + earlier.phase() + " and "
                + c.server() + " in " + c.phase());
          }
        }
      }
    }
    assertThat(duplicates).as("IDs handed out twice").isEmpty();
    // Nothing at or below a floor from a call that started after its advance returned.
    List<String> below = new ArrayList<>();
    for (Map.Entry<Long, Long> a : advances.entrySet()) {
      for (Call c : all) {
        if (c.sequence().equals(PLAIN) && c.start() > a.getValue()) {
          for (long[] r : c.ranges()) {
            if (r[0] <= a.getKey() && below.size() < 20) {
              below.add(r[0] + " from " + c.server() + " in " + c.phase() + ", floor " + a.getKey());
            }
          }
        }
      }
    }
    assertThat(below).as("IDs at or below a floor after its advance returned (floors %s)", floors).isEmpty();
    // Strict: every call above every call that completed before it started.
    List<Call> strict = all.stream().filter(c -> c.sequence().equals(STRICT) && !c.ranges().isEmpty())
        .sorted(Comparator.comparingLong(Call::end)).toList();
    List<Call> byStart = strict.stream().sorted(Comparator.comparingLong(Call::start)).toList();
    List<String> outOfOrder = new ArrayList<>();
    long maxEnded = Long.MIN_VALUE;
    int e = 0;
    for (Call c : byStart) {
      while (e < strict.size() && strict.get(e).end() < c.start()) {
        for (long[] r : strict.get(e).ranges()) {
          maxEnded = Math.max(maxEnded, r[1]);
        }
        e++;
      }
      long min = c.ranges().stream().mapToLong(r -> r[0]).min().orElseThrow();
      if (min <= maxEnded && outOfOrder.size() < 20) {
        outOfOrder.add(min + " from " + c.server() + " in " + c.phase() + " after " + maxEnded + " completed");
      }
    }
    assertThat(outOfOrder).as("strict calls not above every call completed before them").isEmpty();
    // Every failure says why, and both servers serve both sequences once the clocks are back.
    assertThat(all).as("failed calls without a message").noneMatch(c -> c.failure() != null && c.failure().endsWith(": null"));
    assertThat(unservedAtEnd()).as("servers and sequences without a served call in the last phase (within 60 s"
        + " after it); what their calls did after the last steps were healed: %s",
        outcomes(all, c -> c.phase().equals("end") || c.phase().startsWith("healed"))).isEmpty();
  }

  /** The {@code server sequence} pairs with no successful call started in the phase "end" yet. */
  private List<String> unservedAtEnd() {
    List<String> unserved = new ArrayList<>();
    synchronized (calls) {
      for (String server : List.of("clock-s0", "clock-s1")) {
        for (String sequence : List.of(PLAIN, STRICT)) {
          if (calls.stream().noneMatch(c -> c.phase().equals("end") && c.server().equals(server)
              && c.sequence().equals(sequence) && c.failure() == null)) {
            unserved.add(server + " " + sequence);
          }
        }
      }
    }
    return unserved;
  }

  /**
   * Measures, with the skewed node as coordinator and a correct one: a compare-and-set on one row through each
   * in turn (does the second apply? how long does it take?), a plain write through the correct node after a
   * compare-and-set through the skewed one (is it shadowed by the skewed write timestamp?), and a row written
   * with a TTL through one and read through the other (does it look expired?).
   */
  private void measureCql(CassandraCluster cluster, String keyspace, String skewed, ClockFault fault) {
    String correct = cluster.nodes("dc1").stream().filter(n -> !n.equals(skewed)).findFirst().orElseThrow();
    List<InetSocketAddress> contacts = new ArrayList<>();
    for (String node : cluster.nodes("dc1")) {
      contacts.add(new InetSocketAddress(cluster.address(node), 9042));
    }
    try (CqlSession session = CqlSession.builder().addContactPoints(contacts).withLocalDatacenter("dc1")
        .withConfigLoader(DriverConfigLoader.programmaticBuilder()
            .withString(DefaultDriverOption.PROTOCOL_VERSION, "V4")
            .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(15)).build()).build()) {
      Node s = node(session, cluster.address(skewed));
      Node c = node(session, cluster.address(correct));
      String table = keyspace + ".clock_probe";
      session.execute(SimpleStatement.newInstance("CREATE TABLE IF NOT EXISTS " + table
          + " (k int PRIMARY KEY, v int, note text)").setTimeout(Duration.ofSeconds(60)));
      session.checkSchemaAgreement();
      int k = ThreadLocalRandom.current().nextInt(1_000_000);
      for (String serial : List.of("LOCAL_SERIAL", "SERIAL")) {
        DefaultConsistencyLevel level = DefaultConsistencyLevel.valueOf(serial);
        String r1 = cas(session, s, "INSERT INTO " + table + " (k, v) VALUES (" + k + ", 1) IF NOT EXISTS", level);
        String r2 = cas(session, c, "UPDATE " + table + " SET v = 2 WHERE k = " + k + " IF v = 1", level);
        String r3 = cas(session, s, "UPDATE " + table + " SET v = 3 WHERE k = " + k + " IF v = 2", level);
        String r4 = cas(session, c, "UPDATE " + table + " SET v = 4 WHERE k = " + k + " IF v = 3", level);
        say("  " + fault.describe() + ", " + serial + " compare-and-sets on one row: through " + skewed + " "
            + r1 + "; through " + correct + " " + r2 + "; " + skewed + " " + r3 + "; " + correct + " " + r4);
        // A plain write through the correct node after the skewed one's compare-and-set.
        session.execute(SimpleStatement.newInstance("UPDATE " + table + " SET note = 'plain' WHERE k = " + k)
            .setNode(c).setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM));
        Row row = session.execute(SimpleStatement.newInstance("SELECT v, note, writetime(v) AS wv FROM " + table
            + " WHERE k = " + k).setNode(c).setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM)).one();
        say("  " + fault.describe() + ", after them a plain write through " + correct + ": v=" + row.getInt("v")
            + " note=" + row.getString("note") + ", writetime(v) - now = "
            + (row.getLong("wv") / 1000 - System.currentTimeMillis()) / 1000 + " s");
        k++;
      }
      // TTLs: a row written with TTL 300 s through each node, read through the other.
      for (boolean writeSkewed : List.of(true, false)) {
        Node w = writeSkewed ? s : c;
        Node r = writeSkewed ? c : s;
        k++;
        session.execute(SimpleStatement.newInstance("INSERT INTO " + table + " (k, v) VALUES (" + k + ", 1) USING TTL 300")
            .setNode(w).setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM));
        ResultSet rs = session.execute(SimpleStatement.newInstance("SELECT v, ttl(v) AS t FROM " + table + " WHERE k = " + k)
            .setNode(r).setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM));
        Row got = rs.one();
        say("  " + fault.describe() + ", a row with TTL 300 s written through " + (writeSkewed ? skewed : correct)
            + ", read through " + (writeSkewed ? correct : skewed) + ": "
            + (got == null ? "gone (expired)" : "there, ttl " + got.getInt("t") + " s"));
      }
    } catch (RuntimeException e) {
      say("  " + fault.describe() + ": the CQL measurements failed: " + e);
    }
  }

  private static String cas(CqlSession session, Node node, String cql, DefaultConsistencyLevel serial) {
    long start = System.nanoTime();
    try {
      boolean applied = session.execute(SimpleStatement.newInstance(cql).setNode(node)
          .setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM).setSerialConsistencyLevel(serial)
          .setIdempotent(false)).wasApplied();
      return (applied ? "applied" : "not applied") + String.format(" in %d ms", (System.nanoTime() - start) / 1_000_000);
    } catch (RuntimeException e) {
      return "failed in " + (System.nanoTime() - start) / 1_000_000 + " ms: " + e.getClass().getSimpleName() + " "
          + e.getMessage();
    }
  }

  private static Node node(CqlSession session, String address) {
    return session.getMetadata().getNodes().values().stream()
        .filter(n -> ((InetSocketAddress) n.getEndPoint().resolve()).getAddress().getHostAddress().equals(address))
        .findFirst().orElseThrow(() -> new AssertionError("no node at " + address));
  }

  private static void say(String message) {
    System.out.println("[clock-faults-it] " + message);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  @FunctionalInterface
  private interface ThrowingRunnable {
    void run() throws Exception;
  }
}
