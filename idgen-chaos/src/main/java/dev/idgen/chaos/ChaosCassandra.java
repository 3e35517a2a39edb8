package dev.idgen.chaos;

import java.util.List;
import java.util.Optional;

/**
 * The two-datacenter Cassandra a chaos run works against: its nodes, where each datacenter's nodes are, and
 * what can be done to them. {@link CassandraCluster} is the local launcher's cluster (the command line, and
 * ChaosIT where network namespaces can be made); ChaosIT passes the integration tests' cluster
 * (idgen-testing's CassandraExtension) otherwise.
 *
 * <p>What a cluster cannot do decides which fault kinds a run can inject ({@link FaultKinds#injectable}):
 * network faults need {@link #network()}, replica faults three nodes in a datacenter, Cassandra kills
 * {@link #canKill()}.
 */
interface ChaosCassandra {
  /** The datacenters, dc1 and dc2. */
  List<String> DATACENTERS = List.of("dc1", "dc2");

  /** The CQL contact points ({@code host:port}, comma-separated) of datacenter {@code dc}'s nodes. */
  String contactPoint(String dc);

  /** The nodes of datacenter {@code dc} by name, e.g. {@code [dc1]} or {@code [dc1a, dc1b, dc1c]}. */
  default List<String> nodes(String dc) {
    return List.of(dc);
  }

  /** The address of node {@code node} (what fault rules drop). */
  default String address(String node) {
    String cp = contactPoint(node);
    return cp.substring(0, cp.lastIndexOf(':'));
  }

  /** Replicas per datacenter for the keyspace the servers create: every node of it, at most 3. */
  default int replication(String dc) {
    return Math.min(3, nodes(dc).size());
  }

  /** What {@link #pause} would freeze, for the run log, e.g. {@code pid=1234}. */
  String describe(String dc) throws Exception;

  /** Freezes every node of {@code dc} (sockets open, no answers), as in a long GC pause or a hung VM. */
  void pause(String dc) throws Exception;

  void resume(String dc) throws Exception;

  /** Freezes one node (SIGSTOP). */
  default void pauseNode(String node) throws Exception {
    throw new UnsupportedOperationException("this cluster cannot pause one node of several");
  }

  /** Resumes a node {@link #pauseNode} froze. */
  default void resumeNode(String node) throws Exception {
    throw new UnsupportedOperationException("this cluster cannot pause one node of several");
  }

  /** Resumes every node this run paused; safe to call any number of times, never throws. */
  void resumeAll();

  /** Whether {@link #kill} and {@link #restart} work here (a launcher's cluster: the nodes' JVMs are ours). */
  default boolean canKill() {
    return false;
  }

  /** Why {@link #canKill()} is false, for the run's output. */
  default String whyNoKill() {
    return "this cluster's nodes cannot be killed and started again by the harness";
  }

  /** {@code kill -9} of node {@code node}. */
  default void kill(String node) throws Exception {
    throw new UnsupportedOperationException("this cluster cannot kill a node");
  }

  /** Starts node {@code node} again on its data (its commit log is replayed) and waits until it serves CQL. */
  default void restart(String node) throws Exception {
    throw new UnsupportedOperationException("this cluster cannot restart a node");
  }

  /** The network namespaces of the nodes, when they run in some (a netns topology). */
  default Optional<ChaosNetwork> network() {
    return Optional.empty();
  }

  /** Why {@link #network()} is empty, for the run's output. */
  default String whyNoNetwork() {
    return "the nodes run on loopback, not in network namespaces (cassandra.sh --topology netns-3x3)";
  }
}
