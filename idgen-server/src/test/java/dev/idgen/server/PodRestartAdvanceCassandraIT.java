package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.testing.CassandraExtension;
import dev.idgen.testing.TestCassandra;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The shipped Kubernetes manifest's pod restart, on the tests' real Cassandra: two servers named as the
 * manifest names its pods, one killed with SIGKILL (an OOM kill, a lost node) and started again under the name
 * the manifest gives its next incarnation. An AdvanceSequence then returns OK, because the new process replaced
 * the dead one's announcement. Under a new name (a Deployment's pod, or no server name set) the dead
 * announcement would hold it for 1 1/8 server leases, and it fails UNAVAILABLE after the confirm timeout.
 *
 * <p>Tagged "full": three server starts on a shared 2-core machine take longer than the default set allows.
 */
@ExtendWith(CassandraExtension.class)
@Tag("full")
class PodRestartAdvanceCassandraIT {
  private static final Path MANIFEST = Path.of("..", "deploy", "k8s", "statefulset.yaml");
  private static final String SEQUENCE = "orders";

  @TempDir
  Path dir;

  private final List<ServerProcess> servers = new ArrayList<>();
  private final String keyspace = "restart_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);

  @AfterEach
  void stop() throws InterruptedException {
    for (ServerProcess s : servers) {
      s.close();
    }
  }

  @Test
  void should_return_ok_from_an_advance_after_a_pod_was_killed_and_came_back_under_the_manifests_name()
      throws Exception {
    PodNames pods = PodNames.of(MANIFEST);
    ServerProcess first = server(pods.serverName(0, 1));
    String ranAs = pods.serverName(1, 1);
    String restartedAs = pods.serverName(1, 2);
    ServerProcess second = server(ranAs);
    SequenceAdminGrpc.newBlockingStub(first.channel()).withDeadlineAfter(30, TimeUnit.SECONDS)
        .createSequence(CreateSequenceRequest.newBuilder().setName(SEQUENCE).build());
    assertThat(allocate(first.channel())).isPositive();
    assertThat(allocate(second.channel())).isPositive();

    second.kill(); // kill -9: no give-back, no withdrawn announcement
    ServerProcess again = server(restartedAs);

    long floor = 1_000_000;
    try {
      SequenceAdminGrpc.newBlockingStub(first.channel()).withDeadlineAfter(60, TimeUnit.SECONDS)
          .advanceSequence(AdvanceSequenceRequest.newBuilder().setName(SEQUENCE).setFloor(floor).build());
    } catch (StatusRuntimeException e) {
      throw new AssertionError("the advance after pod 1 was killed and restarted failed (" + pods + ": "
          + (pods.fromPodName() ? "it ran as '" + ranAs + "', then as '" + restartedAs + "'"
          : "no IDGEN_SERVER_NAME from the pod name, so host:port, new at each start") + "): " + e.getStatus(), e);
    }
    assertThat(allocate(again.channel())).isGreaterThan(floor);
    assertThat(allocate(first.channel())).isGreaterThan(floor);
  }

  private ServerProcess server(String serverName) throws Exception {
    List<String> settings = new ArrayList<>(List.of(
        "idgen.store=cassandra",
        "idgen.cassandra.contact-points=" + CassandraExtension.cluster().contactPoint(TestCassandra.DC1),
        "idgen.cassandra.local-datacenter=dc1",
        "idgen.cassandra.keyspace=" + keyspace,
        "idgen.cassandra.create-schema=true",
        "idgen.cassandra.replication.dc1=1",
        "idgen.cassandra.floor-refresh=500ms",
        // Short, as in the reproduction (40 s), yet longer than the confirm timeout: a dead announcement under
        // another name outlives the advance's wait.
        "idgen.advance.server-lease=40s",
        "idgen.advance.confirm-timeout=10s"));
    if (!serverName.isEmpty()) {
      settings.add("idgen.server-name=" + serverName);
    } // else the server's default, host and port: a new port, so a new name, at each start
    ServerProcess s = ServerProcess.start(dir, "server-" + servers.size(), settings);
    servers.add(s);
    return s;
  }

  /** The first ID of a one-ID Allocate. */
  private static long allocate(ManagedChannel channel) {
    List<IdRange> ranges = new ArrayList<>();
    IdGenGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
        .allocate(AllocateRequest.newBuilder().setSequence(SEQUENCE).setCount(1).build())
        .forEachRemaining(ranges::add);
    assertThat(ranges).hasSize(1);
    return ranges.get(0).getFirst();
  }

  /**
   * The server names the manifest's pods run under: a StatefulSet's pod {@code <name>-<ordinal>} keeps its name
   * in every incarnation; a Deployment's pod gets a new name each time. The name reaches the server only when
   * the container's IDGEN_SERVER_NAME comes from the pod's {@code metadata.name}; otherwise the server's
   * default ("" here) applies.
   */
  record PodNames(String kind, String name, boolean fromPodName) {
    @SuppressWarnings("unchecked")
    static PodNames of(Path manifest) throws IOException {
      Map<String, Object> root;
      try (InputStream in = Files.newInputStream(manifest)) {
        root = new Yaml().load(in);
      }
      Map<String, Object> spec = (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>)
          root.get("spec")).get("template")).get("spec");
      Map<String, Object> container = ((List<Map<String, Object>>) spec.get("containers")).get(0);
      boolean fromPodName = false;
      for (Map<String, Object> env : (List<Map<String, Object>>) container.get("env")) {
        if ("IDGEN_SERVER_NAME".equals(env.get("name")) && env.get("valueFrom") instanceof Map<?, ?> from
            && from.get("fieldRef") instanceof Map<?, ?> field) {
          fromPodName = "metadata.name".equals(field.get("fieldPath"));
        }
      }
      return new PodNames((String) root.get("kind"), (String) ((Map<String, Object>) root.get("metadata")).get("name"),
          fromPodName);
    }

    /** The server name of pod {@code ordinal} in its {@code incarnation}-th run (1: the first). */
    String serverName(int ordinal, int incarnation) {
      if (!fromPodName) {
        return "";
      }
      return kind.equals("StatefulSet") ? name + "-" + ordinal : name + "-" + Long.toHexString(
          ThreadLocalRandom.current().nextLong() >>> 24) + "-" + ordinal + "x" + incarnation;
    }
  }
}
