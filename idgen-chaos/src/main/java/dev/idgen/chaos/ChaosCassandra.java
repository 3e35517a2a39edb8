package dev.idgen.chaos;

/**
 * The two-datacenter Cassandra a chaos run works against: where each datacenter's node is, and freezing
 * and thawing a node. {@link CassandraCluster} is the local launcher's cluster (the command line); ChaosIT
 * passes the integration tests' cluster (idgen-testing's CassandraExtension) instead.
 */
interface ChaosCassandra {
  /** The CQL contact point ({@code host:port}) of datacenter {@code dc}'s node: dc1 or dc2. */
  String contactPoint(String dc);

  /** What {@link #pause} would freeze, for the run log, e.g. {@code pid=1234}. */
  String describe(String dc) throws Exception;

  /** Freezes {@code dc}'s node (sockets open, no answers), as in a long GC pause or a hung VM. */
  void pause(String dc) throws Exception;

  void resume(String dc) throws Exception;

  /** Resumes every node this run paused; safe to call any number of times, never throws. */
  void resumeAll();
}
