package dev.idgen.chaos;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The project's local Cassandra, through the launcher {@code idgen-testing/cassandra/cassandra.sh} of the
 * checkout: started and stopped by the harness (or used as it runs), in one of the launcher's topologies:
 * <ul>
 *   <li>{@code two-dc}: one node per datacenter, dc1 at 127.0.0.1 and dc2 at 127.0.0.2;
 *   <li>{@code netns-3x3} (and {@code netns-3x1}): three nodes per datacenter (dc1a–dc1c at 10.77.0.11–13,
 *       dc2a–dc2c at 10.77.0.21–23), each in a network namespace of its own ({@link #network()}); needs root.
 * </ul>
 * Nodes are paused with SIGSTOP and resumed with SIGCONT, killed with {@code kill -9} and started again on
 * their data. Every paused node is remembered until resumed, so that {@link #resumeAll()} (called in a
 * {@code finally} and in a shutdown hook) never leaves one frozen.
 */
final class CassandraCluster implements ChaosCassandra {
  static final String SCRIPT = "idgen-testing/cassandra/cassandra.sh";
  static final String NETNS_SCRIPT = "idgen-testing/cassandra/netns.sh";
  static final List<String> TOPOLOGIES = List.of("two-dc", "netns-3x3", "netns-3x1");
  /** How long a node restarted on its data may take to serve CQL again ({@link #startNode}). */
  private static final long START_NODE_TIMEOUT_SECONDS = 600;
  /** The nodes of each topology by datacenter, as cassandra.sh names them (known before the start). */
  private static final Map<String, Map<String, List<String>>> LAYOUT = Map.of(
      "two-dc", Map.of("dc1", List.of("dc1"), "dc2", List.of("dc2")),
      "netns-3x3", Map.of("dc1", List.of("dc1a", "dc1b", "dc1c"), "dc2", List.of("dc2a", "dc2b", "dc2c")),
      "netns-3x1", Map.of("dc1", List.of("dc1a", "dc1b", "dc1c"), "dc2", List.of("dc2a")));

  /**
   * The launcher's spare nodes of each datacenter, in the order they are taken: what {@link #join} adds to a
   * running netns cluster (dc1d at 10.77.0.14, dc1e .15, dc2d .24, dc2e .25, dc3a–dc3c .31–.33).
   */
  static final Map<String, List<String>> SPARES = Map.of(
      "dc1", List.of("dc1d", "dc1e"), "dc2", List.of("dc2d", "dc2e"), "dc3", List.of("dc3a", "dc3b", "dc3c"));

  private final Path script;
  private final Path netnsScript;
  private final String topology;
  /** The launcher's run directory, or null for its default. */
  private final Path baseDir;
  /** Node name → address, by datacenter, as the launcher's {@code status} lists them. */
  private final Map<String, Map<String, String>> nodes = new LinkedHashMap<>();
  private final Map<String, Long> paused = new ConcurrentHashMap<>();
  /**
   * The environment each node was last started with by {@link #restart(String, Map)} (a {@link FakeClock}'s):
   * {@link #restart(String)} starts it with the same, so that a node killed by a fault comes back under its
   * fake clock. Empty for the others.
   */
  private final Map<String, Map<String, String>> launchEnv = new ConcurrentHashMap<>();
  private final ChaosNetwork network;

  /**
   * The launcher's cluster of topology {@code topology} in run directory {@code baseDir} (null: the launcher's
   * default; give netns topologies their own, so that the two-datacenter cluster of the tests keeps its).
   */
  CassandraCluster(Path repoRoot, String topology, Path baseDir) {
    if (!TOPOLOGIES.contains(topology)) {
      throw new IllegalArgumentException("topology " + topology + " (expected one of " + TOPOLOGIES + ")");
    }
    this.script = repoRoot.resolve(SCRIPT);
    this.netnsScript = repoRoot.resolve(NETNS_SCRIPT);
    this.topology = topology;
    this.baseDir = baseDir;
    this.network = topology.startsWith("netns-") ? new ChaosNetwork(netnsScript) : null;
  }

  /** The two-datacenter cluster in the launcher's default run directory (what runs before topologies). */
  CassandraCluster(Path repoRoot) {
    this(repoRoot, "two-dc", null);
  }

  String topology() {
    return topology;
  }

  /**
   * Why this cluster cannot be started here (a netns topology without root: netns.sh check's reason), or empty.
   */
  Optional<String> unavailable() {
    return network == null ? Optional.empty() : ChaosNetwork.unavailable(netnsScript);
  }

  void start() throws IOException, InterruptedException {
    Scripts.inherit(command("start", "--topology", topology), 900);
    attach();
  }

  /** Learns the nodes of the running cluster (cassandra.sh status); fails if it is not {@link #topology()}. */
  void attach() throws IOException, InterruptedException {
    String status = Scripts.run(command("status"), 60).out();
    Map<String, Map<String, String>> found = new LinkedHashMap<>();
    String running = "?";
    boolean stopped = false;
    for (String line : status.split("\n")) {
      String[] t = line.trim().split("\\s+");
      if (line.startsWith("topology:") && t.length > 1) {
        running = t[1];
      } else if (t.length >= 5 && t[0].startsWith("dc") && t[3].startsWith("dc")) {
        found.computeIfAbsent(t[3], dc -> new LinkedHashMap<>()).put(t[0], t[2]);
        // A run directory left by an earlier cluster lists its nodes as stopped: not the cluster that runs
        // (which may answer on the same addresses from another run directory, until a fault needs a pid).
        stopped |= t[4].equals("stopped");
      }
    }
    if (!running.equals(topology) || !found.keySet().containsAll(DATACENTERS) || stopped) {
      throw new IOException("cassandra.sh status: expected a running " + topology + " cluster"
          + (baseDir == null ? "" : " in " + baseDir) + ", found:\n" + status);
    }
    synchronized (nodes) {
      nodes.clear();
      nodes.putAll(found);
    }
  }

  void stop() throws IOException, InterruptedException {
    Scripts.inherit(command("stop"), 300);
  }

  @Override
  public String contactPoint(String dc) {
    return String.join(",", byDc(dc).values().stream().map(a -> a + ":9042").toList());
  }

  /** The nodes of {@code dc}: as the launcher lists them once started or attached, as the topology has them before. */
  @Override
  public List<String> nodes(String dc) {
    synchronized (nodes) {
      if (nodes.isEmpty()) {
        List<String> planned = LAYOUT.get(topology).get(dc);
        if (planned == null) {
          throw new IllegalArgumentException("unknown datacenter " + dc);
        }
        return planned;
      }
    }
    return List.copyOf(byDc(dc).keySet());
  }

  /**
   * The topology's: every node of its layout, at most 3, whatever joined or left since (a run on a cluster that
   * membership changes grew keeps the replication its faults and its decommissions were written against).
   */
  @Override
  public int replication(String dc) {
    return Math.min(3, topologyNodes(dc).size());
  }

  @Override
  public String address(String node) {
    synchronized (nodes) {
      for (Map<String, String> dc : nodes.values()) {
        if (dc.containsKey(node)) {
          return dc.get(node);
        }
      }
    }
    throw new IllegalArgumentException("unknown node " + node);
  }

  private Map<String, String> byDc(String dc) {
    synchronized (nodes) {
      Map<String, String> m = nodes.get(dc);
      if (m == null) {
        throw new IllegalStateException("no node of datacenter " + dc + " known: is the cluster started?");
      }
      return new LinkedHashMap<>(m);
    }
  }

  long pid(String node) throws IOException, InterruptedException {
    return Long.parseLong(Scripts.check(command("pid", node), 30).trim());
  }

  @Override
  public String describe(String dc) throws IOException, InterruptedException {
    List<String> pids = new ArrayList<>();
    for (String node : nodes(dc)) {
      pids.add(node + ":" + pid(node));
    }
    return "pid=" + String.join(",", pids);
  }

  /** SIGSTOP of every node of {@code dc}: it freezes (sockets open, no answers), as in a hung VM. */
  @Override
  public void pause(String dc) throws IOException, InterruptedException {
    for (String node : nodes(dc)) {
      pauseNode(node);
    }
  }

  @Override
  public void resume(String dc) throws IOException, InterruptedException {
    for (String node : nodes(dc)) {
      resumeNode(node);
    }
  }

  @Override
  public void pauseNode(String node) throws IOException, InterruptedException {
    long pid = pid(node);
    paused.put(node, pid);
    signal("-STOP", pid);
  }

  @Override
  public void resumeNode(String node) throws IOException, InterruptedException {
    Long pid = paused.get(node);
    if (pid != null) {
      signal("-CONT", pid);
      paused.remove(node);
    }
  }

  /** SIGCONT to every node this harness paused; safe to call any number of times. */
  @Override
  public void resumeAll() {
    for (String node : List.copyOf(paused.keySet())) {
      try {
        resumeNode(node);
      } catch (IOException | InterruptedException e) {
        System.err.println("chaos: could not SIGCONT cassandra " + node + ": " + e);
      }
    }
  }

  /**
   * Only the netns topologies: the loopback ones start their nodes with {@code -Dcassandra.unsafesystem=true},
   * with which a node killed with {@code kill -9} comes back without the tables created since its start.
   */
  @Override
  public boolean canKill() {
    return network != null;
  }

  @Override
  public String whyNoKill() {
    return "topology " + topology + " starts its nodes with -Dcassandra.unsafesystem=true (a fast start): a node"
        + " killed with kill -9 would come back without the tables created since, a loss no real node has"
        + " (--topology netns-3x3 runs them without it)";
  }

  @Override
  public void kill(String node) throws IOException, InterruptedException {
    paused.remove(node);
    Scripts.inherit(command("kill", node), 60);
  }

  /** Starts {@code node} again on its data, with the environment it was last started with here (if any). */
  @Override
  public void restart(String node) throws IOException, InterruptedException {
    startNode(node, launchEnv.getOrDefault(node, Map.of()));
  }

  /**
   * {@link #restart}, with {@code env} added to the launcher's environment, and kept for the node's later
   * restarts (empty: none from now on): {@code IDGEN_CASSANDRA_FAKETIME_DIR} starts the node under a
   * {@link FakeClock} (cassandra.sh, launch_node).
   */
  void restart(String node, Map<String, String> env) throws IOException, InterruptedException {
    if (env.isEmpty()) {
      launchEnv.remove(node);
    } else {
      launchEnv.put(node, Map.copyOf(env));
    }
    startNode(node, env);
  }

  /**
   * {@code cassandra.sh start-node}: a restart takes 15 s on an idle machine, but under a run's full load on 2
   * cores one was still opening its tables after 4 minutes (CI, a cassandra-kill) and others served again after
   * 194 s and 332 s; they progress, so the bound is long rather than a retry that would start over.
   */
  private void startNode(String node, Map<String, String> env) throws IOException, InterruptedException {
    Scripts.inherit(command("start-node", node, "--timeout", Long.toString(START_NODE_TIMEOUT_SECONDS)), env,
        START_NODE_TIMEOUT_SECONDS + 60);
  }

  /** The topology's own nodes of {@code dc} (before any membership change): its size is the datacenter's. */
  List<String> topologyNodes(String dc) {
    return LAYOUT.get(topology).getOrDefault(dc, List.of());
  }

  @Override
  public Optional<ChaosNetwork> network() {
    return Optional.ofNullable(network);
  }

  @Override
  public String whyNoNetwork() {
    return "topology " + topology + " runs the nodes on loopback, not in network namespaces (--topology netns-3x3)";
  }

  /** {@code nodetool ARGS} against node {@code node} (inside its namespace on a netns cluster): its output. */
  String nodetool(String node, String... args) throws IOException, InterruptedException {
    return Scripts.run(nodetoolCommand(node, args), 120).out();
  }

  /**
   * {@code nodetool ARGS} against {@code node}, for the long ones (repair, cleanup, rebuild): its output, or an
   * exception with it if nodetool failed or did not finish within {@code timeoutSeconds}.
   */
  String nodetoolOrFail(long timeoutSeconds, String node, String... args) throws IOException, InterruptedException {
    Scripts.Result r = Scripts.run(nodetoolCommand(node, args), timeoutSeconds);
    if (!r.ok()) {
      throw new IOException("nodetool " + String.join(" ", args) + " on " + node + " failed with exit status "
          + r.exit() + ": " + r.out().strip());
    }
    return r.out();
  }

  private List<String> nodetoolCommand(String node, String... args) {
    List<String> cmd = new ArrayList<>(List.of("bash", script.toString(), "nodetool", node));
    if (baseDir != null) {
      cmd.addAll(List.of("--base-dir", baseDir.toString()));
    }
    cmd.addAll(List.of(args));
    return cmd;
  }

  // --- membership changes (netns topologies only: the launcher's join and decommission) --------------

  /** Every member node, whatever its datacenter (as last attached). */
  List<String> members() {
    synchronized (nodes) {
      List<String> all = new ArrayList<>();
      nodes.values().forEach(dc -> all.addAll(dc.keySet()));
      return all;
    }
  }

  /** The datacenters with members (dc1, dc2, and dc3 once a node of it joined). */
  List<String> datacenters() {
    synchronized (nodes) {
      return List.copyOf(nodes.keySet());
    }
  }

  /** The first spare node of {@code dc} that is not a member, or empty if every spare of it is. */
  Optional<String> spare(String dc) {
    List<String> members = members();
    return SPARES.getOrDefault(dc, List.of()).stream().filter(n -> !members.contains(n)).findFirst();
  }

  /**
   * Starts spare {@code node} and waits until it has joined (serves CQL, and a peer sees it UN), at most
   * {@code timeout}: {@code bootstrap} it streams its share of its datacenter's data (a node added to dc1 or
   * dc2), else it joins without (the first node of a new datacenter, before its keyspaces replicate there).
   */
  void join(String node, boolean bootstrap, Duration timeout) throws IOException, InterruptedException {
    List<String> args = new ArrayList<>(List.of("join", node, "--timeout", Long.toString(timeout.toSeconds())));
    if (!bootstrap) {
      args.add("--no-bootstrap");
    }
    Scripts.inherit(command(args.toArray(String[]::new)), timeout.toSeconds() + 60);
    attach();
  }

  /**
   * A fresh node {@code node} in place of dead member {@code dead} ({@code -Dcassandra.replace_address_first_boot}:
   * it takes {@code dead}'s tokens and streams its data from the other replicas); {@code node} equal to
   * {@code dead} replaces it at its own address. Waits until it has joined, at most {@code timeout}.
   */
  void replace(String dead, String node, Duration timeout) throws IOException, InterruptedException {
    Scripts.inherit(command("join", node, "--replace", dead, "--timeout", Long.toString(timeout.toSeconds())),
        timeout.toSeconds() + 60);
    attach();
  }

  /** {@code nodetool decommission} of {@code node}, then stops it and removes its namespace; at most {@code timeout}. */
  void decommission(String node, Duration timeout) throws IOException, InterruptedException {
    Scripts.inherit(command("decommission", node, "--timeout", Long.toString(timeout.toSeconds())),
        timeout.toSeconds() + 60);
    attach();
  }

  /** What {@code nodetool status} on {@code observer} says of {@code node}'s address: 'U', 'D', or '?' if not listed. */
  char seenAs(String observer, String node) throws IOException, InterruptedException {
    String address = address(node);
    for (String line : nodetool(observer, "status").split("\n")) {
      String[] t = line.trim().split("\\s+");
      if (t.length > 1 && t[1].equals(address) && t[0].length() == 2) {
        return t[0].charAt(0);
      }
    }
    return '?';
  }

  /** Node {@code node}'s system.log, or null when the cluster runs in the launcher's default directory. */
  Path systemLog(String node) {
    return baseDir == null ? null : baseDir.resolve(node).resolve("logs").resolve("system.log");
  }

  private static void signal(String signal, long pid) throws IOException, InterruptedException {
    Scripts.check(List.of("kill", signal, Long.toString(pid)), 10);
  }

  private List<String> command(String... args) {
    List<String> cmd = new ArrayList<>(List.of("bash", script.toString()));
    cmd.addAll(List.of(args));
    if (baseDir != null) {
      cmd.addAll(List.of("--base-dir", baseDir.toString()));
    }
    return cmd;
  }
}
