package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The registry of fault kinds: their order (the table's columns), weights and traits are what the schedule and
 * the checker were written against, and a cluster's missing abilities rule out exactly the kinds that need
 * them, each with its reason.
 */
class FaultKindsTest {
  /** A cluster of {@code dc1Nodes} nodes in dc1 and one in dc2, on loopback, whose nodes can be killed or not. */
  private static ChaosCassandra cluster(int dc1Nodes, boolean canKill) {
    return new ChaosCassandra() {
      @Override
      public String contactPoint(String dc) {
        return "127.0.0.1:9042";
      }

      @Override
      public List<String> nodes(String dc) {
        return dc.equals("dc1") ? List.of("dc1a", "dc1b", "dc1c").subList(0, dc1Nodes) : List.of("dc2a");
      }

      @Override
      public String describe(String dc) {
        return dc;
      }

      @Override
      public void pause(String dc) {}

      @Override
      public void resume(String dc) {}

      @Override
      public void resumeAll() {}

      @Override
      public boolean canKill() {
        return canKill;
      }
    };
  }

  @Test
  void should_list_every_kind_in_the_order_of_the_table_with_its_weight() {
    assertThat(FaultKinds.NAMES).containsExactly("server-kill", "cassandra-pause", "client-kill",
        "advance-burst", "server-restart", "rolling-restart", "dc-partition", "dc-oneway", "server-isolate",
        "replica-one", "replica-two", "cassandra-kill", "owner-kill", "owner-isolate", "fresh-advance",
        "reserve-range");
    assertThat(FaultKinds.WEIGHTS).isEqualTo(Map.ofEntries(Map.entry("server-kill", 3),
        Map.entry("cassandra-pause", 2), Map.entry("client-kill", 3), Map.entry("advance-burst", 2),
        Map.entry("server-restart", 1), Map.entry("rolling-restart", 1), Map.entry("dc-partition", 4),
        Map.entry("dc-oneway", 2), Map.entry("server-isolate", 2), Map.entry("replica-one", 2),
        Map.entry("replica-two", 2), Map.entry("cassandra-kill", 4), Map.entry("owner-kill", 2),
        Map.entry("owner-isolate", 2), Map.entry("fresh-advance", 3), Map.entry("reserve-range", 1)));
  }

  @Test
  void should_give_each_kind_the_traits_the_schedule_and_the_checker_go_by() {
    assertThat(with(Fault.Trait.HOLDS)).containsExactlyInAnyOrder("server-kill", "cassandra-pause",
        "dc-partition", "dc-oneway", "server-isolate", "replica-one", "replica-two", "cassandra-kill",
        "owner-kill", "owner-isolate");
    assertThat(with(Fault.Trait.NEEDS_SERVERS)).containsExactlyInAnyOrder("server-kill", "server-restart",
        "rolling-restart", "server-isolate", "owner-kill", "owner-isolate", "fresh-advance");
    assertThat(FaultKinds.OWNER_KINDS).containsExactlyInAnyOrder("owner-kill", "owner-isolate");
    assertThat(FaultKinds.GRACEFUL).containsExactlyInAnyOrder("server-restart", "rolling-restart");
    assertThat(with(Fault.Trait.ON_REQUEST)).containsExactly("rolling-restart");
    assertThatThrownBy(() -> FaultKinds.named("server-reboot")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("server-kill");
  }

  @Test
  void should_rule_out_on_a_loopback_cluster_the_kinds_that_need_namespaces_three_replicas_or_kills() {
    ChaosCassandra twoDc = cluster(1, false);
    String noNetwork = "no network namespaces: " + twoDc.whyNoNetwork();
    String noThree = "no datacenter has three replicas (one node per datacenter)";

    Map<String, String> not = FaultKinds.injectable(twoDc);

    assertThat(not.keySet()).containsExactly("dc-partition", "dc-oneway", "server-isolate", "replica-one",
        "replica-two", "cassandra-kill", "owner-isolate");
    assertThat(not).containsEntry("dc-partition", noNetwork).containsEntry("owner-isolate", noNetwork)
        .containsEntry("replica-two", noThree).containsEntry("cassandra-kill", twoDc.whyNoKill());
    assertThat(FaultKinds.defaultKinds(twoDc)).containsExactly("server-kill", "cassandra-pause", "client-kill",
        "advance-burst", "server-restart", "owner-kill", "fresh-advance", "reserve-range");
  }

  @Test
  void should_allow_replica_faults_and_kills_where_a_datacenter_has_three_nodes_that_can_be_killed() {
    ChaosCassandra threeInDc1 = cluster(3, true);

    assertThat(FaultKinds.injectable(threeInDc1).keySet()).containsExactly("dc-partition", "dc-oneway",
        "server-isolate", "owner-isolate");
    assertThat(FaultKinds.defaultKinds(threeInDc1)).contains("replica-one", "replica-two", "cassandra-kill")
        .doesNotContain("rolling-restart");
  }

  private static Set<String> with(Fault.Trait trait) {
    return FaultKinds.ALL.stream().filter(f -> f.traits().contains(trait)).map(Fault::kind)
        .collect(Collectors.toSet());
  }
}
