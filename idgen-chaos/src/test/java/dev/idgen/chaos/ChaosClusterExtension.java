package dev.idgen.chaos;

import dev.idgen.testing.CassandraExtension;
import dev.idgen.testing.TestCassandra;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The Cassandra of the chaos ITs, one per test JVM (closed with JUnit's root context, and by a shutdown hook
 * if the JVM is killed), as a {@link ChaosCassandra} parameter:
 * <ul>
 *   <li>where network namespaces can be made (root, or CAP_NET_ADMIN and CAP_SYS_ADMIN: {@code netns.sh
 *       check}), a netns topology of the launcher, every node in a namespace of its own, in
 *       {@code $IDGEN_CASSANDRA_HOME/run-netns} (default {@code ~/.cache/idgen-cassandra/run-netns}), so that
 *       every fault kind can be injected: {@code netns-3x1} (three nodes in dc1, one in dc2) unless system
 *       property {@value #TOPOLOGY} says {@code netns-3x3}. Six Cassandra JVMs are more than a 2-core machine
 *       gets through a short run with in a few minutes (docs/cassandra.md); the long run uses six;
 *   <li>otherwise the integration tests' two-datacenter cluster ({@link CassandraExtension}), which takes the
 *       kinds that need no namespaces; the run prints which kinds it could not inject and why.
 * </ul>
 * System property {@value #PROPERTY}: {@code auto} (the default with {@code -Didgen.tests=full}), {@code true}
 * (namespaces required: fail without them), {@code false} (the two-datacenter cluster, as a newcomer without
 * root gets; the default of the README's test command without {@code full}: starting four more Cassandra JVMs
 * and the network and kill faults they allow cost about three minutes on 2 cores, more than the test command's
 * 8 minutes leave, so those kinds run in the full set, as CI runs it).
 */
final class ChaosClusterExtension implements BeforeAllCallback, ParameterResolver {
  static final String PROPERTY = "chaosNetns";
  static final String TOPOLOGY = "chaosTopology";
  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(ChaosClusterExtension.class);

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    cluster(context);
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext extension) {
    return parameter.getParameter().getType() == ChaosCassandra.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext extension) {
    return cluster(extension);
  }

  static ChaosCassandra cluster(ExtensionContext context) {
    return context.getRoot().getStore(NAMESPACE)
        .getOrComputeIfAbsent("cluster", k -> Started.start(context), Started.class).cluster;
  }

  /** The repository root: failsafe's {@code idgenRepoRoot}, else above the working directory. */
  static Path repoRoot() {
    String configured = System.getProperty("idgenRepoRoot");
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured).toAbsolutePath().normalize();
    }
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve(CassandraCluster.SCRIPT))) {
        return dir;
      }
    }
    throw new IllegalStateException("no " + CassandraCluster.SCRIPT + " above " + Path.of("").toAbsolutePath()
        + ": set -DidgenRepoRoot");
  }

  /** The run directory of the ITs' netns cluster, outside any target/ (mvn clean must not delete it). */
  static Path netnsBaseDir() {
    String home = System.getenv("IDGEN_CASSANDRA_HOME");
    Path root = home == null || home.isBlank()
        ? Path.of(System.getProperty("user.home"), ".cache", "idgen-cassandra") : Path.of(home);
    return root.resolve("run-netns");
  }

  /** The cluster of this JVM; stops the netns cluster it started when JUnit closes it. */
  static final class Started implements AutoCloseable {
    final ChaosCassandra cluster;
    private final CassandraCluster owned;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread hook;

    private Started(ChaosCassandra cluster, CassandraCluster owned) {
      this.cluster = cluster;
      this.owned = owned;
      this.hook = owned == null ? null : new Thread(this::close, "chaos-it-cassandra-stop");
      if (hook != null) {
        Runtime.getRuntime().addShutdownHook(hook);
      }
    }

    static Started start(ExtensionContext context) {
      boolean full = "full".equals(System.getProperty("idgen.tests"));
      String mode = System.getProperty(PROPERTY, full ? "auto" : "false").trim();
      Path root = repoRoot();
      String topology = System.getProperty(TOPOLOGY, "netns-3x1").trim();
      if (!topology.startsWith("netns-")) {
        throw new IllegalStateException("-D" + TOPOLOGY + "=" + topology + ": expected netns-3x1 or netns-3x3");
      }
      CassandraCluster netns = new CassandraCluster(root, topology, netnsBaseDir());
      Optional<String> unavailable = !mode.equals("false") ? netns.unavailable()
          : Optional.of(System.getProperty(PROPERTY) != null ? "-D" + PROPERTY + "=false asks for it"
              : "the default set runs on it to stay within the test command's 8 minutes (-Didgen.tests=full or -D"
                  + PROPERTY + "=auto: the namespaces' cluster and every fault kind)");
      if (unavailable.isEmpty()) {
        System.out.println("[chaos-it] Cassandra for the chaos ITs: " + topology + " in " + netnsBaseDir()
            + " (every node in a network namespace: every fault kind)");
        long t0 = System.nanoTime();
        try {
          netns.start();
        } catch (Exception e) {
          try {
            netns.stop();
          } catch (Exception stop) {
            e.addSuppressed(stop);
          }
          throw new IllegalStateException("the " + topology + " cluster did not start: " + e.getMessage()
              + " (-D" + PROPERTY + "=false runs the chaos ITs on the two-datacenter cluster instead)", e);
        }
        System.out.printf("[chaos-it] %s up in %.1f s%n", topology, (System.nanoTime() - t0) / 1e9);
        return new Started(netns, netns);
      }
      if (mode.equals("true")) {
        throw new IllegalStateException("-D" + PROPERTY + "=true, but " + unavailable.get());
      }
      System.out.println("[chaos-it] Cassandra for the chaos ITs: the tests' two-datacenter cluster, because "
          + unavailable.get() + ". The network, replica and Cassandra-kill faults are not injected (the run"
          + " lists them).");
      TestCassandra tests = CassandraExtension.cluster(context);
      return new Started(adapter(tests, unavailable.get()), null);
    }

    @Override
    public void close() {
      if (owned == null || !closed.compareAndSet(false, true)) {
        return;
      }
      if (hook != null && Thread.currentThread() != hook) {
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
          // the JVM is exiting; the hook runs close(), which is a no-op now
        }
      }
      System.out.println("[chaos-it] stopping the " + owned.topology() + " cluster");
      owned.resumeAll();
      try {
        owned.stop();
      } catch (Exception e) {
        System.err.println("[chaos-it] could not stop the " + owned.topology() + " cluster: " + e);
      }
    }
  }

  /** The tests' cluster as the harness sees one: contact points, and pause/resume by datacenter. */
  static ChaosCassandra adapter(TestCassandra cassandra, String whyNoNetwork) {
    return new ChaosCassandra() {
      @Override
      public String contactPoint(String dc) {
        return cassandra.contactPoint(dc);
      }

      @Override
      public String describe(String dc) {
        return cassandra.pid(dc).isPresent() ? "pid=" + cassandra.pid(dc).getAsLong() : cassandra.backend().id();
      }

      @Override
      public void pause(String dc) {
        cassandra.pause(dc);
      }

      @Override
      public void resume(String dc) {
        cassandra.resume(dc);
      }

      @Override
      public void resumeAll() {
        cassandra.resumeAll();
      }

      @Override
      public String whyNoNetwork() {
        return whyNoNetwork;
      }

      @Override
      public String whyNoKill() {
        return "the tests' two-datacenter cluster starts its nodes with -Dcassandra.unsafesystem=true (a fast "
            + "start): a node killed with kill -9 would come back without the tables created since, a loss no"
            + " real node has";
      }
    };
  }
}
