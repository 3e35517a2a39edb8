package dev.idgen.core.store.cassandra;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoreUnavailableException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Which datacenters hold the keyspace, and which node of a datacenter coordinates the writes to its rows:
 * what an advance must cover, and how a row of another datacenter's Paxos scope is reached (through one of
 * its own nodes, docs/design.md, "One serial scope per partition").
 *
 * <p>Threads: thread-safe and stateless; every answer is read anew from the driver's metadata (or, without
 * it, from {@code system_schema.keyspaces}), so a datacenter added or lost is seen at the next call; what an
 * advance covers ({@link #toCover()}) is read from {@code system_schema.keyspaces} as well, at each advance.
 */
@ThreadSafe
final class Datacenters {
  private final CassandraSettings settings;
  private final CasOutcomes outcomes;

  Datacenters(CassandraSettings settings, CasOutcomes outcomes) {
    this.settings = settings;
    this.outcomes = outcomes;
  }

  /**
   * The datacenters that hold the keyspace (its replication), not those that merely have nodes: a
   * datacenter with no replica has no pools to trim and no rows to read. Never a guess: an advance that
   * covered fewer datacenters than hold the keyspace would return OK while the others still serve IDs at
   * or below the floor. The driver's schema metadata may be missing (disabled, or the keyspace filtered
   * out in a {@code datastax-java-driver} block); the replication is then read from
   * {@code system_schema.keyspaces}, and if that fails too, the operation fails and says why.
   */
  List<String> all() {
    return datacenters(false);
  }

  /**
   * What an advance must cover now: {@link #all()}, and also every datacenter that {@code system_schema.keyspaces}
   * names, read at once. The driver's metadata follows a schema change late: its refresh waits for the
   * change event and a debounce window (1 s by default), longer while its control connection reconnects. A
   * datacenter added to the replication by an {@code ALTER KEYSPACE} that has returned (its nodes agree on the
   * schema) is covered from then on, not a second or more later. The union: a datacenter just removed is
   * covered a little longer (the advance fails until the driver sees the removal, UNAVAILABLE: retried), never
   * one too few.
   */
  List<String> toCover() {
    return datacenters(true);
  }

  private List<String> datacenters(boolean readSchema) {
    Map<String, String> known = outcomes.st().session.getMetadata().getKeyspace(settings.keyspace())
        .map(ks -> ks.getReplication()).orElse(null);
    List<String> nodeDatacenters = outcomes.st().session.getMetadata().getNodes().values().stream()
        .map(Node::getDatacenter).filter(Objects::nonNull).toList();
    TreeSet<String> dcs = new TreeSet<>();
    if (known != null) {
      dcs.addAll(replicaDatacenters(known, nodeDatacenters, settings.keyspace()));
    }
    if (known == null || readSchema) {
      Row row = outcomes.read(outcomes.st().selectReplication.bind(settings.keyspace()), ConsistencyLevel.LOCAL_ONE,
          "replication of keyspace " + settings.keyspace() + " in system_schema.keyspaces"
              + (known == null ? " (the driver has no schema metadata for it)" : ""));
      if (row == null) {
        throw new StoreUnavailableException("keyspace " + settings.keyspace() + " is not in"
            + " system_schema.keyspaces: cannot tell which datacenters hold it, so nothing that must cover every"
            + " datacenter (AdvanceSequence) is done");
      }
      dcs.addAll(replicaDatacenters(row.getMap("replication", String.class, String.class), nodeDatacenters,
          settings.keyspace()));
    }
    return List.copyOf(dcs);
  }

  /**
   * The datacenters a keyspace's replication places replicas in: the named ones with a factor above 0
   * ({@code NetworkTopologyStrategy}), or every datacenter with a node ({@code SimpleStrategy}, which
   * ignores datacenters). Fails rather than return none.
   */
  static List<String> replicaDatacenters(Map<String, String> replication, Collection<String> nodeDatacenters,
      String keyspace) {
    String strategy = replication.getOrDefault("class", "");
    TreeSet<String> dcs = new TreeSet<>();
    if (strategy.endsWith("SimpleStrategy")) {
      dcs.addAll(nodeDatacenters);
    } else {
      replication.forEach((k, v) -> {
        if (!k.equals("class") && !k.equals("replication_factor") && replicas(v) > 0) {
          dcs.add(k);
        }
      });
    }
    if (dcs.isEmpty()) {
      throw new StoreUnavailableException("keyspace " + keyspace + " has no datacenter with a replica in its"
          + " replication " + replication + ": cannot tell which datacenters to cover");
    }
    return List.copyOf(dcs);
  }

  /** A replication factor as Cassandra writes it ("3", or "3/1" with transient replicas); 1 if unreadable. */
  private static int replicas(String factor) {
    try {
      int slash = factor.indexOf('/');
      return Integer.parseInt((slash < 0 ? factor : factor.substring(0, slash)).trim());
    } catch (NumberFormatException e) {
      return 1; // named, so it holds replicas: covering a datacenter too many is safe, one too few is not
    }
  }

  Node coordinatorIn(String datacenter, SequenceDefinition d) {
    return coordinatorIn(datacenter, "advance sequence '" + d.name() + "'");
  }

  Node coordinatorIn(String datacenter, String what) {
    List<Node> up = new ArrayList<>();
    for (Node node : outcomes.st().session.getMetadata().getNodes().values()) {
      if (datacenter.equals(node.getDatacenter()) && node.getState() == NodeState.UP
          && node.getOpenConnections() > 0) {
        up.add(node);
      }
    }
    if (up.isEmpty()) {
      throw new StoreUnavailableException("cannot " + what + ": datacenter " + datacenter
          + " has no reachable node, and its rows are written only through its own coordinators; retry"
          + " when it is back");
    }
    return up.get(ThreadLocalRandom.current().nextInt(up.size()));
  }
}
