package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idgen.testing.TcpListener;
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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Each fault the harness makes on the netns cluster, applied with the harness's own code ({@link ChaosNetwork},
 * {@link CassandraCluster}) and healed, observed from both sides: a node of one side cannot open a connection
 * to the storage or CQL port of the other during the fault and can after it; for the partition and the
 * Cassandra kill also what gossip says ({@code nodetool status}: the peers down, then up again).
 *
 * <p>Needs the netns cluster ({@link ChaosClusterExtension}: root); without it every test is skipped, saying
 * why (ChaosIT then runs without these kinds and says so too). Tagged {@code full}: it runs with
 * {@code -Didgen.tests=full} (CI), not in the README's test command, whose ChaosIT injects the same faults.
 */
@ExtendWith(ChaosClusterExtension.class)
@Tag("full")
class NetworkFaultsIT {
  private static final int STORAGE = 7000;
  private static final int CQL = 9042;
  /** Gossip takes 10-25 s to convict a silent peer here; a node restarts in 10-80 s on a busy machine. */
  private static final long GOSSIP_SECONDS = 120;

  private CassandraCluster cluster;
  private ChaosNetwork net;
  private final List<Process> listeners = new ArrayList<>();
  /** The datacenter of three nodes (dc1 on netns-3x1), its nodes, and the other datacenter and its first node. */
  private String big;
  private String a1;
  private String a2;
  private String a3;
  private String other;
  private String b1;

  @BeforeEach
  void netnsCluster(ChaosCassandra cassandra) {
    assumeTrue(cassandra.network().isPresent(), () -> "no network namespaces: " + cassandra.whyNoNetwork());
    cluster = (CassandraCluster) cassandra;
    net = cassandra.network().orElseThrow();
    big = cluster.nodes("dc1").size() >= 3 ? "dc1" : "dc2";
    other = big.equals("dc1") ? "dc2" : "dc1";
    a1 = cluster.nodes(big).get(0);
    a2 = cluster.nodes(big).get(1);
    a3 = cluster.nodes(big).get(2);
    b1 = cluster.nodes(other).get(0);
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

    assertThat(reach(a1, b1, STORAGE)).as("%s -> %s during the partition", a1, b1).isFalse();
    assertThat(reach(b1, a2, STORAGE)).as("%s -> %s during the partition", b1, a2).isFalse();
    assertThat(reach(a1, a2, STORAGE)).as("%s -> %s: same side", a1, a2).isTrue();
    awaitStatus(a1, a1 + " sees " + other + "'s nodes down, its own up",
        s -> states(s, other, 'D') && states(s, big, 'U'));
    awaitStatus(b1, b1 + " sees " + big + "'s nodes down, its own up",
        s -> states(s, big, 'D') && states(s, other, 'U'));

    cut.heal();

    assertThat(reach(a1, b1, STORAGE)).as("%s -> %s after the heal", a1, b1).isTrue();
    assertThat(reach(b1, a2, STORAGE)).as("%s -> %s after the heal", b1, a2).isTrue();
    awaitStatus(a1, a1 + " sees every node up again", s -> states(s, big, 'U') && states(s, other, 'U'));
    awaitStatus(b1, b1 + " sees every node up again", s -> states(s, big, 'U') && states(s, other, 'U'));
  }

  @Test
  void should_drop_only_what_one_datacenter_sends_to_the_other() throws Exception {
    ChaosNetwork.Cut cut = net.oneWay(cluster, big, other, "it-oneway");

    String targets = String.join(", ", ChaosNetwork.addresses(cluster, cluster.nodes(other)));
    String daddr = cluster.nodes(other).size() == 1 ? "ip daddr " + targets : "ip daddr { " + targets + " }";
    for (String node : cluster.nodes(big)) {
      assertThat(rules(node)).as("rules of %s", node).contains(daddr + " drop").doesNotContain("ip saddr");
    }
    for (String node : cluster.nodes(other)) {
      assertThat(rules(node)).as("rules of %s", node).doesNotContain("drop");
    }
    assertThat(reach(a1, b1, STORAGE)).as("%s -> %s: dropped as it leaves %s", a1, b1, a1).isFalse();
    // b1's SYN reaches a1, whose answer is dropped: TCP needs both ways.
    assertThat(reach(b1, a1, STORAGE)).as("%s -> %s: the answers are dropped", b1, a1).isFalse();
    assertThat(reach(a2, a3, STORAGE)).as("%s -> %s: within %s", a2, a3, big).isTrue();

    cut.heal();

    assertThat(reach(a1, b1, STORAGE)).as("%s -> %s after the heal", a1, b1).isTrue();
    assertThat(reach(b1, a1, STORAGE)).as("%s -> %s after the heal", b1, a1).isTrue();
  }

  @Test
  void should_cut_a_server_off_from_its_datacenter_while_clients_still_reach_it() throws Exception {
    String host = ChaosNetwork.serverHost(19);
    String address = ChaosNetwork.serverAddress(19);
    net.addHost(host, address);
    listenIn(host, address, 7070);
    ChaosNetwork.Cut cut = net.isolateFrom(host, ChaosNetwork.addresses(cluster, cluster.nodes(big)), "it-server");

    assertThat(net.reach(host, cluster.address(a1), CQL)).as("server -> %s's CQL port", a1).isFalse();
    assertThat(net.reach(host, cluster.address(a3), CQL)).as("server -> %s's CQL port", a3).isFalse();
    assertThat(net.reach(a2, address, 7070)).as("%s -> the server", a2).isFalse();
    assertThat(net.reach("root", address, 7070)).as("a client (root namespace) -> the server").isTrue();
    assertThat(net.reach(host, cluster.address(b1), CQL)).as("server -> %s: another datacenter", b1).isTrue();

    cut.heal();

    assertThat(net.reach(host, cluster.address(a1), CQL)).as("server -> %s after the heal", a1).isTrue();
    assertThat(net.reach(a2, address, 7070)).as("%s -> the server after the heal", a2).isTrue();
  }

  @Test
  void should_isolate_one_replica_then_two_from_everything_until_healed() throws Exception {
    ChaosNetwork.Cut one = net.isolate(List.of(a2), "it-replica-one");

    assertThat(reach(a1, a2, STORAGE)).as("%s -> %s, isolated", a1, a2).isFalse();
    assertThat(reach(a2, a1, STORAGE)).as("%s, isolated -> %s", a2, a1).isFalse();
    assertThat(net.reach("root", cluster.address(a2), CQL)).as("a server -> %s's CQL port", a2).isFalse();
    assertThat(reach(a1, a3, STORAGE)).as("%s -> %s: the quorum of %s", a1, a3, big).isTrue();
    one.heal();
    assertThat(reach(a1, a2, STORAGE)).as("%s -> %s after the heal", a1, a2).isTrue();

    ChaosNetwork.Cut two = net.isolate(List.of(a2, a3), "it-replica-two");

    assertThat(reach(a1, a2, STORAGE)).as("%s -> %s, isolated", a1, a2).isFalse();
    assertThat(reach(a3, a1, STORAGE)).as("%s, isolated -> %s", a3, a1).isFalse();
    assertThat(reach(a2, a3, STORAGE)).as("%s -> %s, both isolated", a2, a3).isFalse();
    assertThat(reach(a1, b1, STORAGE)).as("%s, alone in %s -> %s", a1, big, b1).isTrue();
    two.heal();
    assertThat(reach(a1, a2, STORAGE)).as("%s -> %s after the heal", a1, a2).isTrue();
    assertThat(reach(a3, a2, STORAGE)).as("%s -> %s after the heal", a3, a2).isTrue();
  }

  @Test
  void should_kill_a_node_and_start_it_again_on_its_data_replaying_its_commit_log() throws Exception {
    Path log = cluster.systemLog(a2);
    long before = Files.size(log);
    cluster.kill(a2);
    try {
      assertThat(reach(a1, a2, STORAGE)).as("%s -> %s, killed", a1, a2).isFalse();
      assertThat(net.reach("root", cluster.address(a2), CQL)).as("a server -> %s, killed", a2).isFalse();
      awaitStatus(a1, a1 + " sees " + a2 + " down", s -> state(s, cluster.address(a2)) == 'D');
    } finally {
      cluster.restart(a2);
    }

    assertThat(net.reach("root", cluster.address(a2), CQL)).as("a server -> %s, restarted", a2).isTrue();
    assertThat(reach(a1, a2, STORAGE)).as("%s -> %s, restarted", a1, a2).isTrue();
    String restart = Files.readString(log, StandardCharsets.UTF_8).substring((int) before);
    assertThat(restart).as("%s's log since the kill", a2).containsPattern("Log replay complete, \\d+ replayed mutations");
    awaitStatus(a1, a1 + " sees " + a2 + " up again", s -> state(s, cluster.address(a2)) == 'U');
    awaitStatus(a2, a2 + " sees every node up", s -> states(s, big, 'U') && states(s, other, 'U'));
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
        "-cp", System.getProperty("java.class.path"), TcpListener.class.getName(), address, Integer.toString(port)));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    listeners.add(p);
    String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
    assertThat(line).as("the listener in %s", host).isEqualTo("listening");
  }
}
