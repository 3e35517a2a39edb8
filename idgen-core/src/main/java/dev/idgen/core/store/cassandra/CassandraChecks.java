package dev.idgen.core.store.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Start-up checks of the Cassandra settings that resolving unknown compare-and-set outcomes relies on,
 * read from each reachable node's {@code system_views.settings} (Cassandra 4.0+):
 * <ul>
 *   <li>{@code paxos_variant: v2}. A read at SERIAL or LOCAL_SERIAL is the fence that settles an unknown
 *       outcome: it must be linearizable, i.e. complete any round in progress. Paxos v2 (Cassandra 4.1+)
 *       guarantees it; v1 does too since CASSANDRA-12126 unless a node runs with
 *       {@code -Dcassandra.unsafe.disable-serial-reads-linearizability=true}, which this check cannot see,
 *       so v1 gets a warning.
 *   <li>The driver's request timeout longer than {@code cas_contention_timeout + write_request_timeout}:
 *       a CAS the driver has given up on must already be over at its coordinator, or it could apply after
 *       the read-back (a "late" CAS: settled safely by the op-id rules, but as a counted loss).
 * </ul>
 * Nothing here refuses to start: a cluster that hides its settings (older versions, restricted users)
 * gets one INFO line. Called once per store, from the connecting thread.
 */
final class CassandraChecks {
  private static final Logger log = LoggerFactory.getLogger(CassandraChecks.class);
  private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h)?");

  private CassandraChecks() {}

  static void warnAboutUnsafeSettings(CqlSession session, CassandraSettings settings) {
    for (Node node : localNodes(session, settings.localDatacenter())) {
      Optional<NodeSettings> s = read(session, node);
      if (s.isEmpty()) {
        log.info("could not read system_views.settings on {}: the Paxos variant and timeouts that"
            + " resolving unknown CAS outcomes relies on are not checked", node.getEndPoint());
        continue;
      }
      for (String warning : warnings(s.get(), settings.requestTimeout())) {
        log.warn("Cassandra node {}: {}", node.getEndPoint(), warning);
      }
    }
  }

  /** What is wrong with one node's settings for idgen, in words an operator can act on. */
  static List<String> warnings(NodeSettings s, Duration requestTimeout) {
    List<String> out = new ArrayList<>();
    if (s.paxosVariant() != null && !s.paxosVariant().equalsIgnoreCase("v2")) {
      out.add("paxos_variant is " + s.paxosVariant() + "; idgen relies on serial reads being linearizable"
          + " to settle unknown compare-and-set outcomes: set paxos_variant: v2 (Cassandra 4.1+), or make sure"
          + " no node runs with -Dcassandra.unsafe.disable-serial-reads-linearizability=true");
    }
    if (s.casContentionTimeout() != null && s.writeRequestTimeout() != null) {
      Duration serverSide = s.casContentionTimeout().plus(s.writeRequestTimeout());
      if (requestTimeout.compareTo(serverSide) <= 0) {
        out.add("idgen.cassandra.request-timeout (" + requestTimeout + ") is not longer than the node's"
            + " cas_contention_timeout + write_request_timeout (" + serverSide + "): a compare-and-set the"
            + " driver gave up on may still apply at its coordinator after idgen read it back (never a"
            + " duplicate, but counted losses); raise request-timeout above " + serverSide);
      }
    }
    return out;
  }

  /** The settings of one node that matter here; null where the node does not say. */
  record NodeSettings(String paxosVariant, Duration casContentionTimeout, Duration writeRequestTimeout) {}

  private static List<Node> localNodes(CqlSession session, String dc) {
    List<Node> out = new ArrayList<>();
    for (Node node : session.getMetadata().getNodes().values()) {
      if (dc.equals(node.getDatacenter()) && node.getState() == NodeState.UP) {
        out.add(node);
      }
    }
    return out;
  }

  private static Optional<NodeSettings> read(CqlSession session, Node node) {
    String variant = null;
    Duration cas = null;
    Duration write = null;
    try {
      for (Row r : session.execute(SimpleStatement.newInstance("SELECT name, value FROM system_views.settings"
          + " WHERE name IN ('paxos_variant', 'cas_contention_timeout', 'write_request_timeout')")
          .setNode(node).setTimeout(Duration.ofSeconds(5)))) {
        String value = r.getString("value");
        switch (r.getString("name")) {
          case "paxos_variant" -> variant = value;
          case "cas_contention_timeout" -> cas = parse(value);
          case "write_request_timeout" -> write = parse(value);
          default -> { }
        }
      }
    } catch (DriverException e) {
      return Optional.empty();
    }
    return Optional.of(new NodeSettings(variant, cas, write));
  }

  /** Cassandra's duration settings: {@code 1000ms}, {@code 2s}; a bare number is milliseconds. */
  static Duration parse(String value) {
    if (value == null) {
      return null;
    }
    Matcher m = DURATION.matcher(value.trim().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      return null;
    }
    long n = Long.parseLong(m.group(1));
    String unit = m.group(2) == null ? "ms" : m.group(2);
    return switch (unit) {
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofMillis(n);
    };
  }
}
