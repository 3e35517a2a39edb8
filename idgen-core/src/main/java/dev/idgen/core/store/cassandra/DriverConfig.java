package dev.idgen.core.store.cassandra;

import com.datastax.dse.driver.api.core.config.DseDriverOption;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.config.DriverOption;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigRenderOptions;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The driver's configuration for the store, in layers, highest precedence first:
 * <ol>
 *   <li><b>pinned</b>: what idgen's correctness depends on ({@link #PINS}: protocol V4, the consistency
 *       levels, no retry of a statement that is not idempotent). A block that says otherwise is refused;
 *       one that says the same is accepted.
 *   <li><b>idgen's own settings</b> ({@link #OWN}): the request timeout, TLS, credentials, contact points and
 *       local datacenter come from {@code idgen.cassandra.*}. The block may not set them too: each has one
 *       place.
 *   <li><b>the {@code datastax-java-driver} block</b> of idgen's configuration, as it is: any documented driver
 *       option (pooling, timeouts, reconnection, the TLS engine's cipher suites…). A key that is no driver
 *       option is refused, as a misspelt {@code idgen.*} key is.
 *   <li><b>idgen's defaults</b> ({@link #defaults}): connect lazily ({@code advanced.reconnect-on-init}),
 *       connections to a few nodes of every other datacenter, short set-up timeouts and reconnection delays,
 *       the driver's metrics. The block may change them.
 *   <li>the driver's own {@code reference.conf}, with system properties above everything, as the driver
 *       always reads them ({@link DriverConfigLoader#fromString}); idgen's configuration holds the same
 *       system properties, so they were checked too.
 * </ol>
 * The layers are merged as HOCON and handed to the driver through its public loader, so that every option
 * — the TLS engine's above all ({@code DefaultSslEngineFactory}, which validates host names) — is read and
 * built by the driver itself.
 */
final class DriverConfig {

  /** The driver's root key, in its files and in idgen's. */
  static final String ROOT = "datastax-java-driver";

  private DriverConfig() {}

  /** A value idgen's correctness depends on, and why. */
  private record Pin(DriverOption option, String value, Set<String> alsoAccepted, String why) {}

  /** The pinned options: {@code check} refuses a block that contradicts one. */
  private static final List<Pin> PINS = List.of(
      new Pin(DefaultDriverOption.PROTOCOL_VERSION, "V4", Set.of(), "protocol V5 drops the connection after every"
          + " compare-and-set write timeout (Cassandra 5.0, driver 4.19; docs/cassandra.md)"),
      new Pin(DefaultDriverOption.REQUEST_CONSISTENCY, "LOCAL_QUORUM", Set.of(), "the commit consistency that"
          + " pairs with LOCAL_SERIAL; a compare-and-set's outcome is read back at the levels it was written at"),
      new Pin(DefaultDriverOption.REQUEST_SERIAL_CONSISTENCY, "LOCAL_SERIAL", Set.of(), "a datacenter's pool is"
          + " only ever written at LOCAL_SERIAL, the global cursors at SERIAL, each statement saying so"),
      new Pin(DefaultDriverOption.REQUEST_DEFAULT_IDEMPOTENCE, "false", Set.of(), "a compare-and-set must never"
          + " be sent again blindly: idgen resolves an unknown outcome itself, by reading the row back"),
      new Pin(DefaultDriverOption.RETRY_POLICY_CLASS, "DefaultRetryPolicy",
          Set.of("com.datastax.oss.driver.internal.core.retry.DefaultRetryPolicy"), "it never sends a statement"
          + " that is not idempotent again once it may have reached a replica; another policy could repeat a"
          + " compare-and-set"),
      new Pin(DefaultDriverOption.LOAD_BALANCING_DC_FAILOVER_ALLOW_FOR_LOCAL_CONSISTENCY_LEVELS, "false", Set.of(),
          "a LOCAL_SERIAL or LOCAL_QUORUM statement sent to another datacenter would act on that datacenter's"
          + " replicas, outside the pool's serial scope"));

  /** Options set from {@code idgen.cassandra.*}, by the key that sets them. */
  private static final Map<DriverOption, String> OWN = ownOptions();

  private static Map<DriverOption, String> ownOptions() {
    Map<DriverOption, String> own = new LinkedHashMap<>();
    own.put(DefaultDriverOption.CONTACT_POINTS, "idgen.cassandra.contact-points");
    own.put(DefaultDriverOption.LOAD_BALANCING_LOCAL_DATACENTER, "idgen.cassandra.local-datacenter");
    own.put(DefaultDriverOption.REQUEST_TIMEOUT, "idgen.cassandra.request-timeout");
    own.put(DefaultDriverOption.AUTH_PROVIDER_CLASS, "idgen.cassandra.username");
    own.put(DefaultDriverOption.AUTH_PROVIDER_USER_NAME, "idgen.cassandra.username");
    own.put(DefaultDriverOption.AUTH_PROVIDER_PASSWORD, "idgen.cassandra.password");
    own.put(DefaultDriverOption.SSL_ENGINE_FACTORY_CLASS, "idgen.cassandra.tls.enabled");
    own.put(DefaultDriverOption.SSL_HOSTNAME_VALIDATION, "idgen.cassandra.tls.hostname-validation");
    own.put(DefaultDriverOption.SSL_TRUSTSTORE_PATH, "idgen.cassandra.tls.truststore");
    own.put(DefaultDriverOption.SSL_TRUSTSTORE_PASSWORD, "idgen.cassandra.tls.truststore-password");
    own.put(DefaultDriverOption.SSL_KEYSTORE_PATH, "idgen.cassandra.tls.keystore");
    own.put(DefaultDriverOption.SSL_KEYSTORE_PASSWORD, "idgen.cassandra.tls.keystore-password");
    return Collections.unmodifiableMap(own); // in this order: messages name the first key found
  }

  /** Every option path the driver reads (its own and DSE's): a block key is one of them, or under one. */
  private static final Set<String> KNOWN = new TreeSet<>(Stream.concat(
      Stream.of(DefaultDriverOption.values()), Stream.of(DseDriverOption.values()))
      .map(DriverOption::getPath).toList());

  /**
   * Checks a {@code datastax-java-driver} block (its contents, HOCON; empty: none).
   *
   * @throws IllegalArgumentException naming the first offending key ({@code datastax-java-driver.…}) and why
   */
  static void check(String block) {
    Config config = parse(block);
    if (config.hasPath("profiles")) {
      throw new IllegalArgumentException(ROOT + ".profiles: idgen runs every statement in the default profile,"
          + " so an execution profile would have no effect (expected: options of the default profile only)");
    }
    for (String key : config.entrySet().stream().map(Map.Entry::getKey).sorted().toList()) {
      if (!KNOWN.contains(key) && KNOWN.stream().noneMatch(k -> key.startsWith(k + "."))) {
        throw new IllegalArgumentException(ROOT + "." + key + ": no such driver option; is it misspelt? (the"
            + " driver's reference.conf lists them)");
      }
    }
    for (Pin pin : PINS) {
      String path = pin.option().getPath();
      if (config.hasPath(path)) {
        String value = String.valueOf(config.getValue(path).unwrapped());
        if (!value.equals(pin.value()) && !pin.alsoAccepted().contains(value)) {
          throw new IllegalArgumentException(ROOT + "." + path + " = " + value + ": idgen pins it to "
              + pin.value() + ", because " + pin.why() + " (remove it from the block)");
        }
      }
    }
    for (Map.Entry<DriverOption, String> own : OWN.entrySet()) {
      String path = own.getKey().getPath();
      if (config.hasPath(path)) {
        throw new IllegalArgumentException(ROOT + "." + path + " is set by " + own.getValue()
            + " (set it there, and remove it from the block)");
      }
    }
  }

  /**
   * The driver's configuration for {@code settings}, with its metrics options when {@code metrics}. The
   * settings' block has passed {@link #check} (their constructor calls it).
   */
  static DriverConfigLoader loader(CassandraSettings settings, boolean metrics) {
    Config merged = pinned()
        .withFallback(own(settings))
        .withFallback(parse(settings.driverConfig()))
        .withFallback(defaults(metrics));
    return DriverConfigLoader.fromString(merged.atKey(ROOT).root().render(ConfigRenderOptions.concise()));
  }

  private static Config pinned() {
    Map<String, Object> values = new LinkedHashMap<>();
    for (Pin pin : PINS) {
      values.put(pin.option().getPath(), pin.value());
    }
    return ConfigFactory.parseMap(values, "pinned by idgen");
  }

  /**
   * What {@code idgen.cassandra.*} says, as driver options. Contact points and the local datacenter go to
   * the session builder (contact points as unresolved addresses, resolved when the driver connects).
   */
  private static Config own(CassandraSettings s) {
    Map<String, Object> values = new LinkedHashMap<>();
    values.put(path(DefaultDriverOption.REQUEST_TIMEOUT), duration(s.requestTimeout()));
    if (s.username().isPresent()) {
      values.put(path(DefaultDriverOption.AUTH_PROVIDER_CLASS), "PlainTextAuthProvider");
      values.put(path(DefaultDriverOption.AUTH_PROVIDER_USER_NAME), s.username().get());
      values.put(path(DefaultDriverOption.AUTH_PROVIDER_PASSWORD), s.password().orElseThrow());
    }
    CassandraSettings.Tls tls = s.tls();
    if (tls.enabled()) {
      // The driver's own factory: it validates the nodes' host names against their certificates.
      values.put(path(DefaultDriverOption.SSL_ENGINE_FACTORY_CLASS), "DefaultSslEngineFactory");
      values.put(path(DefaultDriverOption.SSL_HOSTNAME_VALIDATION), tls.hostnameValidation());
      tls.truststore().ifPresent(p -> values.put(path(DefaultDriverOption.SSL_TRUSTSTORE_PATH), p.toString()));
      tls.truststorePassword().ifPresent(p -> values.put(path(DefaultDriverOption.SSL_TRUSTSTORE_PASSWORD), p));
      tls.keystore().ifPresent(p -> values.put(path(DefaultDriverOption.SSL_KEYSTORE_PATH), p.toString()));
      tls.keystorePassword().ifPresent(p -> values.put(path(DefaultDriverOption.SSL_KEYSTORE_PASSWORD), p));
    }
    return ConfigFactory.parseMap(values, "idgen.cassandra");
  }

  /** The driver metrics exported when a registry is given: what an operator alerts on or debugs with. */
  private static final List<String> SESSION_METRICS = List.of("bytes-sent", "bytes-received",
      "connected-nodes", "cql-requests", "cql-client-timeouts", "throttling.delay", "throttling.errors");
  private static final List<String> NODE_METRICS = List.of("pool.open-connections", "pool.in-flight",
      "pool.available-streams", "cql-messages", "errors.request.write-timeouts",
      "errors.request.read-timeouts", "errors.request.unavailables", "errors.request.others",
      "errors.request.aborted", "errors.connection.init", "errors.connection.auth");

  private static Config defaults(boolean metrics) {
    Map<String, Object> values = new LinkedHashMap<>();
    // Connect in the background and keep trying: a server started before Cassandra waits for it (and
    // reports NOT_SERVING) instead of exiting. false: the first failure to connect ends the start.
    values.put(path(DefaultDriverOption.RECONNECT_ON_INIT), true);
    // Connections to a few nodes of every other datacenter, so that an advance can trim their pools
    // through their own coordinators; LOCAL_* statements still never leave this datacenter (pinned).
    values.put(path(DefaultDriverOption.LOAD_BALANCING_DC_FAILOVER_MAX_NODES_PER_REMOTE_DC), 3);
    values.put(path(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT), duration(Duration.ofSeconds(5)));
    values.put(path(DefaultDriverOption.CONTROL_CONNECTION_TIMEOUT), duration(Duration.ofSeconds(5)));
    values.put(path(DefaultDriverOption.RECONNECTION_BASE_DELAY), duration(Duration.ofMillis(200)));
    values.put(path(DefaultDriverOption.RECONNECTION_MAX_DELAY), duration(Duration.ofSeconds(5)));
    values.put(path(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT), duration(Duration.ofSeconds(10)));
    values.put(path(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT), duration(Duration.ofSeconds(20)));
    if (metrics) {
      values.put(path(DefaultDriverOption.METRICS_FACTORY_CLASS), "MicrometerMetricsFactory");
      values.put(path(DefaultDriverOption.METRICS_ID_GENERATOR_CLASS), "TaggingMetricIdGenerator");
      values.put(path(DefaultDriverOption.METRICS_ID_GENERATOR_PREFIX), "cassandra");
      values.put(path(DefaultDriverOption.METRICS_SESSION_ENABLED), SESSION_METRICS);
      values.put(path(DefaultDriverOption.METRICS_NODE_ENABLED), NODE_METRICS);
    }
    return ConfigFactory.parseMap(values, "idgen's defaults");
  }

  private static Config parse(String block) {
    try {
      return ConfigFactory.parseString(block).resolve();
    } catch (ConfigException e) {
      throw new IllegalArgumentException(ROOT + ": " + e.getMessage(), e);
    }
  }

  private static String path(DriverOption option) {
    return option.getPath();
  }

  private static String duration(Duration d) {
    return d.toNanos() + "ns";
  }
}
