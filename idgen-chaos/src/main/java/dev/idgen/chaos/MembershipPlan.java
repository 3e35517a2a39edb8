package dev.idgen.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What a membership change may do to the cluster as it is now, decided without touching it: which spare may
 * bootstrap into which datacenter, which node may be decommissioned or replaced, and how; or why none may.
 * The rules keep the run's other faults meaningful and the cluster able to take the next change:
 * <ul>
 *   <li>a datacenter keeps at least the largest replication factor any keyspace has there (Cassandra refuses a
 *       decommission below it), and grows by at most one node beyond its topology's size (each node is a JVM on
 *       a small machine);
 *   <li>only joined spares are decommissioned: the topology's nodes are every node's seeds;
 *   <li>a node is replaced only in a datacenter of three nodes or more where every keyspace has two replicas or
 *       more (its data must be streamed from the others), and never a node whose clock the run fakes;
 *   <li>a replacement at a spare's address removes the dead node's address for good: it must leave at least two
 *       of the servers' contact points of that datacenter among the members (a server restarted later finds the
 *       cluster through them), else the node is replaced in place.
 * </ul>
 * Immutable: one plan per change, made from the cluster's state when the change is drawn.
 *
 * @param members the members by datacenter, as the launcher lists them
 * @param topologySize the topology's own node count by datacenter (netns-3x1: dc1 3, dc2 1)
 * @param spares the launcher's spare nodes by datacenter, in the order they are taken
 * @param contactPoints the servers' contact points by datacenter (the members when the run started)
 * @param replication the replication factors of the keyspaces that replicate in each datacenter
 * @param untouchable nodes no change may remove (those the run restarted under a fake clock)
 */
record MembershipPlan(Map<String, List<String>> members, Map<String, Integer> topologySize,
    Map<String, List<String>> spares, Map<String, List<String>> contactPoints,
    Map<String, TopologyChanges.Replication> replication, Set<String> untouchable) {

  MembershipPlan {
    members = copy(members);
    topologySize = Map.copyOf(topologySize);
    spares = copy(spares);
    contactPoints = copy(contactPoints);
    replication = Map.copyOf(replication);
    untouchable = Set.copyOf(untouchable);
  }

  /** A change that can be made now, or the reason none can. */
  record Choice(String dc, String node, boolean inPlace, String note) {}

  /** The datacenters a spare may bootstrap into (dc1, dc2 only: dc3 is add-dc's), each with its spare; may be empty. */
  List<Choice> bootstraps() {
    List<Choice> out = new ArrayList<>();
    for (String dc : ChaosCassandra.DATACENTERS) {
      int size = members(dc).size();
      Optional<String> spare = freeSpare(dc);
      if (spare.isPresent() && size < topologySize.getOrDefault(dc, 0) + 1) {
        out.add(new Choice(dc, spare.get(), false, dc + " has " + size + " nodes"));
      }
    }
    return out;
  }

  /** Why no spare may bootstrap now (when {@link #bootstraps()} is empty). */
  String whyNoBootstrap() {
    List<String> why = new ArrayList<>();
    for (String dc : ChaosCassandra.DATACENTERS) {
      why.add(dc + (freeSpare(dc).isEmpty() ? " has no spare left" : " has " + members(dc).size()
          + " nodes, its topology's size + 1"));
    }
    return String.join("; ", why);
  }

  /** The joined spares that may leave, each keeping its datacenter at or above its largest replication factor. */
  List<Choice> decommissions() {
    List<Choice> out = new ArrayList<>();
    for (String dc : ChaosCassandra.DATACENTERS) {
      List<String> in = members(dc);
      if (in.size() - 1 < maxReplication(dc)) {
        continue;
      }
      for (String node : in) {
        if (spares.getOrDefault(dc, List.of()).contains(node) && !untouchable.contains(node)) {
          out.add(new Choice(dc, node, false, dc + " keeps " + (in.size() - 1) + " nodes for replication "
              + maxReplication(dc)));
        }
      }
    }
    return out;
  }

  /** Why no node may leave now (when {@link #decommissions()} is empty). */
  String whyNoDecommission() {
    List<String> why = new ArrayList<>();
    for (String dc : ChaosCassandra.DATACENTERS) {
      List<String> in = members(dc);
      long joined = in.stream().filter(n -> spares.getOrDefault(dc, List.of()).contains(n)).count();
      why.add(dc + ": " + in.size() + " nodes, " + joined + " joined spare(s), replication up to "
          + maxReplication(dc));
    }
    return "no joined spare can leave without going below a replication factor (" + String.join("; ", why) + ")";
  }

  /** The nodes that may be replaced (any variant), by datacenter order. */
  List<String> replaceable() {
    List<String> out = new ArrayList<>();
    for (String dc : ChaosCassandra.DATACENTERS) {
      List<String> in = members(dc);
      if (in.size() >= 3 && minReplication(dc) >= 2) {
        in.stream().filter(n -> !untouchable.contains(n)).forEach(out::add);
      }
    }
    return out;
  }

  /** Why no node may be replaced now (when {@link #replaceable()} is empty). */
  String whyNoReplace() {
    List<String> why = new ArrayList<>();
    for (String dc : ChaosCassandra.DATACENTERS) {
      why.add(dc + ": " + members(dc).size() + " nodes, replication from " + minReplication(dc));
    }
    return "no datacenter has three nodes and two replicas or more of every keyspace, or its nodes run under a"
        + " fake clock (" + String.join("; ", why) + ")";
  }

  /**
   * How {@code node} (one of {@link #replaceable()}) is replaced when {@code atSpare} is asked for: at the
   * datacenter's first free spare's address if one is left and the servers keep two contact points, else in
   * place, the note saying why.
   */
  Choice replacement(String node, boolean atSpare) {
    String dc = datacenterOf(node);
    if (!atSpare) {
      return new Choice(dc, node, true, "in place");
    }
    Optional<String> spare = freeSpare(dc);
    if (spare.isEmpty()) {
      return new Choice(dc, node, true, "in place: " + dc + " has no spare left");
    }
    List<String> contacts = contactPoints.getOrDefault(dc, List.of());
    long kept = contacts.stream().filter(members(dc)::contains).filter(n -> !n.equals(node)).count();
    if (contacts.contains(node) && kept < 2) {
      return new Choice(dc, node, true, "in place: the servers would keep " + kept + " contact point(s) in " + dc);
    }
    return new Choice(dc, spare.get(), false, "at " + spare.get() + "'s address");
  }

  /** The first spare of {@code dc} that is not a member. */
  Optional<String> freeSpare(String dc) {
    List<String> all = new ArrayList<>();
    members.values().forEach(all::addAll);
    return spares.getOrDefault(dc, List.of()).stream().filter(n -> !all.contains(n)).findFirst();
  }

  private List<String> members(String dc) {
    return members.getOrDefault(dc, List.of());
  }

  private int maxReplication(String dc) {
    TopologyChanges.Replication rf = replication.get(dc);
    return rf == null ? 0 : rf.max();
  }

  private int minReplication(String dc) {
    TopologyChanges.Replication rf = replication.get(dc);
    return rf == null ? 0 : rf.min();
  }

  private static Map<String, List<String>> copy(Map<String, List<String>> m) {
    Map<String, List<String>> out = new java.util.LinkedHashMap<>();
    m.forEach((k, v) -> out.put(k, List.copyOf(v)));
    return java.util.Collections.unmodifiableMap(out);
  }

  private String datacenterOf(String node) {
    return members.entrySet().stream().filter(e -> e.getValue().contains(node)).map(Map.Entry::getKey)
        .findFirst().orElseThrow(() -> new IllegalArgumentException("unknown node " + node));
  }
}
