package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Each fault the harness makes on the netns cluster, applied with the harness's own code ({@link ChaosNetwork},
 * {@link CassandraCluster}) and healed, observed from both sides: a node of one side cannot open a connection
 * to the storage or CQL port of the other during the fault and can after it; for the partition and the
 * Cassandra kill also what gossip says ({@code nodetool status}: the peers down, then up again).
 *
 * <p>Needs the netns cluster ({@link ChaosClusterExtension}: root); without it every test is skipped, saying
 * why (ChaosIT then runs without these kinds and says so too).
 */
@ExtendWith(ChaosClusterExtension.class)
class NetworkFaultsIT {
  private static final int STORAGE = 7000;
  private static final int CQL = 9042;
  /** Gossip takes 10-25 s to convict a silent peer here; a node restarts in 10-80 s on a busy machine. */
  private static final long GOSSIP_SECONDS = 120;

  private CassandraCluster cluster;
  private ChaosNetwork net;
  private final List<Process> listeners = new ArrayList<>();

  @BeforeEach
  void netnsCluster(ChaosCassandra cassandra) {
    assumeTrue(cassandra.network().isPresent(), () -> "no network namespaces: " + cassandra.whyNoNetwork());
    cluster = (CassandraCluster) cassandra;
    net = cassandra.network().orElseThrow();
  }

  @AfterEach
  void healEverything() throws Exception {
    if (net == null) {
      return;
    }
    listeners.forEach(Process::destroyForcibly);
    net.healAll();
    cluster.resumeAll();
    net.removeHosts();
  }

  @Test
  void should_cut_dc1_from_dc2_both_ways_until_healed_as_both_sides_and_gossip_see_it() throws Exception {
    ChaosNetwork.Cut cut = net.partition(cluster, "it-partition");

    assertThat(reach("dc1a", "dc2a", STORAGE)).as("dc1a -> dc2a during the partition").isFalse();
    assertThat(reach("dc2b", "dc1c", STORAGE)).as("dc2b -> dc1c during the partition").isFalse();
    assertThat(reach("dc1a", "dc1b", STORAGE)).as("dc1a -> dc1b: same side").isTrue();
    assertThat(reach("dc2a", "dc2c", STORAGE)).as("dc2a -> dc2c: same side").isTrue();
    awaitStatus("dc1a", "dc1a sees dc2's nodes down, its own up", s -> states(s, "dc2", 'D') && states(s, "dc1", 'U'));
    awaitStatus("dc2a", "dc2a sees dc1's nodes down, its own up", s -> states(s, "dc1", 'D') && states(s, "dc2", 'U'));

    cut.heal();

    assertThat(reach("dc1a", "dc2a", STORAGE)).as("dc1a -> dc2a after the heal").isTrue();
    assertThat(reach("dc2b", "dc1c", STORAGE)).as("dc2b -> dc1c after the heal").isTrue();
    awaitStatus("dc1a", "dc1a sees every node up again", s -> states(s, "dc1", 'U') && states(s, "dc2", 'U'));
    awaitStatus("dc2a", "dc2a sees every node up again", s -> states(s, "dc1", 'U') && states(s, "dc2", 'U'));
  }

  @Test
  void should_drop_only_what_one_datacenter_sends_to_the_other() throws Exception {
    ChaosNetwork.Cut cut = net.oneWay(cluster, "dc1", "dc2", "it-oneway");

    for (String node : cluster.nodes("dc1")) {
      assertThat(rules(node)).as("rules of %s", node).contains("ip daddr { 10.77.0.21, 10.77.0.22, 10.77.0.23 } drop")
          .doesNotContain("ip saddr");
    }
    for (String node : cluster.nodes("dc2")) {
      assertThat(rules(node)).as("rules of %s", node).doesNotContain("drop");
    }
    assertThat(reach("dc1a", "dc2a", STORAGE)).as("dc1a -> dc2a: dropped as it leaves dc1a").isFalse();
    // dc2a's SYN reaches dc1a, whose answer is dropped: TCP needs both ways.
    assertThat(reach("dc2a", "dc1a", STORAGE)).as("dc2a -> dc1a: the answers are dropped").isFalse();
    assertThat(reach("dc2a", "dc2b", STORAGE)).as("dc2a -> dc2b: within dc2").isTrue();
    assertThat(reach("dc1b", "dc1c", STORAGE)).as("dc1b -> dc1c: within dc1").isTrue();

    cut.heal();

    assertThat(reach("dc1a", "dc2a", STORAGE)).as("dc1a -> dc2a after the heal").isTrue();
    assertThat(reach("dc2a", "dc1a", STORAGE)).as("dc2a -> dc1a after the heal").isTrue();
  }

  @Test
  void should_cut_a_server_off_from_its_datacenter_while_clients_still_reach_it() throws Exception {
    String host = ChaosNetwork.serverHost(19);
    String address = ChaosNetwork.serverAddress(19);
    net.addHost(host, address);
    listenIn(host, address, 7070);
    ChaosNetwork.Cut cut = net.isolateFrom(host, ChaosNetwork.addresses(cluster, cluster.nodes("dc1")), "it-server");

    assertThat(net.reach(host, cluster.address("dc1a"), CQL)).as("server -> dc1a's CQL port").isFalse();
    assertThat(net.reach(host, cluster.address("dc1c"), CQL)).as("server -> dc1c's CQL port").isFalse();
    assertThat(net.reach("dc1b", address, 7070)).as("dc1b -> the server").isFalse();
    assertThat(net.reach("root", address, 7070)).as("a client (root namespace) -> the server").isTrue();
    assertThat(net.reach(host, cluster.address("dc2a"), CQL)).as("server -> dc2a: another datacenter").isTrue();

    cut.heal();

    assertThat(net.reach(host, cluster.address("dc1a"), CQL)).as("server -> dc1a after the heal").isTrue();
    assertThat(net.reach("dc1b", address, 7070)).as("dc1b -> the server after the heal").isTrue();
  }

  @Test
  void should_isolate_one_replica_then_two_from_everything_until_healed() throws Exception {
    ChaosNetwork.Cut one = net.isolate(List.of("dc1b"), "it-replica-one");

    assertThat(reach("dc1a", "dc1b", STORAGE)).as("dc1a -> dc1b, isolated").isFalse();
    assertThat(reach("dc1b", "dc1a", STORAGE)).as("dc1b, isolated -> dc1a").isFalse();
    assertThat(net.reach("root", cluster.address("dc1b"), CQL)).as("a server -> dc1b's CQL port").isFalse();
    assertThat(reach("dc1a", "dc1c", STORAGE)).as("dc1a -> dc1c: the quorum of dc1").isTrue();
    one.heal();
    assertThat(reach("dc1a", "dc1b", STORAGE)).as("dc1a -> dc1b after the heal").isTrue();

    ChaosNetwork.Cut two = net.isolate(List.of("dc2b", "dc2c"), "it-replica-two");

    assertThat(reach("dc2a", "dc2b", STORAGE)).as("dc2a -> dc2b, isolated").isFalse();
    assertThat(reach("dc2c", "dc2a", STORAGE)).as("dc2c, isolated -> dc2a").isFalse();
    assertThat(reach("dc2b", "dc2c", STORAGE)).as("dc2b -> dc2c, both isolated").isFalse();
    assertThat(reach("dc2a", "dc1a", STORAGE)).as("dc2a, alone in dc2 -> dc1a").isTrue();
    two.heal();
    assertThat(reach("dc2a", "dc2b", STORAGE)).as("dc2a -> dc2b after the heal").isTrue();
    assertThat(reach("dc2c", "dc2b", STORAGE)).as("dc2c -> dc2b after the heal").isTrue();
  }

  @Test
  void should_kill_a_node_and_start_it_again_on_its_data_replaying_its_commit_log() throws Exception {
    Path log = cluster.systemLog("dc2b");
    long before = Files.size(log);
    cluster.kill("dc2b");
    try {
      assertThat(reach("dc2a", "dc2b", STORAGE)).as("dc2a -> dc2b, killed").isFalse();
      assertThat(net.reach("root", cluster.address("dc2b"), CQL)).as("a server -> dc2b, killed").isFalse();
      awaitStatus("dc2a", "dc2a sees dc2b down", s -> state(s, cluster.address("dc2b")) == 'D');
    } finally {
      cluster.restart("dc2b");
    }

    assertThat(net.reach("root", cluster.address("dc2b"), CQL)).as("a server -> dc2b, restarted").isTrue();
    assertThat(reach("dc2a", "dc2b", STORAGE)).as("dc2a -> dc2b, restarted").isTrue();
    String restart = Files.readString(log, StandardCharsets.UTF_8).substring((int) before);
    assertThat(restart).as("dc2b's log since the kill").containsPattern("Log replay complete, \\d+ replayed mutations");
    awaitStatus("dc2a", "dc2a sees dc2b up again", s -> state(s, cluster.address("dc2b")) == 'U');
    awaitStatus("dc2b", "dc2b sees every node up", s -> states(s, "dc1", 'U') && states(s, "dc2", 'U'));
  }

  private boolean reach(String from, String to, int port) throws IOException, InterruptedException {
    return net.reach(from, cluster.address(to), port);
  }

  private String rules(String node) throws IOException, InterruptedException {
    return Scripts.check(List.of("ip", "netns", "exec", "idgen-" + node, "nft", "list", "table", "inet", "idgen"), 30);
  }

  /** Polls {@code nodetool status} on {@code node} until {@code condition} holds (at most {@value #GOSSIP_SECONDS} s). */
  private void awaitStatus(String node, String what, Predicate<String> condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GOSSIP_SECONDS);
    long t0 = System.nanoTime();
    String last = "";
    while (System.nanoTime() < deadline) {
      last = cluster.nodetool(node, "status");
      if (condition.test(last)) {
        System.out.printf("[network-faults-it] %s after %.1f s%n", what, (System.nanoTime() - t0) / 1e9);
        return;
      }
      Thread.sleep(1_000);
    }
    throw new AssertionError(what + ": not within " + GOSSIP_SECONDS + " s; last nodetool status:\n" + last);
  }

  /** Whether every node of {@code dc} shows state {@code upOrDown} ('U' or 'D') in a nodetool status output. */
  private boolean states(String status, String dc, char upOrDown) {
    return cluster.nodes(dc).stream().allMatch(n -> state(status, cluster.address(n)) == upOrDown);
  }

  /** The first letter of {@code address}'s line in a nodetool status output ('U', 'D'), or '?' if absent. */
  private static char state(String status, String address) {
    for (String line : status.split("\n")) {
      String[] t = line.trim().split("\\s+");
      if (t.length > 1 && t[1].equals(address) && t[0].length() == 2) {
        return t[0].charAt(0);
      }
    }
    return '?';
  }

  /** A TCP listener inside namespace {@code host} (a stand-in for a server), once it listens. */
  private void listenIn(String host, String address, int port) throws IOException {
    List<String> cmd = new ArrayList<>(ChaosNetwork.exec(host));
    cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx32m",
        "-cp", System.getProperty("java.class.path"), Listener.class.getName(), address, Integer.toString(port)));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    listeners.add(p);
    String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
    assertThat(line).as("the listener in %s", host).isEqualTo("listening");
  }
}
