package dev.idgen.core.store.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The pure parts of the Cassandra store: interval arithmetic, schema rendering, settings checks. */
class CassandraRangeStoreTest {

  @Test
  void should_take_from_the_first_interval_and_drop_it_when_used_up() {
    assertThat(Blocks.consume(List.of(0L, 10L, 20L, 30L), 4)).containsExactly(4L, 10L, 20L, 30L);
    assertThat(Blocks.consume(List.of(0L, 10L, 20L, 30L), 10)).containsExactly(20L, 30L);
    assertThat(Blocks.size(List.of(0L, 10L, 20L, 30L))).isEqualTo(20);
  }

  @Test
  void should_trim_intervals_at_a_floor_index() {
    assertThat(Blocks.trim(List.of(0L, 10L, 20L, 30L), 5)).containsExactly(5L, 10L, 20L, 30L);
    assertThat(Blocks.trim(List.of(0L, 10L, 20L, 30L), 10)).containsExactly(20L, 30L);
    assertThat(Blocks.trim(List.of(0L, 10L, 20L, 30L), 30)).isEmpty();
  }

  @Test
  void should_render_the_schema_for_the_configured_keyspace_and_replication() {
    CassandraSettings s = CassandraSettings.local(List.of("127.0.0.1:9042"), "dc1", "ids_test",
        Map.of("dc1", 3, "dc2", 2));
    List<String> statements = Schema.statements(s);
    assertThat(statements).hasSize(9); // the keyspace and eight tables
    assertThat(statements.get(0)).isEqualTo("CREATE KEYSPACE IF NOT EXISTS ids_test WITH replication = "
        + "{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2} AND durable_writes = true");
    assertThat(statements.subList(1, 9)).allSatisfy(st -> assertThat(st)
        .startsWith("CREATE TABLE IF NOT EXISTS ids_test.").doesNotContain("idgen.").doesNotContain("--"));
  }

  @Test
  void should_reject_bad_settings_naming_the_key() {
    assertThatThrownBy(() -> CassandraSettings.local(List.of("nohost"), "dc1", "idgen", Map.of("dc1", 1)))
        .hasMessageContaining("contact-points");
    assertThatThrownBy(() -> CassandraSettings.local(List.of("h:9042"), " ", "idgen", Map.of("dc1", 1)))
        .hasMessageContaining("local-datacenter");
    assertThatThrownBy(() -> CassandraSettings.local(List.of("h:9042"), "dc1", "Bad-Name", Map.of("dc1", 1)))
        .hasMessageContaining("keyspace");
    assertThatThrownBy(() -> CassandraSettings.local(List.of("h:9042"), "dc1", "idgen", Map.of()))
        .hasMessageContaining("replication");
    assertThatThrownBy(() -> new CassandraSettings(List.of("h:9042"), "dc1", "idgen", false, Map.of(),
        Optional.of("user"), Optional.empty(), CassandraSettings.Tls.OFF,
        Duration.ofSeconds(2), Duration.ofSeconds(10), 0.5, Duration.ofSeconds(1), Duration.ofHours(1), ""))
        .hasMessageContaining("username");
  }

  @Test
  void should_cover_the_datacenters_a_keyspace_replicates_to_and_never_guess() {
    assertThat(Datacenters.replicaDatacenters(Map.of("class",
        "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1", "3", "dc2", "0", "dc3", "2/1"),
        List.of("dc1", "dc2", "dc3"), "ks")).containsExactly("dc1", "dc3");
    // SimpleStrategy ignores datacenters: its replicas are wherever the ring puts them, so every datacenter.
    assertThat(Datacenters.replicaDatacenters(Map.of("class",
        "org.apache.cassandra.locator.SimpleStrategy", "replication_factor", "1"), List.of("dc2", "dc1", "dc2"),
        "ks")).containsExactly("dc1", "dc2");
    assertThatThrownBy(() -> Datacenters.replicaDatacenters(Map.of("class", "NetworkTopologyStrategy"),
        List.of("dc1"), "ks"))
        .isInstanceOf(dev.idgen.core.StoreUnavailableException.class)
        .hasMessageContaining("keyspace ks has no datacenter with a replica");
  }
}
