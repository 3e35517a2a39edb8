package dev.idgen.testing;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.OptionalLong;

/**
 * The two-datacenter Cassandra 5.0 of the integration tests, as {@link CassandraExtension} started it (or
 * found it): one node in datacenter {@value #DC1}, one in {@value #DC2}, GossipingPropertyFileSnitch, no
 * authentication, no TLS. A node is named after its datacenter. Tests create their own keyspaces (use fresh
 * names: the cluster is shared by every test class of the JVM).
 *
 * <p>Obtain it as a test method or constructor parameter of a class annotated
 * {@code @ExtendWith(CassandraExtension.class)}, or through {@link CassandraExtension#cluster()}.
 */
public interface TestCassandra {
  /** The first datacenter, and the name of its node. */
  String DC1 = "dc1";
  /** The second datacenter, and the name of its node. */
  String DC2 = "dc2";

  /** Where this cluster comes from. */
  Backend backend();

  /** The datacenter names, {@code [dc1, dc2]}: also the local datacenter of a driver given {@link #contactPoint}. */
  default List<String> datacenters() {
    return List.of(DC1, DC2);
  }

  /**
   * The CQL contact point of datacenter {@code dc}'s node as {@code host:port}, e.g. {@code 127.0.0.1:9042}
   * (launcher), or a mapped port on the Docker host (Testcontainers).
   */
  String contactPoint(String dc);

  /** {@link #contactPoint} as an address. */
  default InetSocketAddress address(String dc) {
    String cp = contactPoint(dc);
    int colon = cp.lastIndexOf(':');
    return InetSocketAddress.createUnresolved(cp.substring(0, colon), Integer.parseInt(cp.substring(colon + 1)));
  }

  /**
   * Freezes datacenter {@code dc}'s node: SIGSTOP of its JVM (launcher, or external when started by the
   * launcher), {@code docker pause} (Testcontainers). It keeps its sockets but answers nothing, as a
   * partitioned or GC-stalled node would. Always {@link #resume} it in a {@code finally}; whatever stays
   * paused is resumed when the cluster is stopped.
   *
   * @throws UnsupportedOperationException when this backend cannot pause (an external cluster that the
   *     launcher did not start)
   */
  void pause(String dc);

  /** Resumes a node that {@link #pause} froze (SIGCONT / {@code docker unpause}); harmless when it is not paused. */
  void resume(String dc);

  /** {@link #resume} of every node this handle paused. */
  void resumeAll();

  /** The process id of datacenter {@code dc}'s node JVM when it runs on this machine (launcher), else empty. */
  OptionalLong pid(String dc);

  /**
   * Runs {@code nodetool ARGS} against datacenter {@code dc}'s node and returns what it printed (a snapshot, an
   * import of SSTables: what an operator's backup and restore do).
   *
   * @throws UnsupportedOperationException when this backend cannot (only the launcher's nodes can)
   * @throws IllegalStateException when nodetool fails, with its output
   */
  default String nodetool(String dc, String... args) {
    throw new UnsupportedOperationException(backend() + " cannot run nodetool on its nodes; use the launcher");
  }

  /**
   * The data directory of datacenter {@code dc}'s node ({@code data_file_directories}): keyspace directories, and
   * in their table directories the snapshots.
   *
   * @throws UnsupportedOperationException when the nodes' files are not on this machine
   */
  default java.nio.file.Path dataDirectory(String dc) {
    throw new UnsupportedOperationException(backend() + "'s node files are not on this machine; use the launcher");
  }

  /** One line for logs: backend, contact points, pids or containers. */
  String describe();
}
