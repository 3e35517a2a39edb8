package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What the membership kinds may do to a netns-3x1 cluster as it changes: spares join up to one node beyond the
 * topology's size, only joined spares leave and never below a replication factor, replacements stay where every
 * keyspace has other replicas, and a replacement at a spare's address falls back to in place when no spare is
 * left or the servers would lose their contact points.
 */
class MembershipPlanTest {
  private static final Map<String, Integer> SIZES = Map.of("dc1", 3, "dc2", 1);
  private static final Map<String, List<String>> CONTACTS = Map.of("dc1", List.of("dc1a", "dc1b", "dc1c"),
      "dc2", List.of("dc2a"));
  private static final Map<String, TopologyChanges.Replication> RF = Map.of(
      "dc1", new TopologyChanges.Replication(3, 3), "dc2", new TopologyChanges.Replication(1, 1));

  private static MembershipPlan plan(List<String> dc1, List<String> dc2, Map<String, TopologyChanges.Replication> rf,
      Set<String> faked) {
    return new MembershipPlan(Map.of("dc1", dc1, "dc2", dc2), SIZES, CassandraCluster.SPARES, CONTACTS, rf, faked);
  }

  @Test
  void should_let_a_spare_join_each_datacenter_up_to_one_node_beyond_the_topology() {
    MembershipPlan fresh = plan(List.of("dc1a", "dc1b", "dc1c"), List.of("dc2a"), RF, Set.of());
    MembershipPlan grown = plan(List.of("dc1a", "dc1b", "dc1c", "dc1d"), List.of("dc2a", "dc2d"), RF, Set.of());

    assertThat(fresh.bootstraps()).extracting(MembershipPlan.Choice::dc, MembershipPlan.Choice::node)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("dc1", "dc1d"), org.assertj.core.groups.Tuple.tuple("dc2", "dc2d"));
    assertThat(grown.bootstraps()).isEmpty();
    assertThat(grown.whyNoBootstrap()).contains("dc1 has 4 nodes").contains("dc2 has 2 nodes");
  }

  @Test
  void should_decommission_only_joined_spares_and_never_below_the_largest_replication_factor() {
    MembershipPlan fresh = plan(List.of("dc1a", "dc1b", "dc1c"), List.of("dc2a"), RF, Set.of());
    MembershipPlan grown = plan(List.of("dc1a", "dc1b", "dc1c", "dc1d"), List.of("dc2a", "dc2d"), RF, Set.of());
    // A keyspace made while dc2 had two nodes has two replicas there: dc2d must stay.
    MembershipPlan rf2 = plan(List.of("dc1a", "dc1b", "dc1c", "dc1d"), List.of("dc2a", "dc2d"),
        Map.of("dc1", new TopologyChanges.Replication(3, 3), "dc2", new TopologyChanges.Replication(1, 2)), Set.of());
    // A spare that replaced dc1b keeps dc1 at three: it may not leave.
    MembershipPlan replaced = plan(List.of("dc1a", "dc1c", "dc1d"), List.of("dc2a"), RF, Set.of());

    assertThat(fresh.decommissions()).isEmpty();
    assertThat(fresh.whyNoDecommission()).contains("dc1: 3 nodes, 0 joined spare(s), replication up to 3");
    assertThat(grown.decommissions()).extracting(MembershipPlan.Choice::node).containsExactly("dc1d", "dc2d");
    assertThat(rf2.decommissions()).extracting(MembershipPlan.Choice::node).containsExactly("dc1d");
    assertThat(replaced.decommissions()).isEmpty();
    assertThat(plan(List.of("dc1a", "dc1b", "dc1c", "dc1d"), List.of("dc2a"), RF, Set.of("dc1d")).decommissions())
        .as("a node under a fake clock stays").isEmpty();
  }

  @Test
  void should_replace_only_where_every_keyspace_has_other_replicas_and_never_a_faked_node() {
    MembershipPlan plan = plan(List.of("dc1a", "dc1b", "dc1c"), List.of("dc2a"), RF, Set.of("dc1b"));
    MembershipPlan threeInDc2 = plan(List.of("dc1a", "dc1b", "dc1c"), List.of("dc2a", "dc2b", "dc2c"),
        Map.of("dc1", new TopologyChanges.Replication(3, 3), "dc2", new TopologyChanges.Replication(1, 3)), Set.of());

    assertThat(plan.replaceable()).containsExactly("dc1a", "dc1c");
    assertThat(threeInDc2.replaceable()).as("dc2 holds a keyspace with one replica").containsExactly("dc1a",
        "dc1b", "dc1c");
    assertThat(plan(List.of("dc1a"), List.of("dc2a"), RF, Set.of()).replaceable()).isEmpty();
  }

  @Test
  void should_replace_at_a_spares_address_only_while_a_spare_is_left_and_two_contact_points_stay() {
    MembershipPlan fresh = plan(List.of("dc1a", "dc1b", "dc1c"), List.of("dc2a"), RF, Set.of());
    // dc1b was replaced by dc1d: replacing another contact point at a spare's address would leave one.
    MembershipPlan once = plan(List.of("dc1a", "dc1c", "dc1d"), List.of("dc2a"), RF, Set.of());
    MembershipPlan noSpare = plan(List.of("dc1a", "dc1c", "dc1d", "dc1e"), List.of("dc2a"), RF, Set.of());

    assertThat(fresh.replacement("dc1b", true)).isEqualTo(new MembershipPlan.Choice("dc1", "dc1d", false,
        "at dc1d's address"));
    assertThat(fresh.replacement("dc1b", false).inPlace()).isTrue();
    assertThat(once.replacement("dc1a", true)).isEqualTo(new MembershipPlan.Choice("dc1", "dc1a", true,
        "in place: the servers would keep 1 contact point(s) in dc1"));
    assertThat(once.replacement("dc1d", true)).as("a joined spare is no contact point")
        .isEqualTo(new MembershipPlan.Choice("dc1", "dc1e", false, "at dc1e's address"));
    assertThat(noSpare.replacement("dc1d", true)).isEqualTo(new MembershipPlan.Choice("dc1", "dc1d", true,
        "in place: dc1 has no spare left"));
  }
}
