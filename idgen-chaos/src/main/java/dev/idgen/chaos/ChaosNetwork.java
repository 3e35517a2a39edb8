package dev.idgen.chaos;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The network of a netns cluster ({@code cassandra.sh start --topology netns-3x3}), through the launcher's
 * {@code netns.sh}: every Cassandra node, and every idgen server of a run, in a network namespace of its own
 * ({@code idgen-NAME}) with one address on a bridge (10.77.0.0/24) that the root namespace, where the
 * harness and its clients run, also reaches. A fault is a set of nftables rules inside some namespaces that
 * drop packets by address, all tagged with the fault's name; it is healed by deleting them.
 *
 * <p>Every namespace that got a rule is remembered until its rules are deleted, so that {@link #healAll()}
 * (in a {@code finally} and in the run's shutdown hook) never leaves a cut behind. Thread-safe: the fault
 * thread applies and heals, the shutdown hook may heal everything at any time.
 */
final class ChaosNetwork {
  /** Where servers' namespaces get their addresses: 10.77.0.101 and up (the nodes are at .11–.13, .21–.23). */
  private static final int FIRST_SERVER_HOST = 101;
  private static final String NET = "10.77.0.";

  /** Which packets a fault drops: those from the addresses (in), to them (out), or both. */
  enum Direction {
    IN("in"), OUT("out"), BOTH("both");

    private final String arg;

    Direction(String arg) {
      this.arg = arg;
    }
  }

  private final Path script;
  /** Namespaces (short names) with fault rules in them. */
  private final Set<String> cut = ConcurrentHashMap.newKeySet();
  /** The servers' namespaces this run made. */
  private final Set<String> hosts = ConcurrentHashMap.newKeySet();

  /** The network of the cluster that {@code netnsScript} (the launcher's netns.sh) manages. */
  ChaosNetwork(Path netnsScript) {
    this.script = netnsScript;
  }

  /** Why this machine cannot make network namespaces (netns.sh check), or empty if it can. */
  static Optional<String> unavailable(Path netnsScript) {
    try {
      Scripts.Result r = Scripts.run(List.of("bash", netnsScript.toString(), "check"), 60);
      return r.ok() ? Optional.empty() : Optional.of(r.out().strip());
    } catch (IOException e) {
      return Optional.of("netns.sh check could not run: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.of("interrupted");
    }
  }

  /** The address of server slot {@code slot}'s namespace. */
  static String serverAddress(int slot) {
    if (slot < 0 || FIRST_SERVER_HOST + slot > 254) {
      throw new IllegalArgumentException("server slot " + slot + " (expected: 0 to " + (254 - FIRST_SERVER_HOST) + ")");
    }
    return NET + (FIRST_SERVER_HOST + slot);
  }

  /** The namespace's short name of server slot {@code slot}. */
  static String serverHost(int slot) {
    return "srv" + slot;
  }

  /** Makes namespace {@code name} with {@code address} (a server's), replacing one of that name. */
  void addHost(String name, String address) throws IOException, InterruptedException {
    Scripts.inherit(List.of("bash", script.toString(), "add", name, address), 60);
    hosts.add(name);
  }

  /** Removes the servers' namespaces (and whatever still runs in them). */
  void removeHosts() throws IOException, InterruptedException {
    if (hosts.isEmpty()) {
      return;
    }
    List<String> cmd = new ArrayList<>(List.of("bash", script.toString(), "del"));
    cmd.addAll(hosts);
    Scripts.inherit(cmd, 120);
    hosts.clear();
  }

  /** What to prefix a command with to run it in namespace {@code name}. */
  static List<String> exec(String name) {
    return List.of("ip", "netns", "exec", "idgen-" + name);
  }

  /**
   * Drops, in each of {@code namespaces}, the packets from and/or to {@code addresses} (empty: every packet
   * on the namespace's link), as rules tagged {@code tag}.
   */
  void drop(List<String> namespaces, Direction direction, List<String> addresses, String tag)
      throws IOException, InterruptedException {
    cut.addAll(namespaces);
    Scripts.check(List.of("bash", script.toString(), "drop", String.join(",", namespaces), direction.arg,
        addresses.isEmpty() ? "all" : String.join(",", addresses), tag), 60);
  }

  /** Rules tagged {@code tag} in {@code namespaces}: a fault in force, until {@link #heal()}. */
  record Cut(ChaosNetwork network, List<String> namespaces, String tag) {
    /** Deletes the rules: the fault is healed. */
    void heal() throws IOException, InterruptedException {
      network.heal(namespaces, tag);
    }
  }

  /** dc1 | dc2: each datacenter's nodes drop what comes from, and goes to, the other's. */
  Cut partition(ChaosCassandra cassandra, String tag) throws IOException, InterruptedException {
    List<String> dc1 = cassandra.nodes("dc1");
    List<String> dc2 = cassandra.nodes("dc2");
    List<String> all = new ArrayList<>(dc1);
    all.addAll(dc2);
    Cut cut = new Cut(this, all, tag);
    drop(dc1, Direction.BOTH, addresses(cassandra, dc2), tag);
    drop(dc2, Direction.BOTH, addresses(cassandra, dc1), tag);
    return cut;
  }

  /**
   * One way: the nodes of datacenter {@code from} drop what they send to the nodes of {@code to}. (TCP
   * connections then fail both ways, their answers being lost: what is one-way is what the rules drop.)
   */
  Cut oneWay(ChaosCassandra cassandra, String from, String to, String tag) throws IOException, InterruptedException {
    List<String> senders = cassandra.nodes(from);
    drop(senders, Direction.OUT, addresses(cassandra, cassandra.nodes(to)), tag);
    return new Cut(this, senders, tag);
  }

  /** Namespace {@code host} (a server's) cut off from {@code addresses}, in both directions; others reach it. */
  Cut isolateFrom(String host, List<String> addresses, String tag) throws IOException, InterruptedException {
    drop(List.of(host), Direction.BOTH, addresses, tag);
    return new Cut(this, List.of(host), tag);
  }

  /** {@code namespaces} cut off from everything: every packet of their link dropped, both ways. */
  Cut isolate(List<String> namespaces, String tag) throws IOException, InterruptedException {
    drop(namespaces, Direction.BOTH, List.of(), tag);
    return new Cut(this, List.copyOf(namespaces), tag);
  }

  static List<String> addresses(ChaosCassandra cassandra, List<String> nodes) {
    return nodes.stream().map(cassandra::address).toList();
  }

  /** Deletes the rules tagged {@code tag} in {@code namespaces}. */
  void heal(List<String> namespaces, String tag) throws IOException, InterruptedException {
    Scripts.check(List.of("bash", script.toString(), "heal", String.join(",", namespaces), tag), 60);
  }

  /**
   * Forgets namespace {@code name}: its node left the cluster and the launcher removed it (a decommission, a
   * replacement at another address), so {@link #healAll()} must not look for rules there.
   */
  void forget(String name) {
    cut.remove(name);
  }

  /** Deletes every fault rule this run made; safe to call any number of times, never throws. */
  void healAll() {
    List<String> all = List.copyOf(cut);
    if (all.isEmpty()) {
      return;
    }
    try {
      Scripts.run(List.of("bash", script.toString(), "heal", String.join(",", all)), 60);
      cut.removeAll(all);
    } catch (IOException e) {
      System.err.println("chaos: could not delete the fault rules in " + all + ": " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Whether a TCP connection from namespace {@code from} ("root": the harness's) to address:port succeeds in 2 s. */
  boolean reach(String from, String address, int port) throws IOException, InterruptedException {
    return Scripts.run(List.of("bash", script.toString(), "reach", from, address, Integer.toString(port)), 30).ok();
  }
}
