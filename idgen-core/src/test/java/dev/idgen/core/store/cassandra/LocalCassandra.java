package dev.idgen.core.store.cassandra;

import dev.idgen.testing.CassandraExtension;
import dev.idgen.testing.TestCassandra;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The two-datacenter Cassandra of the integration tests, as idgen-testing's {@link CassandraExtension}
 * started it (the test class carries {@code @ExtendWith(CassandraExtension.class)}): node dc1 in datacenter
 * dc1, node dc2 in dc2 (the launcher: 127.0.0.1 and 127.0.0.2). A thin adapter over its
 * {@link TestCassandra} handle, plus this module's settings. Fails, never skips, when it is not there.
 */
final class LocalCassandra {
  static final String DC1 = TestCassandra.DC1;
  static final String DC2 = TestCassandra.DC2;

  private LocalCassandra() {}

  /** The started cluster; throws if the test class does not use {@link CassandraExtension}. */
  static TestCassandra cluster() {
    return CassandraExtension.cluster();
  }

  static String contactPoint(String dc) {
    return cluster().contactPoint(dc);
  }

  /** A fresh keyspace name, so that test classes never share state by accident. */
  static String newKeyspace(String prefix) {
    return prefix + "_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);
  }

  /**
   * The driver options of the tests' sessions: what they change is how much each session reads of the
   * cluster's schema, nothing the store does with it (the store reads the metadata of its own keyspace only).
   * <ul>
   *   <li>Schema metadata of the session's own keyspace only: the tests make dozens of keyspaces on one
   *       cluster, and without the filter every open session re-read all of them (every table of every
   *       keyspace) at its connect and after each schema change that any test made.
   *   <li>A debouncer window of 100 ms instead of 1 s: a schema change (a test's keyspace and tables) is
   *       answered once the driver refreshed its metadata, after that window.
   * </ul>
   * A test that sets a driver block of its own ({@link CassandraSettings#withDriverConfig}) replaces these.
   */
  static String testDriverConfig(String keyspace) {
    return "advanced.metadata.schema.refreshed-keyspaces = [\"" + keyspace + "\"]\n"
        + "advanced.metadata.schema.debouncer.window = 100 milliseconds";
  }

  /** Settings for a server in {@code dc}, replicating to both datacenters, one replica each. */
  static CassandraSettings settings(String keyspace, String dc, boolean createSchema) {
    return new CassandraSettings(List.of(contactPoint(dc)), dc, keyspace, createSchema,
        Map.of(DC1, 1, DC2, 1), Optional.empty(), Optional.empty(), CassandraSettings.Tls.OFF,
        Duration.ofSeconds(2), Duration.ofSeconds(30), CassandraSettings.DEFAULT_POOL_REFILL_STEP,
        Duration.ofMillis(500), CassandraSettings.DEFAULT_ISOLATION_RUNWAY, testDriverConfig(keyspace));
  }

  static CassandraSettings settings(String keyspace, String dc, Duration casDeadline) {
    CassandraSettings s = settings(keyspace, dc, false);
    return new CassandraSettings(s.contactPoints(), s.localDatacenter(), s.keyspace(), false,
        s.replication(), s.username(), s.password(), s.tls(),
        s.requestTimeout(), casDeadline, s.poolRefillStep(), s.floorRefresh(), s.isolationRunway(), s.driverConfig());
  }

  /** The pid of a node's JVM ({@code dc1} or {@code dc2}), when it runs on this machine (the launcher). */
  static long pid(String node) {
    return cluster().pid(node).orElseThrow(() -> new IllegalStateException(
        "no local pid for " + node + " with the " + cluster().backend().id() + " backend"));
  }

  /**
   * Freezes a node (SIGSTOP, or docker pause): it keeps its sockets but answers nothing, as a partitioned
   * node would.
   */
  static void pause(String node) {
    cluster().pause(node);
  }

  /** Resumes a paused node (SIGCONT, or docker unpause). Always call it in a {@code finally}. */
  static void resume(String node) {
    cluster().resume(node);
  }
}
