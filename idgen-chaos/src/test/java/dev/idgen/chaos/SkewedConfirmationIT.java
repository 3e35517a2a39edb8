package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.SequenceAdminGrpc;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * An {@code AdvanceSequence} must not depend on Cassandra nodes' wall clocks agreeing (docs/design.md, "What
 * idgen needs of Cassandra's clocks"): one of dc1's three nodes runs a minute ahead ({@link FakeClock}), more than
 * the servers' lease (40 s here, so that a modest step suffices). Server {@code lag} reads the floor log only
 * every 10 s, so an advance through server {@code adv} has to wait for it; the advance's reads of the
 * announcements go through each node in turn, the skewed one among them. Asserts that no call that {@code lag}
 * started after an advance returned OK got an ID at or below that advance's floor, and prints how long each
 * advance took.
 *
 * <p>Before announcements carried a heartbeat, a read through the skewed node saw {@code lag}'s announcement
 * (written through a correct node, TTL one lease) as expired, the advance returned at once without its
 * confirmation, and {@code lag} handed out IDs below the floor until its next floor refresh.
 *
 * <p>Needs the netns cluster (root: a node started again on a fake wall clock) and the wall-clock shim (a C compiler); skipped, saying
 * why, without them. Tagged {@code full}: about 3 minutes.
 */
@ExtendWith(ChaosClusterExtension.class)
@Tag("full")
class SkewedConfirmationIT {
  private static final String SEQUENCE = "skew-plain";
  private static final Duration SKEW = Duration.ofSeconds(60);
  private static final int ADVANCES = 5;

  /** One finished Allocate call of server lag: when (harness nanos) it started, its IDs. */
  private record Call(long start, List<long[]> ranges) {}

  private final List<Call> calls = Collections.synchronizedList(new ArrayList<>());

  @Test
  void should_not_return_from_an_advance_before_a_live_server_confirmed_it_when_a_node_clock_runs_ahead(
      ChaosCassandra cassandra, @TempDir Path tmp) throws Exception {
    String out = System.getProperty("idgenChaosOut");
    Path dir = out == null ? tmp : Files.createDirectories(Path.of(out, "skewed-confirmation-it"));
    assumeTrue(FakeClock.unavailable().isEmpty(), () -> "clock faults not injected: " + FakeClock.unavailable().get());
    assumeTrue(cassandra instanceof CassandraCluster c && c.canKill() && c.nodes("dc1").size() >= 3,
        () -> "needs the netns cluster (a node started again on a fake wall clock): " + cassandra.whyNoKill());
    CassandraCluster cluster = (CassandraCluster) cassandra;
    String skewed = cluster.nodes("dc1").get(1);
    FakeClock nodeClock = null;
    List<ServerNode> servers = new ArrayList<>();
    ExecutorService clients = Executors.newSingleThreadExecutor();
    AtomicBoolean stop = new AtomicBoolean();
    List<long[]> advances = new ArrayList<>(); // {floor, returned nanos}
    try {
      say("starting cassandra " + skewed + " again on a fake wall clock");
      nodeClock = ClockFault.underFakeClock(cluster, skewed, dir.resolve("cassandra-clocks"));
      String keyspace = "skew_it_" + Long.toString(System.currentTimeMillis() % 1_000_000, 36);
      Path jar = Path.of(System.getProperty("idgenServerJar", "idgen-server/target/idgen-server-all.jar"));
      assertThat(jar).as("the server jar (build idgen-server first: -pl idgen-server,idgen-chaos -am)").isRegularFile();
      for (String name : List.of("adv", "lag")) {
        List<String> settings = new ArrayList<>(Fleet.storeSettings(cassandra, keyspace, "dc1"));
        settings.addAll(List.of(
            "idgen.advance.server-lease=40s",
            "idgen.advance.client-lease-lifetime=2s",
            "idgen.advance.confirm-timeout=30s",
            "idgen.metrics.host=127.0.0.1",
            "idgen.metrics.port=" + freePort()));
        if (name.equals("lag")) {
          settings.add("idgen.cassandra.floor-refresh=10s"); // overrides the harness's 500 ms (a later -D wins)
        }
        ServerNode server = new ServerNode(name, "dc1", freePort(), jar, dir, settings);
        servers.add(server);
        server.start(); // one at a time: the first creates the schema
        say("started " + server);
      }
      ServerNode adv = servers.get(0);
      ServerNode lag = servers.get(1);
      SequenceAdminGrpc.newBlockingStub(adv.adminChannel()).withDeadlineAfter(60, TimeUnit.SECONDS)
          .createSequence(CreateSequenceRequest.newBuilder().setName(SEQUENCE).setStart(1).setStripes(1)
              .setNodeBlockSize(50_000).setDcBlockSize(500_000).build());
      clients.execute(() -> allocateUntil(stop, lag, System.nanoTime() + TimeUnit.MINUTES.toNanos(10)));

      ClockFault fault = new ClockFault("cassandra " + skewed, nodeClock, SKEW);
      try {
        fault.inject();
        Thread.sleep(ClockFault.SETTLE.toMillis() + 2_000);
        for (int i = 0; i < ADVANCES; i++) {
          long floor = highest() + 10_000;
          long start = System.nanoTime();
          try {
            SequenceAdminGrpc.newBlockingStub(adv.adminChannel()).withDeadlineAfter(120, TimeUnit.SECONDS)
                .advanceSequence(AdvanceSequenceRequest.newBuilder().setName(SEQUENCE).setFloor(floor).build());
            long returned = System.nanoTime();
            advances.add(new long[] {floor, returned});
            say(String.format("%s: AdvanceSequence to %d returned OK after %.1f s", fault.describe(), floor,
                (returned - start) / 1e9));
          } catch (StatusRuntimeException e) {
            say(String.format("%s: AdvanceSequence to %d failed after %.1f s: %s", fault.describe(), floor,
                (System.nanoTime() - start) / 1e9, e.getStatus()));
          }
          Thread.sleep(2_000); // lag serves on from its cache meanwhile
        }
      } finally {
        fault.heal();
      }
    } finally {
      stop.set(true);
      clients.shutdown();
      clients.awaitTermination(30, TimeUnit.SECONDS);
      for (ServerNode s : servers) {
        s.close();
      }
      if (nodeClock != null) {
        nodeClock.set(Duration.ZERO);
        say("starting cassandra " + skewed + " again on the real clock");
        ClockFault.restoreRealClock(cluster, skewed);
      }
    }

    List<String> below = new ArrayList<>();
    synchronized (calls) {
      for (long[] a : advances) {
        for (Call c : calls) {
          if (c.start() > a[1]) {
            for (long[] r : c.ranges()) {
              if (r[0] <= a[0] && below.size() < 20) {
                below.add(String.format("%d from lag %.1f s after the advance to %d returned", r[0],
                    (c.start() - a[1]) / 1e9, a[0]));
              }
            }
          }
        }
      }
    }
    assertThat(advances).as("advances that returned OK").isNotEmpty();
    assertThat(below).as("IDs at or below a floor handed out after its advance returned OK").isEmpty();
  }

  private long highest() {
    long highest = 0;
    synchronized (calls) {
      for (Call c : calls) {
        for (long[] r : c.ranges()) {
          highest = Math.max(highest, r[1]);
        }
      }
    }
    return highest;
  }

  private void allocateUntil(AtomicBoolean stop, ServerNode server, long deadline) {
    IdGenGrpc.IdGenBlockingStub stub = IdGenGrpc.newBlockingStub(server.adminChannel());
    while (!stop.get() && System.nanoTime() < deadline) {
      long start = System.nanoTime();
      List<long[]> ranges = new ArrayList<>();
      boolean failed = false;
      try {
        Iterator<IdRange> it = stub.withDeadlineAfter(5, TimeUnit.SECONDS)
            .allocate(AllocateRequest.newBuilder().setSequence(SEQUENCE).setCount(3).build());
        while (it.hasNext()) {
          IdRange r = it.next();
          ranges.add(new long[] {r.getFirst(), r.getFirst() + (r.getCount() - 1) * r.getStride()});
        }
      } catch (StatusRuntimeException e) {
        failed = true;
      }
      calls.add(new Call(start, ranges));
      try {
        Thread.sleep(failed ? 100 : 20); // about 50 calls a second: enough to show a hole within a refresh
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private static void say(String message) {
    System.out.println("[skewed-confirmation-it] " + message);
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
