package dev.idgen.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.testcontainers.cassandra.CassandraContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.utility.DockerImageName;

/**
 * The Testcontainers path's container definitions, built but never started: these machines have no Docker
 * engine, so this (and the compilation of {@link TestcontainersCassandra}) is all of that path that runs here.
 */
class TestcontainersCassandraTest {

  @Test
  void should_define_one_node_per_datacenter_on_one_network_both_seeded_by_dc1() {
    Network network = Network.newNetwork(); // lazy: no Docker call until used by a started container
    List<CassandraContainer> nodes = TestcontainersCassandra.containers(network, DockerImageName.parse("cassandra:5.0"));

    assertThat(nodes).hasSize(2);
    for (int i = 0; i < 2; i++) {
      CassandraContainer n = nodes.get(i);
      String dc = i == 0 ? "dc1" : "dc2";
      assertThat(n.getNetwork()).isSameAs(network);
      assertThat(n.getNetworkAliases()).contains("cassandra-" + dc);
      assertThat(n.getEnvMap())
          .containsEntry("CASSANDRA_DC", dc)
          .containsEntry("CASSANDRA_ENDPOINT_SNITCH", "GossipingPropertyFileSnitch")
          .containsEntry("CASSANDRA_SEEDS", "cassandra-dc1")
          .containsEntry("CASSANDRA_NUM_TOKENS", "1");
      assertThat(n.getLocalDatacenter()).isEqualTo(dc);
      assertThat(n.getExposedPorts()).contains(9042);
    }
    assertThat(TestcontainersCassandra.image().asCanonicalNameString()).isEqualTo("cassandra:5.0");
    // Distinct tokens (the module's default JVM_OPTS would give both nodes token 0).
    assertThat(nodes.get(0).getEnvMap().get("JVM_OPTS")).contains("-Dcassandra.initial_token=-9223372036854775808");
    assertThat(nodes.get(1).getEnvMap().get("JVM_OPTS")).contains("-Dcassandra.initial_token=0 ");
  }

  @Test
  void should_count_up_normal_nodes_in_nodetool_status() {
    String status = """
        Datacenter: dc1
        ===============
        Status=Up/Down
        |/ State=Normal/Leaving/Joining/Moving
        --  Address     Load        Tokens  Owns  Host ID  Rack
        UN  172.18.0.2  70.2 KiB    1       ?     a1       rack1

        Datacenter: dc2
        ===============
        --  Address     Load        Tokens  Owns  Host ID  Rack
        UJ  172.18.0.3  70.2 KiB    1       ?     b2       rack1
        """;
    assertThat(TestcontainersCassandra.upNormalNodes(status)).isEqualTo(1);
    assertThat(TestcontainersCassandra.upNormalNodes(status.replace("UJ ", "UN "))).isEqualTo(2);
  }
}
