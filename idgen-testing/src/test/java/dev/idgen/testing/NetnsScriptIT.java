package dev.idgen.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code cassandra/netns.sh} on this machine, without Cassandra: namespaces on a bridge, fault rules that cut
 * the directions asked for and are healed by deleting them, and nothing left behind, also after a run that
 * was killed before it could tear down (the next {@code up} removes it and says so).
 *
 * <p>It works beside a running netns cluster without touching it: its namespaces, veths, bridge and subnet
 * have names of their own ({@code idgent-}, {@code idgt-}, 10.77.9.0/24). It needs root (or CAP_NET_ADMIN
 * and CAP_SYS_ADMIN) and nftables: where {@code netns.sh check} says namespaces cannot be made, the tests that
 * make them are skipped with that reason, and the tests of the reasons (not root, nft missing) still run, on
 * any machine: they drop the rights with setpriv and hide nft from the PATH ({@code cassandra/without.sh}).
 * Tagged {@code netns}: what runs depends on whether namespaces can be made ({@code .ci/run} runs it twice).
 */
@Tag("netns")
class NetnsScriptIT {
  private static final Path SCRIPT = Path.of("cassandra", "netns.sh").toAbsolutePath();
  private static final Path WITHOUT = Path.of("cassandra", "without.sh").toAbsolutePath();
  private static final String NET = "10.77.9";
  private static final String A = NET + ".2";
  private static final String B = NET + ".3";
  private static final String ROOT = NET + ".1";
  private static final int PORT = 7000;

  private final List<Process> listeners = new ArrayList<>();

  private static Processes.Result netns(String... args) {
    List<String> cmd = new ArrayList<>(List.of("env", "IDGEN_NETNS_PREFIX=idgent-", "IDGEN_NETNS_VETH_PREFIX=idgt-",
        "IDGEN_NETNS_NET=" + NET, "bash", SCRIPT.toString()));
    cmd.addAll(List.of(args));
    return Processes.run(cmd, Duration.ofSeconds(60), false);
  }

  private static boolean reach(String from, String address, int port) {
    return netns("reach", from, address, Integer.toString(port)).ok();
  }

  private static String available() {
    Processes.Result check = netns("check");
    return check.ok() ? null : check.output().strip();
  }

  @BeforeEach
  void namespacesCanBeMade() {
    assertThat(SCRIPT).exists();
  }

  @AfterEach
  void tearDown() {
    listeners.forEach(Process::destroyForcibly);
    if (available() == null) {
      netns("down");
    }
  }

  /** A {@link TcpListener} inside namespace {@code name} on {@code address}, once it listens. */
  private void listenIn(String name, String address) throws IOException {
    Process p = new ProcessBuilder("ip", "netns", "exec", "idgent-" + name,
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx32m",
        "-cp", System.getProperty("java.class.path"), TcpListener.class.getName(), address, Integer.toString(PORT))
        .redirectErrorStream(true).start();
    listeners.add(p);
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    assertThat(line).as("the listener in %s", name).isEqualTo("listening");
  }

  @Test
  void should_cut_the_directions_asked_for_and_restore_them_when_the_rules_are_deleted() throws Exception {
    String why = available();
    assumeTrue(why == null, () -> "netns.sh: " + why);
    assertThat(netns("up").ok()).isTrue();
    assertThat(netns("add", "a", A).ok()).isTrue();
    assertThat(netns("add", "b", B).ok()).isTrue();
    listenIn("a", A);
    listenIn("b", B);
    try (ServerSocket root = new ServerSocket(PORT, 50, InetAddress.getByName(ROOT))) {
      Thread acceptor = new Thread(() -> {
        while (!root.isClosed()) {
          try (Socket s = root.accept()) {
            s.getOutputStream().write('!');
          } catch (IOException closed) {
            return;
          }
        }
      });
      acceptor.setDaemon(true);
      acceptor.start();

      assertThat(reach("a", B, PORT)).as("a -> b before any rule").isTrue();
      assertThat(reach("b", A, PORT)).as("b -> a before any rule").isTrue();
      assertThat(reach("root", A, PORT)).as("root -> a before any rule").isTrue();
      assertThat(reach("a", ROOT, PORT)).as("a -> root before any rule").isTrue();

      // One way: a drops what it sends to b. Seen from a (cannot reach b) and from b (its handshake with a
      // gets no answer: TCP needs both ways); everyone else still reaches both.
      assertThat(netns("drop", "a", "out", B, "oneway").ok()).isTrue();
      assertThat(reach("a", B, PORT)).as("a -> b while a drops packets to b").isFalse();
      assertThat(reach("b", A, PORT)).as("b -> a while a drops packets to b").isFalse();
      assertThat(reach("root", A, PORT)).as("root -> a: not in the rule").isTrue();
      assertThat(reach("root", B, PORT)).as("root -> b: not in the rule").isTrue();
      assertThat(netns("rules", "a").output()).contains("ip daddr " + B + " drop comment \"oneway\"");
      assertThat(netns("rules", "b").output()).doesNotContain("drop");

      // Both namespaces cut off from everything on eth0; healing that tag leaves the one-way rule in place.
      assertThat(netns("drop", "a,b", "both", "all", "isolate").ok()).isTrue();
      assertThat(reach("root", A, PORT)).as("root -> a while a is isolated").isFalse();
      assertThat(reach("b", ROOT, PORT)).as("b -> root while b is isolated").isFalse();
      assertThat(netns("heal", "a,b", "isolate").ok()).isTrue();
      assertThat(reach("root", A, PORT)).as("root -> a once isolate is healed").isTrue();
      assertThat(reach("b", ROOT, PORT)).as("b -> root once isolate is healed").isTrue();
      assertThat(reach("a", B, PORT)).as("a -> b: the one-way rule is still there").isFalse();

      assertThat(netns("heal", "a").ok()).isTrue();
      assertThat(reach("a", B, PORT)).as("a -> b once every rule of a is deleted").isTrue();
      assertThat(reach("b", A, PORT)).as("b -> a once every rule of a is deleted").isTrue();
      assertThat(netns("rules", "a").output()).doesNotContain("drop");
    }

    Processes.Result down = netns("down");
    assertThat(down.ok()).isTrue();
    assertThat(down.output()).contains("killed 1 processes left in idgent-a", "killed 1 processes left in idgent-b");
    assertNothingLeft();
  }

  @Test
  void should_remove_the_leftovers_of_a_killed_run_at_the_next_start_and_say_so() throws Exception {
    String why = available();
    assumeTrue(why == null, () -> "netns.sh: " + why);
    assertThat(netns("up").ok()).isTrue();
    assertThat(netns("add", "a", A).ok()).isTrue();
    assertThat(netns("drop", "a", "both", "all", "cut").ok()).isTrue();
    // The run is killed here: its process stays in its namespace, nothing is torn down.
    Process orphan = new ProcessBuilder("ip", "netns", "exec", "idgent-a", "sleep", "600").start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!netns("leftovers").output().contains("idgent-a (1 processes)") && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(netns("leftovers").exitStatus()).as("leftovers found").isEqualTo(1);

    Processes.Result next = netns("up");

    assertThat(next.ok()).isTrue();
    assertThat(next.output()).contains("removing leftovers of an earlier run: namespace idgent-a (1 processes),"
        + " veth idgt-a, bridge idgent-br0", "killed 1 processes left in idgent-a");
    assertThat(orphan.waitFor(20, TimeUnit.SECONDS)).as("the process left in the namespace is gone").isTrue();
    assertThat(listNamespaces()).doesNotContain("idgent-a");
    assertThat(netns("down").ok()).isTrue();
    assertNothingLeft();
  }

  @Test
  void should_say_why_when_namespaces_cannot_be_made() throws Exception {
    Processes.Result check;
    boolean root = "root".equals(System.getProperty("user.name"));
    if (root && Files.isExecutable(Path.of("/usr/bin/setpriv"))) {
      // What a newcomer without root sees, whether nftables is installed or not.
      check = Processes.run(List.of("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
          "--inh-caps=-all", "bash", SCRIPT.toString(), "check"), Duration.ofSeconds(30), false);
    } else {
      check = netns("check");
      assumeTrue(!check.ok(), "this user can make namespaces, and setpriv is not there to drop the rights");
    }
    assertThat(check.exitStatus()).isEqualTo(1);
    assertThat(check.output()).startsWith("network namespaces unavailable: not root (uid ")
        .contains("CAP_NET_ADMIN");
  }

  /**
   * A machine without nftables (a fresh Debian has none): {@code check} names the missing tool and its package,
   * for root and for anyone else alike. {@code without.sh} hides nft from the PATH wherever it is installed.
   */
  @Test
  void should_say_that_nftables_is_missing_when_nft_is_not_on_the_path() {
    Processes.Result check = Processes.run(List.of("bash", WITHOUT.toString(), "nft", "bash", SCRIPT.toString(),
        "check"), Duration.ofSeconds(30), false);

    assertThat(check.exitStatus()).as(check.output()).isEqualTo(1);
    assertThat(check.output()).startsWith("network namespaces unavailable: ")
        .contains("nft is not installed (apt-get install nftables)");
  }

  private static String listNamespaces() {
    return Processes.run(Duration.ofSeconds(10), "ip", "netns", "list").orThrow().output();
  }

  private static void assertNothingLeft() {
    assertThat(netns("leftovers").exitStatus()).as("netns.sh leftovers").isZero();
    assertThat(listNamespaces()).doesNotContain("idgent-");
    assertThat(Processes.run(Duration.ofSeconds(10), "ip", "-o", "link", "show").orThrow().output())
        .doesNotContain("idgt-", "idgent-br0");
  }
}
