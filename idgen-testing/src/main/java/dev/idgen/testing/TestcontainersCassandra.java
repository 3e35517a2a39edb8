package dev.idgen.testing;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.cassandra.CassandraContainer;
import org.testcontainers.containers.Container.ExecResult;
import org.testcontainers.containers.Network;
import org.testcontainers.utility.DockerImageName;

/**
 * {@link Backend#TESTCONTAINERS}: two {@code cassandra:5.0} containers (Testcontainers'
 * {@code org.testcontainers:testcontainers-cassandra}) on one Docker {@link Network}: {@code cassandra-dc1}
 * in datacenter dc1, then {@code cassandra-dc2} in dc2, both seeded by dc1, configured through the image's
 * environment variables (CASSANDRA_DC, CASSANDRA_ENDPOINT_SNITCH=GossipingPropertyFileSnitch,
 * CASSANDRA_SEEDS...). The start waits until dc1's {@code nodetool status} shows both nodes Up/Normal.
 * Contact points are the containers' mapped CQL ports on the Docker host. Pause and resume are
 * {@code docker pause} / {@code docker unpause}. The image can be overridden with system property
 * {@value #IMAGE_PROPERTY}.
 *
 * <p><b>Not run on the project's build machines</b>: they have no Docker engine, so this path is only compiled
 * and its container definitions are unit-tested ({@code TestcontainersCassandraTest}); the selection that
 * leads here is unit-tested in {@code BackendSelectionTest}. Known limit: a driver sees the other node at
 * its container address (routable from a Linux Docker host, not from Docker Desktop); the tests connect
 * each client to its own datacenter's node only, which is reached through the mapped port.
 */
final class TestcontainersCassandra extends AbstractTestCassandra {
  static final String IMAGE_PROPERTY = "idgen.it.cassandra.image";
  static final String DEFAULT_IMAGE = "cassandra:5.0";
  static final int CQL_PORT = 9042;

  private final Network network;
  private final Map<String, CassandraContainer> nodes;

  private TestcontainersCassandra(Network network, List<CassandraContainer> containers) {
    this.network = network;
    this.nodes = Map.of(DC1, containers.get(0), DC2, containers.get(1));
  }

  /**
   * The two containers, configured and not started (no Docker needed to build them). One token per node,
   * chosen explicitly, and no bootstrap streaming: a deterministic ring and a fast second start, as the
   * launcher does.
   */
  static List<CassandraContainer> containers(Network network, DockerImageName image) {
    return List.of(node(network, image, DC1, "-9223372036854775808"), node(network, image, DC2, "0"));
  }

  private static CassandraContainer node(Network network, DockerImageName image, String dc, String token) {
    return new CassandraContainer(image)
        .withNetwork(network)
        .withNetworkAliases(alias(dc))
        .withEnv("CASSANDRA_CLUSTER_NAME", "idgen-test")
        .withEnv("CASSANDRA_DC", dc)
        .withEnv("CASSANDRA_RACK", "rack1")
        .withEnv("CASSANDRA_ENDPOINT_SNITCH", "GossipingPropertyFileSnitch")
        .withEnv("CASSANDRA_SNITCH", "GossipingPropertyFileSnitch")
        .withEnv("CASSANDRA_SEEDS", alias(DC1))
        .withEnv("CASSANDRA_NUM_TOKENS", "1")
        .withEnv("MAX_HEAP_SIZE", "512M")
        .withEnv("HEAP_NEWSIZE", "128M")
        // Replaces the module's default JVM_OPTS, whose initial_token=0 would give both nodes the same token.
        .withEnv("JVM_OPTS", "-Dcassandra.skip_wait_for_gossip_to_settle=0 -Dcassandra.initial_token=" + token
            + " -Dcassandra.auto_bootstrap=false -Dcassandra.ring_delay_ms=1000"
            + " -Dcassandra.gossip_quarantine_delay_ms=60000")
        .withStartupTimeout(Duration.ofMinutes(4));
  }

  static String alias(String dc) {
    return "cassandra-" + dc;
  }

  static DockerImageName image() {
    return DockerImageName.parse(System.getProperty(IMAGE_PROPERTY, DEFAULT_IMAGE)).asCompatibleSubstituteFor("cassandra");
  }

  /** Starts dc1, then dc2, and waits until they see each other; on failure, stops them and throws. */
  static TestcontainersCassandra start() {
    Network network = Network.newNetwork();
    TestcontainersCassandra c = new TestcontainersCassandra(network, containers(network, image()));
    try {
      c.nodes.get(DC1).start();
      c.nodes.get(DC2).start();
      c.awaitBothUp(Duration.ofMinutes(3));
      c.contactPoints(c.hostPort(DC1), c.hostPort(DC2));
      return c;
    } catch (RuntimeException e) {
      c.close();
      throw e;
    }
  }

  private String hostPort(String dc) {
    CassandraContainer n = nodes.get(dc);
    return n.getHost() + ":" + n.getMappedPort(CQL_PORT);
  }

  private void awaitBothUp(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    String last = "";
    while (System.nanoTime() < deadline) {
      try {
        ExecResult r = nodes.get(DC1).execInContainer("nodetool", "status");
        last = r.getStdout() + r.getStderr();
        if (upNormalNodes(r.getStdout()) >= 2) {
          return;
        }
        Thread.sleep(1_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for the Cassandra containers", e);
      } catch (java.io.IOException e) {
        last = e.toString();
      }
    }
    throw new IllegalStateException("dc1 and dc2 did not see each other Up/Normal within " + timeout.toSeconds()
        + " s; last nodetool status:\n" + last);
  }

  /** How many lines of a {@code nodetool status} output show a node Up and Normal. */
  static int upNormalNodes(String nodetoolStatus) {
    return (int) nodetoolStatus.lines().filter(l -> l.startsWith("UN ")).count();
  }

  @Override
  public Backend backend() {
    return Backend.TESTCONTAINERS;
  }

  @Override
  protected void doPause(String dc) {
    docker().pauseContainerCmd(nodes.get(dc).getContainerId()).exec();
  }

  @Override
  protected void doResume(String dc) {
    String id = nodes.get(dc).getContainerId();
    InspectContainerResponse.ContainerState state = docker().inspectContainerCmd(id).exec().getState();
    if (Boolean.TRUE.equals(state.getPaused())) {
      docker().unpauseContainerCmd(id).exec();
    }
  }

  private static DockerClient docker() {
    return DockerClientFactory.instance().client();
  }

  @Override
  public String describe() {
    StringBuilder sb = new StringBuilder(super.describe());
    for (String dc : datacenters()) {
      String id = nodes.get(dc).getContainerId();
      sb.append(", ").append(dc).append(" container ").append(id == null ? "-" : id.substring(0, Math.min(12, id.length())));
    }
    return sb.toString();
  }

  @Override
  public void close() {
    resumeAll();
    for (String dc : List.of(DC2, DC1)) {
      try {
        nodes.get(dc).stop();
      } catch (RuntimeException e) {
        System.err.println("[idgen-testing] could not stop the " + dc + " container: " + e);
      }
    }
    try {
      network.close();
    } catch (RuntimeException e) {
      System.err.println("[idgen-testing] could not remove the Docker network: " + e);
    }
  }
}
