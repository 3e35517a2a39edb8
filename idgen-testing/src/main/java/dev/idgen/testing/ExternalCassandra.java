package dev.idgen.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.function.Function;

/**
 * {@link Backend#EXTERNAL}: a two-datacenter cluster that is already running, typically one a developer
 * started with {@code idgen-testing/cassandra/cassandra.sh start --topology two-dc} to run test after test
 * without a start each time. Contact points: system properties {@code idgen.it.cassandra.dc1} and
 * {@code idgen.it.cassandra.dc2} (environment {@code IDGEN_IT_CASSANDRA_DC1} / {@code _DC2}), by default the
 * launcher's {@code 127.0.0.1:9042} and {@code 127.0.0.2:9042}. Each must accept a TCP connection, or the
 * start fails. Nothing is stopped at the end. Pausing works when the launcher runs the nodes (their pids
 * come from {@code cassandra.sh pid}); otherwise it throws {@link UnsupportedOperationException}.
 */
final class ExternalCassandra extends AbstractTestCassandra {
  static final String DC_PROPERTY_PREFIX = "idgen.it.cassandra.";


  private ExternalCassandra(String dc1, String dc2) {
    contactPoints(dc1, dc2);
  }

  static ExternalCassandra connect() {
    return connect(System::getProperty, System::getenv);
  }

  static ExternalCassandra connect(Function<String, String> properties, Function<String, String> environment) {
    ExternalCassandra c = new ExternalCassandra(
        contactPointSetting(properties, environment, DC1, "127.0.0.1:9042"),
        contactPointSetting(properties, environment, DC2, "127.0.0.2:9042"));
    for (String dc : c.datacenters()) {
      InetSocketAddress a = c.address(dc);
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(a.getHostString(), a.getPort()), 5_000);
      } catch (IOException e) {
        throw new IllegalStateException("nothing accepts connections on " + c.contactPoint(dc) + " (" + dc
            + "; set with " + DC_PROPERTY_PREFIX + dc + "): " + e.getMessage(), e);
      }
    }
    return c;
  }

  static String contactPointSetting(Function<String, String> properties, Function<String, String> environment,
      String dc, String fallback) {
    String v = properties.apply(DC_PROPERTY_PREFIX + dc);
    if (v == null || v.isBlank()) {
      v = environment.apply("IDGEN_IT_CASSANDRA_" + dc.toUpperCase(java.util.Locale.ROOT));
    }
    return v == null || v.isBlank() ? fallback : v.trim();
  }

  @Override
  public Backend backend() {
    return Backend.EXTERNAL;
  }

  @Override
  protected void doPause(String dc) {
    long pid;
    try {
      pid = LauncherCassandra.pidOf(LauncherScript.locate().script(), dc);
    } catch (RuntimeException e) {
      throw new UnsupportedOperationException("cannot pause " + dc + " of an external cluster that the launcher"
          + " (cassandra.sh pid " + dc + ") does not know: " + e.getMessage(), e);
    }
    pid(dc, pid);
    LauncherCassandra.signal("-STOP", pid);
  }

  @Override
  protected void doResume(String dc) {
    pid(dc).ifPresent(pid -> LauncherCassandra.signal("-CONT", pid));
  }

  @Override
  public void close() {
    resumeAll(); // the cluster itself belongs to whoever started it
  }
}
