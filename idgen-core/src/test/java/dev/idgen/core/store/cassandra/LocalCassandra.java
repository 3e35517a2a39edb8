package dev.idgen.core.store.cassandra;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The two-datacenter Cassandra that the build starts before the integration tests
 * ({@code deploy/cassandra/cassandra.sh start --topology two-dc}): 127.0.0.1 in dc1, 127.0.0.2 in dc2.
 * Fails, never skips, when it is not there.
 */
final class LocalCassandra {
  static final String DC1 = "dc1";
  static final String DC2 = "dc2";

  private LocalCassandra() {}

  static String contactPoint(String dc) {
    String key = "idgen.it.cassandra." + dc;
    String value = System.getProperty(key);
    if (value == null) {
      throw new IllegalStateException("system property " + key + " is not set: run the integration tests"
          + " through Maven (./mvnw verify), which starts Cassandra with deploy/cassandra/cassandra.sh");
    }
    return value;
  }

  /** A fresh keyspace name, so that test classes never share state by accident. */
  static String newKeyspace(String prefix) {
    return prefix + "_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);
  }

  /** Settings for a server in {@code dc}, replicating to both datacenters, one replica each. */
  static CassandraSettings settings(String keyspace, String dc, boolean createSchema) {
    return new CassandraSettings(List.of(contactPoint(dc)), dc, keyspace, createSchema,
        Map.of(DC1, 1, DC2, 1), Optional.empty(), Optional.empty(), false, Optional.empty(),
        Optional.empty(), Duration.ofSeconds(2), Duration.ofSeconds(30), 0.5, Duration.ofMillis(500), Duration.ofHours(12));
  }

  static CassandraSettings settings(String keyspace, String dc, Duration casDeadline) {
    CassandraSettings s = settings(keyspace, dc, false);
    return new CassandraSettings(s.contactPoints(), s.localDatacenter(), s.keyspace(), false,
        s.replication(), s.username(), s.password(), s.tls(), s.truststore(), s.truststorePassword(),
        s.requestTimeout(), casDeadline, s.poolRefillThreshold(), s.floorRefresh(), s.dcTargetRunway());
  }

  /** The pid of a node's JVM ({@code dc1} or {@code dc2}). */
  static long pid(String node) {
    return Long.parseLong(launcher("pid", node).trim());
  }

  /** Freezes a node (SIGSTOP): it keeps its sockets but answers nothing, as a partitioned node would. */
  static void pause(String node) {
    signal("-STOP", pid(node));
  }

  /** Resumes a paused node (SIGCONT). Always call it in a {@code finally}. */
  static void resume(String node) {
    signal("-CONT", pid(node));
  }

  private static void signal(String signal, long pid) {
    run(List.of("kill", signal, Long.toString(pid)));
  }

  private static String launcher(String... args) {
    String script = System.getProperty("idgen.it.cassandra.launcher");
    if (script == null) {
      throw new IllegalStateException("system property idgen.it.cassandra.launcher is not set");
    }
    List<String> cmd = new java.util.ArrayList<>(List.of("bash", script));
    cmd.addAll(List.of(args));
    return run(cmd);
  }

  private static String run(List<String> cmd) {
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException(cmd + " failed: " + out);
      }
      return out;
    } catch (IOException e) {
      throw new IllegalStateException(cmd + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(cmd + " interrupted", e);
    }
  }
}
