package dev.idgen.chaos;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Membership changes of the launcher's netns cluster, each made the way an operator makes it, while a run goes
 * on: a node bootstrapped into a datacenter, a node decommissioned, a dead node replaced
 * ({@code replace_address_first_boot}), a full repair and a cleanup, and a datacenter added to (and removed
 * from) keyspaces' replication. Every change of the cluster's membership changes the replicas a
 * compare-and-set's Paxos quorum is drawn from: what these are for.
 *
 * <p>Each method injects its change and waits until it is done, every wait bounded ({@link #timeout}); it
 * returns a {@link Change}: what was done, how long it took, and its steps' times. A change that cannot finish
 * in time throws; what it leaves (a node still streaming) is then the cluster's to clean up
 * ({@code cassandra.sh stop} removes every node and namespace). Not thread-safe: one change at a time, from
 * one thread (Cassandra itself refuses concurrent range movements).
 */
final class TopologyChanges {
  /** How long gossip may take to convict a killed node here (10–25 s measured; generous on a busy machine). */
  private static final long GOSSIP_SECONDS = 120;
  /** How many times a failed {@code nodetool rebuild} of one keyspace is run, the schema agreed before each. */
  private static final int REBUILD_ATTEMPTS = 3;
  /** How many times a failed full repair of one keyspace is run. */
  private static final int REPAIR_ATTEMPTS = 3;
  /**
   * How long after an address left the ring (decommissioned, or replaced by a node at another address) no node
   * starts: peers ignore its gossip for {@code gossip_quarantine_delay_ms} (60 s, set by cassandra.sh), so a node
   * started at it sooner reaches no seed ("Unable to contact any seeds") and dies; and a node started at any
   * address meanwhile may still learn the departed one from a peer's gossip, fail to pull its schema and die at
   * its start ("Could not achieve schema readiness in PT30S": dc2d, bootstrapped 18 s after dc1b was replaced by
   * dc1d). 15 s of margin. On a saturated machine a joining node can die that way without any departure (its
   * gossip stage behind, a live peer still seen down): hence also {@link #JOIN_ATTEMPTS}.
   */
  private static final Duration QUARANTINE = Duration.ofSeconds(75);
  /** How many times a join (a bootstrap, a new datacenter's first node) is tried; cassandra.sh cleans up a failed one. */
  private static final int JOIN_ATTEMPTS = 2;

  /** When (System.nanoTime()) an address last left the ring, for {@link #QUARANTINE}; null: none yet. */
  private Long lastLeftAt;

  private final CassandraCluster cluster;
  private final Duration timeout;

  /** A change of one thing, with how long it took in all and its steps, e.g. {@code joined=41.2s}. */
  record Change(String kind, String target, Duration took, String steps) {
    String describe() {
      return String.format(Locale.ROOT, "%s %s: %.1f s (%s)", kind, target, took.toMillis() / 1e3, steps);
    }
  }

  /** The replication factors the keyspaces have in one datacenter: the smallest and the largest. */
  record Replication(int min, int max) {}

  /** Changes of {@code cluster} (a netns topology), each step at most {@code timeout}. */
  TopologyChanges(CassandraCluster cluster, Duration timeout) {
    if (cluster.network().isEmpty()) {
      throw new IllegalArgumentException("membership changes need a netns topology: " + cluster.whyNoNetwork());
    }
    this.cluster = cluster;
    this.timeout = timeout;
  }

  /** A spare node bootstrapped into {@code dc}: it takes a token of its own and streams its share of the data. */
  Change bootstrap(String dc) throws IOException, InterruptedException {
    String node = cluster.spare(dc).orElseThrow(() -> new IllegalStateException("no spare node of " + dc + " left"));
    long t0 = System.nanoTime();
    String notes = join(node, true);
    return new Change("bootstrap", node + " into " + dc, since(t0), "joined=" + seconds(since(t0)) + notes);
  }

  /**
   * Starts spare {@code node} into the ring once no address has left it for {@link #QUARANTINE}, and again (at
   * most {@value #JOIN_ATTEMPTS} tries) when the join fails: cassandra.sh stops a node whose join failed and
   * leaves it a spare, and a node that died at its start never joined, so an operator starts it again. Returns
   * the waits and the failed tries, each after a space, for the change's steps.
   */
  private String join(String node, boolean bootstrap) throws IOException, InterruptedException {
    StringBuilder notes = new StringBuilder();
    for (int attempt = 1; ; attempt++) {
      Duration quarantine = awaitQuarantine();
      if (!quarantine.isZero()) {
        notes.append(" quarantine=").append(seconds(quarantine));
      }
      try {
        cluster.join(node, bootstrap, timeout);
        return notes.toString();
      } catch (IOException e) {
        if (attempt == JOIN_ATTEMPTS) {
          throw e;
        }
        notes.append(" join-failed-").append(attempt);
      }
    }
  }

  /** {@code nodetool decommission} of {@code node}: it streams its ranges away and leaves the ring. */
  Change decommission(String node) throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    cluster.decommission(node, timeout);
    lastLeftAt = System.nanoTime();
    return new Change("decommission", node, since(t0), "left=" + seconds(since(t0)));
  }

  /**
   * {@code node} killed ({@code kill -9}) and replaced by a fresh node that takes its tokens and streams its data:
   * at its own address ({@code inPlace}, a hardware swap that keeps the address) or a spare's. Waits until a peer
   * of its datacenter sees it down first, as an operator checks before a replacement.
   */
  Change replace(String node, boolean inPlace) throws Exception {
    String dc = datacenterOf(node);
    String observer = cluster.nodes(dc).stream().filter(n -> !n.equals(node)).findFirst()
        .orElseThrow(() -> new IllegalStateException(node + " is alone in " + dc + ": nothing to stream from"));
    String fresh = inPlace ? node
        : cluster.spare(dc).orElseThrow(() -> new IllegalStateException("no spare node of " + dc + " left"));
    long t0 = System.nanoTime();
    cluster.kill(node);
    awaitSeen(observer, node, 'D');
    Duration down = since(t0);
    Duration quarantine = awaitQuarantine();
    long t1 = System.nanoTime();
    cluster.replace(node, fresh, timeout);
    if (!inPlace) {
      lastLeftAt = System.nanoTime();
    }
    return new Change("replace", node + (inPlace ? " in place" : " by " + fresh), since(t0),
        "seen-down=" + seconds(down) + " replaced=" + seconds(since(t1))
            + (quarantine.isZero() ? "" : " quarantine=" + seconds(quarantine)));
  }

  /**
   * A full repair of {@code keyspace} on the first node of dc1 (which holds every range: dc1 has three replicas),
   * run again (up to {@value #REPAIR_ATTEMPTS} times) when it fails: a repair is idempotent, and an operator reruns
   * one whose session failed. On 2 busy cores its Paxos cleanup step timed out at a peer ("TIMEOUT for cleanup
   * request for paxos cleanup session"), which is Cassandra's, not idgen's, and ended a membership run.
   */
  Change repair(String keyspace) throws IOException, InterruptedException {
    String node = cluster.nodes("dc1").get(0);
    long t0 = System.nanoTime();
    List<String> notes = new ArrayList<>();
    for (int attempt = 1; ; attempt++) {
      try {
        cluster.nodetoolOrFail(timeout.toSeconds(), node, "repair", "-full", keyspace);
        break;
      } catch (IOException e) {
        if (attempt == REPAIR_ATTEMPTS) {
          throw e;
        }
        notes.add("repair-failed-" + attempt);
      }
    }
    notes.add(0, "repaired=" + seconds(since(t0)));
    return new Change("repair", keyspace + " on " + node, since(t0), String.join(" ", notes));
  }

  /** {@code nodetool cleanup} on every member, one after the other: each drops the data it no longer owns. */
  Change cleanup() throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    List<String> steps = new ArrayList<>();
    for (String node : cluster.members()) {
      long t = System.nanoTime();
      cluster.nodetoolOrFail(timeout.toSeconds(), node, "cleanup");
      steps.add(node + "=" + seconds(since(t)));
    }
    return new Change("cleanup", "every node", since(t0), String.join(" ", steps));
  }

  /**
   * A new datacenter {@code dc} added to the replication of {@code keyspaces} with one replica, in the order of
   * Cassandra's procedure: its first spare joins without bootstrap ({@link #joinDatacenter}), the keyspaces are
   * altered ({@link #replicate}), then {@code nodetool rebuild} streams their data from dc1 ({@link #rebuild}).
   */
  Change addDatacenter(String dc, List<String> keyspaces) throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    Change joined = joinDatacenter(dc);
    Change altered = replicate(dc, keyspaces);
    Change rebuilt = rebuild(dc, keyspaces);
    return new Change("add-datacenter", dc + " to " + keyspaces, since(t0), joined.steps() + " "
        + altered.steps() + " " + rebuilt.steps());
  }

  /** The first spare of new datacenter {@code dc}, joined without bootstrap: no keyspace replicates there yet. */
  Change joinDatacenter(String dc) throws IOException, InterruptedException {
    String node = cluster.spare(dc).orElseThrow(() -> new IllegalStateException("no spare node of " + dc + " left"));
    long t0 = System.nanoTime();
    String notes = join(node, false);
    return new Change("join-datacenter", node + " of " + dc, since(t0), "joined=" + seconds(since(t0)) + notes);
  }

  /**
   * {@code ALTER KEYSPACE} of each of {@code keyspaces}: one replica in {@code dc} besides the others, as an
   * operator's cqlsh does it (the statement returns once the nodes agree on the schema, or after 30 s).
   */
  Change replicate(String dc, List<String> keyspaces) {
    long t0 = System.nanoTime();
    List<String> agreement = new ArrayList<>();
    try (CqlSession session = session()) {
      for (String keyspace : keyspaces) {
        Map<String, String> replication = replication(session, keyspace);
        replication.put(dc, "1");
        agreement.add(keyspace + ":" + (alter(session, keyspace, replication) ? "agreed" : "NOT-agreed"));
      }
    }
    return new Change("replicate", dc + " in " + keyspaces, since(t0), "altered=" + seconds(since(t0)) + " "
        + String.join(",", agreement));
  }

  /**
   * {@code nodetool rebuild --keyspace KS dc1} on every node of {@code dc}, for each of {@code keyspaces}: they stream
   * the keyspaces' data from dc1. Keyspace by keyspace: a rebuild of everything also takes the keyspaces of
   * {@code SimpleStrategy} ({@code system_traces}), whose ranges dc1 alone may not hold ("Unable to find sufficient
   * sources for streaming range").
   */
  Change rebuild(String dc, List<String> keyspaces) throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    List<String> notes = new ArrayList<>();
    for (String node : cluster.nodes(dc)) {
      for (String keyspace : keyspaces) {
        for (int attempt = 1; ; attempt++) {
          // The ALTER's agreement is the driver's view; the new node may not have pulled the keyspace's
          // tables yet, and a rebuild then fails its streams ("getIfExists(TableId) is null").
          notes.add(node + ":schema=" + seconds(awaitSchemaAgreement(node)));
          try {
            cluster.nodetoolOrFail(timeout.toSeconds(), node, "rebuild", "--keyspace", keyspace, "dc1");
            break;
          } catch (IOException e) {
            if (attempt == REBUILD_ATTEMPTS) {
              throw e;
            }
            notes.add(node + ":rebuild-failed-" + attempt); // a rebuild may be run again (Cassandra's procedure)
          }
        }
      }
    }
    return new Change("rebuild", dc + " from dc1", since(t0), "rebuilt=" + seconds(since(t0)) + " "
        + String.join(" ", notes));
  }

  /**
   * Waits until {@link #QUARANTINE} has passed since any address left the ring, before a node starts: how long it
   * waited.
   */
  private Duration awaitQuarantine() throws InterruptedException {
    if (lastLeftAt == null) {
      return Duration.ZERO;
    }
    long wait = QUARANTINE.toNanos() - (System.nanoTime() - lastLeftAt);
    if (wait <= 0) {
      return Duration.ZERO;
    }
    TimeUnit.NANOSECONDS.sleep(wait);
    return Duration.ofNanos(wait);
  }

  /**
   * Waits until {@code nodetool describecluster} on {@code node} lists one schema version among the reachable
   * nodes (bounded by the change's timeout; returns even if it never does, the rebuild then saying why):
   * how long it waited.
   */
  private Duration awaitSchemaAgreement(String node) throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    long deadline = t0 + Math.min(timeout.toNanos(), TimeUnit.SECONDS.toNanos(120));
    while (schemaVersions(cluster.nodetool(node, "describecluster")) != 1 && System.nanoTime() < deadline) {
      Thread.sleep(2_000);
    }
    return since(t0);
  }

  /** The schema versions {@code nodetool describecluster} lists (its lines "uuid: [addresses]"). */
  static int schemaVersions(String describecluster) {
    int versions = 0;
    boolean in = false;
    for (String line : describecluster.split("\n")) {
      String l = line.strip();
      if (l.startsWith("Schema versions:")) {
        in = true;
      } else if (in && l.isEmpty()) {
        break;
      } else if (in && l.matches("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}: \\[.*")) {
        versions++;
      }
    }
    return versions;
  }

  /** Datacenter {@code dc} removed from the replication of {@code keyspaces}, then its nodes decommissioned. */
  Change removeDatacenter(String dc, List<String> keyspaces) throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    try (CqlSession session = session()) {
      for (String keyspace : keyspaces) {
        Map<String, String> replication = replication(session, keyspace);
        replication.remove(dc);
        alter(session, keyspace, replication);
      }
    }
    Duration altered = since(t0);
    List<String> steps = new ArrayList<>(List.of("altered=" + seconds(altered)));
    for (String node : cluster.nodes(dc)) {
      long t = System.nanoTime();
      cluster.decommission(node, timeout);
      lastLeftAt = System.nanoTime();
      steps.add(node + "-left=" + seconds(since(t)));
    }
    return new Change("remove-datacenter", dc + " from " + keyspaces, since(t0), String.join(" ", steps));
  }

  /**
   * The replication factors of every keyspace of {@code NetworkTopologyStrategy}, by datacenter (those that
   * replicate there): what a decommission must keep and a replacement streams from.
   */
  Map<String, Replication> replicationByDatacenter() {
    Map<String, Replication> out = new TreeMap<>();
    try (CqlSession session = session()) {
      for (Row row : session.execute("SELECT replication FROM system_schema.keyspaces")) {
        Map<String, String> replication = row.getMap("replication", String.class, String.class);
        String strategy = replication.getOrDefault("class", "");
        if (!strategy.endsWith("NetworkTopologyStrategy")) {
          continue;
        }
        replication.forEach((dc, n) -> {
          if (!dc.equals("class")) {
            int rf = Integer.parseInt(n.trim());
            out.merge(dc, new Replication(rf, rf),
                (a, b) -> new Replication(Math.min(a.min(), b.min()), Math.max(a.max(), b.max())));
          }
        });
      }
    }
    return out;
  }

  private String datacenterOf(String node) {
    for (String dc : cluster.datacenters()) {
      if (cluster.nodes(dc).contains(node)) {
        return dc;
      }
    }
    throw new IllegalArgumentException("unknown node " + node);
  }

  /** Polls {@code nodetool status} on {@code observer} until it shows {@code node} as {@code state} ('U' or 'D'). */
  private void awaitSeen(String observer, String node, char state) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GOSSIP_SECONDS);
    while (cluster.seenAs(observer, node) != state) {
      if (System.nanoTime() > deadline) {
        throw new IOException(observer + " did not see " + node + " as " + state + " within " + GOSSIP_SECONDS + " s");
      }
      Thread.sleep(1_000); // polling gossip's view: there is no event to wait on
    }
  }

  /** A session to dc1's nodes, as an operator's cqlsh would be. */
  private CqlSession session() {
    List<InetSocketAddress> contacts = new ArrayList<>();
    for (String node : cluster.nodes("dc1")) {
      contacts.add(new InetSocketAddress(cluster.address(node), 9042));
    }
    return CqlSession.builder().addContactPoints(contacts).withLocalDatacenter("dc1")
        .withConfigLoader(DriverConfigLoader.programmaticBuilder()
            .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(30))
            .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(30))
            .build())
        .build();
  }

  /** The keyspace's replication as system_schema has it, without the class (NetworkTopologyStrategy). */
  private static Map<String, String> replication(CqlSession session, String keyspace) {
    Row row = session.execute(SimpleStatement.newInstance(
        "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?", keyspace)).one();
    if (row == null) {
      throw new IllegalStateException("keyspace " + keyspace + " does not exist");
    }
    Map<String, String> out = new TreeMap<>(row.getMap("replication", String.class, String.class));
    String strategy = out.remove("class");
    if (strategy == null || !strategy.endsWith("NetworkTopologyStrategy")) {
      throw new IllegalStateException("keyspace " + keyspace + " uses " + strategy + ", not NetworkTopologyStrategy");
    }
    return out;
  }

  /** ALTER KEYSPACE to {@code replication}; whether the nodes agreed on the schema when it returned. */
  private static boolean alter(CqlSession session, String keyspace, Map<String, String> replication) {
    StringBuilder cql = new StringBuilder("ALTER KEYSPACE " + keyspace
        + " WITH replication = {'class': 'NetworkTopologyStrategy'");
    replication.forEach((dc, n) -> cql.append(", '").append(dc).append("': ").append(n));
    ResultSet rs = session.execute(SimpleStatement.newInstance(cql.append('}').toString())
        .setTimeout(Duration.ofSeconds(60)));
    return rs.getExecutionInfo().isSchemaInAgreement();
  }

  private static Duration since(long t0) {
    return Duration.ofNanos(System.nanoTime() - t0);
  }

  private static String seconds(Duration d) {
    return String.format(Locale.ROOT, "%.1fs", d.toMillis() / 1e3);
  }
}
