package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** What a rebuild waits for: the schema versions {@code nodetool describecluster} lists, unreachable nodes aside. */
class TopologyChangesTest {
  private static final String HEAD = """
      Cluster Information:
      \tName: idgen-test
      \tSnitch: org.apache.cassandra.locator.GossipingPropertyFileSnitch
      \tSchema versions:
      """;
  private static final String TAIL = """

      \t\tUNREACHABLE: [10.77.0.15, 10.77.0.14]

      Stats for all nodes:
      \tLive: 5
      """;

  @Test
  void should_count_one_version_when_the_reachable_nodes_agree() {
    assertThat(TopologyChanges.schemaVersions(HEAD
        + "\t\t59027e5f-9af8-358a-bca8-b90e312dd9b4: [10.77.0.21, 10.77.0.13, 10.77.0.31]\n" + TAIL)).isEqualTo(1);
  }

  @Test
  void should_count_every_version_while_a_new_node_has_not_pulled_the_schema() {
    assertThat(TopologyChanges.schemaVersions(HEAD
        + "\t\t59027e5f-9af8-358a-bca8-b90e312dd9b4: [10.77.0.21, 10.77.0.13]\n"
        + "\t\t11111111-2222-3333-4444-555555555555: [10.77.0.31]\n" + TAIL)).isEqualTo(2);
  }

  @Test
  void should_count_none_in_output_without_schema_versions() {
    assertThat(TopologyChanges.schemaVersions("nodetool: Failed to connect to '127.0.0.1:7199'")).isZero();
  }
}
