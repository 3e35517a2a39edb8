package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
        "reserve-range", "redefine", "clock-server", "clock-cassandra", "bootstrap", "decommission", "replace", "repair-cleanup", "add-dc");
    assertThat(FaultKinds.WEIGHTS).isEqualTo(Map.ofEntries(Map.entry("server-kill", 3),
        Map.entry("cassandra-pause", 2), Map.entry("client-kill", 3), Map.entry("advance-burst", 2),
        Map.entry("server-restart", 1), Map.entry("rolling-restart", 1), Map.entry("dc-partition", 4),
        Map.entry("dc-oneway", 2), Map.entry("server-isolate", 2), Map.entry("replica-one", 2),
        Map.entry("replica-two", 2), Map.entry("cassandra-kill", 4), Map.entry("owner-kill", 2),
        Map.entry("owner-isolate", 2), Map.entry("fresh-advance", 3), Map.entry("reserve-range", 1),
        Map.entry("redefine", 2), Map.entry("clock-server", 5),
        Map.entry("clock-cassandra", 6), Map.entry("bootstrap", 3), Map.entry("decommission", 3),
        Map.entry("replace", 3), Map.entry("repair-cleanup", 3), Map.entry("add-dc", 3)));
  }

  @Test
  void should_give_each_kind_the_traits_the_schedule_and_the_checker_go_by() {
    assertThat(with(Fault.Trait.HOLDS)).containsExactlyInAnyOrder("server-kill", "cassandra-pause",
        "dc-partition", "dc-oneway", "server-isolate", "replica-one", "replica-two", "cassandra-kill",
        "owner-kill", "owner-isolate", "clock-server", "clock-cassandra", "bootstrap", "decommission", "replace",
        "repair-cleanup", "add-dc");
    assertThat(with(Fault.Trait.NEEDS_SERVERS)).containsExactlyInAnyOrder("server-kill", "server-restart",
        "rolling-restart", "server-isolate", "owner-kill", "owner-isolate", "fresh-advance");
    assertThat(FaultKinds.OWNER_KINDS).containsExactlyInAnyOrder("owner-kill", "owner-isolate");
    assertThat(FaultKinds.GRACEFUL).containsExactlyInAnyOrder("server-restart", "rolling-restart");
    assertThat(with(Fault.Trait.ON_REQUEST)).containsExactlyInAnyOrder("rolling-restart", "clock-cassandra",
        "bootstrap", "decommission", "replace", "repair-cleanup", "add-dc");
    assertThatThrownBy(() -> FaultKinds.named("server-reboot")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("server-kill");
  }

  @Test
  void should_rule_out_on_a_loopback_cluster_the_kinds_that_need_namespaces_three_replicas_or_kills(
      @TempDir Path tmp) throws Exception {
    ChaosCassandra twoDc = cluster(1, false);
    String noNetwork = "no network namespaces: " + twoDc.whyNoNetwork();
    String noThree = "no datacenter has three replicas (one node per datacenter)";

    Map<String, String> not = withFaketime(Files.createFile(tmp.resolve("wallclock.so")).toString(),
        () -> FaultKinds.injectable(twoDc));

    assertThat(not.keySet()).containsExactly("dc-partition", "dc-oneway", "server-isolate", "replica-one",
        "replica-two", "cassandra-kill", "owner-isolate", "clock-cassandra", "bootstrap", "decommission", "replace",
        "repair-cleanup", "add-dc");
    assertThat(not).containsEntry("dc-partition", noNetwork).containsEntry("owner-isolate", noNetwork)
        .containsEntry("replica-two", noThree).containsEntry("cassandra-kill", twoDc.whyNoKill())
        .containsEntry("clock-cassandra", "a node must be started again on a fake wall clock, and " + twoDc.whyNoKill())
        .containsEntry("bootstrap", "membership changes need a netns topology: " + twoDc.whyNoNetwork())
        .containsEntry("add-dc", "membership changes need a netns topology: " + twoDc.whyNoNetwork());
    assertThat(withFaketime(tmp.resolve("wallclock.so").toString(), () -> FaultKinds.defaultKinds(twoDc)))
        .containsExactly("server-kill", "cassandra-pause", "client-kill", "advance-burst", "server-restart",
            "owner-kill", "fresh-advance", "reserve-range", "redefine", "clock-server");
  }

  @Test
  void should_rule_out_the_clock_kinds_where_the_shim_is_missing_saying_so() throws Exception {
    ChaosCassandra threeInDc1 = cluster(3, true);

    Map<String, String> not = withFaketime("/nonexistent/wallclock.so", () -> FaultKinds.injectable(threeInDc1));

    assertThat(not).containsEntry("clock-server", "-D" + FakeClock.LIBRARY_PROPERTY
        + "=/nonexistent/wallclock.so is not a readable file");
    // Killable, but not the launcher's cluster: its nodes cannot be restarted on a fake wall clock.
    assertThat(not).containsKey("clock-cassandra");
  }

  @Test
  void should_allow_replica_faults_and_kills_where_a_datacenter_has_three_nodes_that_can_be_killed() {
    ChaosCassandra threeInDc1 = cluster(3, true);

    assertThat(FaultKinds.injectable(threeInDc1).keySet()).contains("dc-partition", "dc-oneway",
        "server-isolate", "owner-isolate").doesNotContain("replica-one", "replica-two", "cassandra-kill");
    assertThat(FaultKinds.defaultKinds(threeInDc1)).contains("replica-one", "replica-two", "cassandra-kill")
        .doesNotContain("rolling-restart");
  }

  @Test
  void should_take_the_membership_changes_and_the_cassandra_clock_on_the_launchers_netns_cluster_only_on_request(
      @TempDir Path tmp) throws Exception {
    // The launcher's netns cluster as the run sees it before its start: its layout, its namespaces.
    CassandraCluster netns = new CassandraCluster(Path.of("."), "netns-3x1", tmp);

    Map<String, String> not = withFaketime(Files.createFile(tmp.resolve("wallclock.so")).toString(),
        () -> FaultKinds.injectable(netns));
    List<String> defaults = withFaketime(tmp.resolve("wallclock.so").toString(),
        () -> FaultKinds.defaultKinds(netns));

    assertThat(not).isEmpty();
    assertThat(defaults).contains("clock-server", "cassandra-kill", "dc-partition", "redefine")
        .doesNotContain("clock-cassandra", "bootstrap", "decommission", "replace", "repair-cleanup", "add-dc",
            "rolling-restart");
  }

  /** {@code body} with {@link FakeClock#LIBRARY_PROPERTY} set to {@code library}, then as it was. */
  private static <T> T withFaketime(String library, Callable<T> body) throws Exception {
    String was = System.getProperty(FakeClock.LIBRARY_PROPERTY);
    System.setProperty(FakeClock.LIBRARY_PROPERTY, library);
    try {
      return body.call();
    } finally {
      if (was == null) {
        System.clearProperty(FakeClock.LIBRARY_PROPERTY);
      } else {
        System.setProperty(FakeClock.LIBRARY_PROPERTY, was);
      }
    }
  }

  private static Set<String> with(Fault.Trait trait) {
    return FaultKinds.ALL.stream().filter(f -> f.traits().contains(trait)).map(Fault::kind)
        .collect(Collectors.toSet());
  }
}
