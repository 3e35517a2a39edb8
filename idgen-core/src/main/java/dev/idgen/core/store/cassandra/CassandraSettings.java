package dev.idgen.core.store.cassandra;

import com.google.errorprone.annotations.Immutable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * How to reach Cassandra and how the store behaves. Immutable; validated on construction.
 *
 * @param contactPoints {@code host:port} of some nodes
 * @param localDatacenter this server's datacenter: its DC pool, and the DC of its coordinators
 * @param keyspace the keyspace of idgen's tables
 * @param createSchema whether to apply the schema (idempotently) at start-up
 * @param replication datacenter → replicas, used by {@code createSchema} for the keyspace
 * @param username credentials, or empty for none
 * @param password credentials
 * @param tls whether to connect with TLS
 * @param truststore a JKS/PKCS12 truststore for TLS, or empty for the JVM's default
 * @param truststorePassword its password
 * @param requestTimeout the driver's request timeout; a CAS that exceeds it is resolved by a read-back
 * @param casDeadline how long one store operation may retry lost races before it gives up
 * @param poolRefillStep how far beyond its low-water mark a refill tops a DC pool up, as a fraction of
 *     the mark (see {@link dev.idgen.core.RunwayPolicy})
 * @param floorRefresh how often servers poll floors set by {@code AdvanceSequence} elsewhere
 * @param isolationRunway how long a DC pool must last at the datacenter's measured rate when it is cut
 *     off from the others: the pool is refilled as soon as it holds less (capped by the sequence's
 *     {@code dc_block_size})
 */
@Immutable
@SuppressWarnings("Immutable") // components are List.copyOf / Map.copyOf: unmodifiable
public record CassandraSettings(
    List<String> contactPoints,
    String localDatacenter,
    String keyspace,
    boolean createSchema,
    Map<String, Integer> replication,
    Optional<String> username,
    Optional<String> password,
    boolean tls,
    Optional<Path> truststore,
    Optional<String> truststorePassword,
    Duration requestTimeout,
    Duration casDeadline,
    double poolRefillStep,
    Duration floorRefresh,
    Duration isolationRunway) {

  /** How long a datacenter's pool lasts at its rate when it is cut off from the others. */
  public static final Duration DEFAULT_ISOLATION_RUNWAY = Duration.ofHours(24);
  public static final double DEFAULT_POOL_REFILL_STEP = 0.25;

  private static final Pattern IDENTIFIER = Pattern.compile("[a-z][a-z0-9_]{0,47}");

  public CassandraSettings {
    contactPoints = List.copyOf(contactPoints);
    replication = Map.copyOf(replication);
    if (contactPoints.isEmpty()) {
      throw new IllegalArgumentException("idgen.cassandra.contact-points is empty (expected: host:port, …)");
    }
    for (String cp : contactPoints) {
      int colon = cp.lastIndexOf(':');
      if (colon <= 0 || colon == cp.length() - 1) {
        throw new IllegalArgumentException("idgen.cassandra.contact-points: '" + cp + "' (expected: host:port)");
      }
      Integer.parseInt(cp.substring(colon + 1));
    }
    if (localDatacenter == null || localDatacenter.isBlank()) {
      throw new IllegalArgumentException("idgen.cassandra.local-datacenter is not set (expected: the"
          + " datacenter of this server, as Cassandra names it, e.g. dc1)");
    }
    if (!IDENTIFIER.matcher(keyspace).matches()) {
      throw new IllegalArgumentException("idgen.cassandra.keyspace: '" + keyspace
          + "' (expected: lower-case letters, digits and _, starting with a letter)");
    }
    replication.forEach((dc, n) -> {
      if (n < 1) {
        throw new IllegalArgumentException("idgen.cassandra.replication." + dc + ": " + n + " (expected: >= 1)");
      }
    });
    if (createSchema && replication.isEmpty()) {
      throw new IllegalArgumentException("idgen.cassandra.replication is empty but create-schema is on"
          + " (expected: a map of datacenter to replicas, e.g. { dc1 = 3, dc2 = 3 })");
    }
    Objects.requireNonNull(username);
    Objects.requireNonNull(password);
    Objects.requireNonNull(truststore);
    Objects.requireNonNull(truststorePassword);
    if (username.isPresent() != password.isPresent()) {
      throw new IllegalArgumentException("idgen.cassandra.username and .password go together");
    }
    if (requestTimeout.isNegative() || requestTimeout.isZero()) {
      throw new IllegalArgumentException("idgen.cassandra.request-timeout: " + requestTimeout + " (expected: > 0)");
    }
    if (casDeadline.compareTo(requestTimeout) < 0) {
      throw new IllegalArgumentException("idgen.cassandra.cas-deadline: " + casDeadline
          + " (expected: >= request-timeout " + requestTimeout + ")");
    }
    if (!(poolRefillStep > 0 && poolRefillStep <= 4)) {
      throw new IllegalArgumentException("idgen.cassandra.pool-refill-step: " + poolRefillStep
          + " (expected: > 0 and <= 4)");
    }
    if (isolationRunway.isNegative() || isolationRunway.isZero()) {
      throw new IllegalArgumentException("idgen.cassandra.isolation-runway: " + isolationRunway + " (expected: > 0)");
    }
    if (floorRefresh.isNegative() || floorRefresh.isZero()) {
      throw new IllegalArgumentException("idgen.cassandra.floor-refresh: " + floorRefresh + " (expected: > 0)");
    }
  }

  /** Settings for a local, unauthenticated cluster: the defaults of every optional field. */
  public static CassandraSettings local(List<String> contactPoints, String localDatacenter, String keyspace,
      Map<String, Integer> replication) {
    return new CassandraSettings(contactPoints, localDatacenter, keyspace, true, replication,
        Optional.empty(), Optional.empty(), false, Optional.empty(), Optional.empty(),
        Duration.ofSeconds(5), Duration.ofSeconds(10), DEFAULT_POOL_REFILL_STEP, Duration.ofSeconds(1),
        DEFAULT_ISOLATION_RUNWAY);
  }
}
