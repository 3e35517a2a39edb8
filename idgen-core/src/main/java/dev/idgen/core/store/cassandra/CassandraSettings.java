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
 * @param tls TLS to Cassandra ({@link Tls#OFF}: none)
 * @param requestTimeout the driver's request timeout; a CAS that exceeds it is resolved by a read-back
 * @param casDeadline how long one store operation may retry lost races before it gives up
 * @param poolRefillStep how far beyond its low-water mark a refill tops a DC pool up, as a fraction of
 *     the mark (see {@link dev.idgen.core.RunwayPolicy})
 * @param floorRefresh how often servers poll floors set by {@code AdvanceSequence} elsewhere
 * @param isolationRunway how long a DC pool must last at the datacenter's measured rate when it is cut
 *     off from the others: the pool is refilled as soon as it holds less (capped by the sequence's
 *     {@code dc_block_size})
 * @param driverConfig the contents of a {@code datastax-java-driver} block (HOCON; empty: none): the
 *     driver's own options, passed to it as they are, except that the options idgen's correctness depends
 *     on are pinned and those that other settings here set are idgen's (checked here: a block that
 *     contradicts them is refused, naming the key)
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
    Tls tls,
    Duration requestTimeout,
    Duration casDeadline,
    double poolRefillStep,
    Duration floorRefresh,
    Duration isolationRunway,
    String driverConfig) {

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
    Objects.requireNonNull(tls, "tls");
    Objects.requireNonNull(driverConfig, "driverConfig");
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
    DriverConfig.check(driverConfig);
  }

  /**
   * TLS to Cassandra, built by the driver's own {@code DefaultSslEngineFactory} from these options
   * ({@code advanced.ssl-engine-factory}): it verifies the nodes' certificates against the truststore and,
   * with {@code hostnameValidation}, that each certificate names the host it was reached at.
   *
   * @param enabled whether to connect with TLS
   * @param truststore a JKS or PKCS#12 truststore with the CAs of the nodes' certificates; empty: the JVM's
   *     default CAs
   * @param truststorePassword its password, if it has one
   * @param keystore a JKS or PKCS#12 keystore with this server's client certificate and key, for nodes that
   *     require client certificates (mutual TLS); empty: none
   * @param keystorePassword its password
   * @param hostnameValidation whether a node's certificate must name the host it was reached at (its DNS
   *     name, or its address)
   */
  @Immutable
  @SuppressWarnings("Immutable") // java.nio.file.Path is immutable, but not annotated so
  public record Tls(boolean enabled, Optional<Path> truststore, Optional<String> truststorePassword,
      Optional<Path> keystore, Optional<String> keystorePassword, boolean hostnameValidation) {

    /** No TLS. */
    public static final Tls OFF = new Tls(false, Optional.empty(), Optional.empty(), Optional.empty(),
        Optional.empty(), true);

    public Tls {
      Objects.requireNonNull(truststore, "truststore");
      Objects.requireNonNull(truststorePassword, "truststorePassword");
      Objects.requireNonNull(keystore, "keystore");
      Objects.requireNonNull(keystorePassword, "keystorePassword");
      if (truststorePassword.isPresent() && truststore.isEmpty()) {
        throw new IllegalArgumentException("idgen.cassandra.tls.truststore-password is set without a"
            + " truststore (expected: idgen.cassandra.tls.truststore too)");
      }
      if (keystorePassword.isPresent() && keystore.isEmpty()) {
        throw new IllegalArgumentException("idgen.cassandra.tls.keystore-password is set without a"
            + " keystore (expected: idgen.cassandra.tls.keystore too)");
      }
    }
  }

  /** These settings with {@code tls} instead. */
  public CassandraSettings withTls(Tls tls) {
    return new CassandraSettings(contactPoints, localDatacenter, keyspace, createSchema, replication, username,
        password, tls, requestTimeout, casDeadline, poolRefillStep, floorRefresh, isolationRunway, driverConfig);
  }

  /** These settings with the {@code datastax-java-driver} block {@code driverConfig} instead. */
  public CassandraSettings withDriverConfig(String driverConfig) {
    return new CassandraSettings(contactPoints, localDatacenter, keyspace, createSchema, replication, username,
        password, tls, requestTimeout, casDeadline, poolRefillStep, floorRefresh, isolationRunway, driverConfig);
  }

  /** Settings for a local, unauthenticated cluster: the defaults of every optional field. */
  public static CassandraSettings local(List<String> contactPoints, String localDatacenter, String keyspace,
      Map<String, Integer> replication) {
    return new CassandraSettings(contactPoints, localDatacenter, keyspace, true, replication,
        Optional.empty(), Optional.empty(), Tls.OFF,
        Duration.ofSeconds(5), Duration.ofSeconds(10), DEFAULT_POOL_REFILL_STEP, Duration.ofSeconds(1),
        DEFAULT_ISOLATION_RUNWAY, "");
  }
}
