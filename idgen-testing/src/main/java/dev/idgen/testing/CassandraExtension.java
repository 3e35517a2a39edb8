package dev.idgen.testing;

import dev.idgen.testing.BackendSelection.Choice;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives integration tests a real two-datacenter Cassandra 5.0 ({@link TestCassandra}): one cluster per test
 * JVM, started the first time a test class that uses this extension runs, shared by every later class, and
 * stopped when the JVM's tests are over (it lives in the root {@link ExtensionContext.Store} as an
 * {@link AutoCloseable}, which JUnit 5.13+ closes at the end; a shutdown hook covers a JVM that is killed).
 * The launcher's cluster is the Maven build's instead, when the build asks for it: one start for every
 * module (see {@link LauncherCassandra}).
 *
 * <pre>
 * &#64;ExtendWith(CassandraExtension.class)
 * class MyIT {
 *   &#64;Test
 *   void works(TestCassandra cassandra) {
 *     String dc1 = cassandra.contactPoint(TestCassandra.DC1); // e.g. "127.0.0.1:9042"
 *     ...
 *   }
 * }
 * </pre>
 * The handle is also a constructor parameter, and {@link #cluster()} returns it to code that has no
 * parameter to receive it (static helpers), once a class with this extension has started it.
 *
 * <p><b>Backends</b> ({@link BackendSelection}): {@link Backend#TESTCONTAINERS} when Testcontainers finds a
 * Docker engine, else {@link Backend#LAUNCHER} ({@code idgen-testing/cassandra/cassandra.sh}, Cassandra as
 * local JVMs); system property {@code idgen.it.cassandra} (or environment variable
 * {@code IDGEN_IT_CASSANDRA}) = {@code launcher}, {@code testcontainers} or {@code external} overrides the
 * choice. The choice and its reason are printed once per JVM, on System.out and in the log, e.g.
 * {@code [idgen-testing] Cassandra for integration tests: launcher (no Docker engine: ...)}.
 *
 * <p><b>No silent skip.</b> If the chosen backend cannot start, every test class that uses this extension
 * fails, with what to do; the first failure is remembered, so later classes fail at once instead of trying
 * again. Leaving the integration tests out is an explicit decision: {@code -DskipITs}.
 *
 * <p><b>The launcher script</b> is found as {@link LauncherScript} says: the system property
 * {@code idgen.it.cassandra.launcher}, which the root pom's failsafe configuration sets to the checkout's
 * {@code idgen-testing/cassandra/cassandra.sh}; else that path above the working directory (an IDE); else the
 * copy packaged in this module's jar, extracted to a temporary directory.
 *
 * <p>After the start, system properties {@code idgen.it.cassandra.dc1} and {@code idgen.it.cassandra.dc2}
 * hold the contact points, for tests that still read them.
 */
public final class CassandraExtension implements BeforeAllCallback, ParameterResolver {
  private static final Logger LOG = LoggerFactory.getLogger(CassandraExtension.class);
  private static final Namespace NAMESPACE = Namespace.create(CassandraExtension.class);
  private static final String KEY = "cluster";

  private static volatile TestCassandra current;

  /** The cluster that this extension started in this JVM. */
  public static TestCassandra cluster() {
    TestCassandra c = current;
    if (c == null) {
      throw new IllegalStateException("no Cassandra started in this JVM: annotate the test class with"
          + " @ExtendWith(CassandraExtension.class) (or take a TestCassandra parameter)");
    }
    return c;
  }

  /** Starts the cluster if this JVM has none yet, and returns it; throws if it could not start. */
  public static TestCassandra cluster(ExtensionContext context) {
    return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(KEY, k -> Started.start(), Started.class).get();
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    cluster(context);
  }

  @Override
  public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    return parameterContext.getParameter().getType() == TestCassandra.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
    return cluster(extensionContext);
  }

  /** The cluster of this JVM, or why it could not start. Closed by JUnit with the root context. */
  static final class Started implements AutoCloseable {
    private final AbstractTestCassandra cluster;
    private final RuntimeException failure;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread hook;
    private boolean reported;

    private Started(AbstractTestCassandra cluster, RuntimeException failure) {
      this.cluster = cluster;
      this.failure = failure;
      this.hook = cluster == null ? null : new Thread(this::close, "idgen-testing-cassandra-stop");
      if (hook != null) {
        Runtime.getRuntime().addShutdownHook(hook);
      }
    }

    static Started start() {
      Choice choice;
      try {
        choice = BackendSelection.forThisJvm();
      } catch (RuntimeException e) {
        return failed(new IllegalStateException("Cassandra for integration tests: " + e.getMessage(), e));
      }
      say(choice.describe());
      long t0 = System.nanoTime();
      AbstractTestCassandra c;
      try {
        c = switch (choice.backend()) {
          case LAUNCHER -> {
            LauncherScript.Located script = LauncherScript.locate();
            say("[idgen-testing] starting two-dc Cassandra with " + script.script() + " (" + script.how() + ")");
            yield LauncherCassandra.start(script.script());
          }
          case TESTCONTAINERS -> {
            say("[idgen-testing] starting two " + TestcontainersCassandra.image() + " containers (dc1, then dc2)");
            yield TestcontainersCassandra.start();
          }
          case EXTERNAL -> ExternalCassandra.connect();
        };
      } catch (RuntimeException | LinkageError e) {
        return failed(new IllegalStateException("Cassandra for integration tests (" + choice.backend().id()
            + ") could not start: " + e.getMessage() + "\nWhat to do: " + advice(choice.backend()), e));
      }
      for (String dc : c.datacenters()) {
        System.setProperty(ExternalCassandra.DC_PROPERTY_PREFIX + dc, c.contactPoint(dc));
      }
      say(String.format("[idgen-testing] Cassandra ready in %.1f s: %s", (System.nanoTime() - t0) / 1e9, c.describe()));
      current = c;
      return new Started(c, null);
    }

    private static Started failed(IllegalStateException e) {
      LOG.error(e.getMessage(), e);
      return new Started(null, e);
    }

    static String advice(Backend backend) {
      return switch (backend) {
        case LAUNCHER -> "read the launcher's output above and the node logs in ~/.cache/idgen-cassandra/run/dc*/logs"
            + " (or $IDGEN_CASSANDRA_HOME/run). If a cluster is already running ("
            + LauncherScript.RELATIVE + " status), stop it (" + LauncherScript.RELATIVE + " stop) or use it with"
            + " -Didgen.it.cassandra=external. Ports 9042 and 7000 on 127.0.0.1 and 127.0.0.2, and 7199/7299 on"
            + " 127.0.0.1, must be free; Java 17 and Maven (to fetch cassandra-all once) must work. With a Docker"
            + " engine, -Didgen.it.cassandra=testcontainers. To leave the integration tests out on purpose: -DskipITs.";
        case TESTCONTAINERS -> "if Testcontainers found no Docker engine (its ERROR line above; chosen with"
            + " idgen.it.cassandra=testcontainers?), run Cassandra as local JVMs instead: -Didgen.it.cassandra=launcher"
            + " or no override. If an engine answered, the " + TestcontainersCassandra.DEFAULT_IMAGE + " containers"
            + " did not come up: check docker info, that the image can be pulled, and that the engine has about"
            + " 3 GB of memory for two nodes. To leave the integration tests out on purpose: -DskipITs.";
        case EXTERNAL -> "start the cluster first (" + LauncherScript.RELATIVE + " start --topology two-dc) or"
            + " point -Didgen.it.cassandra.dc1=host:port and -Didgen.it.cassandra.dc2=host:port at it; or drop"
            + " -Didgen.it.cassandra=external and let the tests start one.";
      };
    }

    private static void say(String line) {
      System.out.println(line);
      LOG.info(line);
    }

    TestCassandra get() {
      if (failure != null) {
        if (!reported) {
          reported = true;
          throw failure;
        }
        throw new IllegalStateException("Cassandra for integration tests failed to start earlier in this JVM"
            + " (see the first failing test class): " + failure.getMessage(), failure);
      }
      return cluster;
    }

    @Override
    public void close() {
      if (cluster == null || !closed.compareAndSet(false, true)) {
        return;
      }
      current = null;
      if (hook != null && Thread.currentThread() != hook) {
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
          // the JVM is exiting; the hook runs close(), which is a no-op now
        }
      }
      if (cluster instanceof LauncherCassandra l && l.sharedWithBuild()) {
        say("[idgen-testing] leaving Cassandra running for the build's next modules (it stops when the build ends)");
      } else {
        say("[idgen-testing] stopping Cassandra (" + cluster.backend().id() + ")");
      }
      cluster.close();
    }
  }
}
