package dev.idgen.server.config;

import com.google.errorprone.annotations.Immutable;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The operational settings: metrics and alarms ({@code idgen.metrics}, {@code idgen.alarms}), transport
 * security ({@code idgen.grpc.tls}), access rules ({@code idgen.access}) and transport limits
 * ({@code idgen.limits}, {@code idgen.grpc.keepalive}). Typed, validated once at start, immutable; each
 * field is a key of {@code reference.conf}, where its meaning and default are documented. Plain values only:
 * the access rules, for one, are read here and applied by {@code dev.idgen.server.access}.
 */
@Immutable
public record OperationsSettings(Metrics metrics, Alarms alarms, Tls tls, Access access, Limits limits) {

  public OperationsSettings {
    Objects.requireNonNull(metrics, "metrics");
    Objects.requireNonNull(alarms, "alarms");
    Objects.requireNonNull(tls, "tls");
    Objects.requireNonNull(access, "access");
    Objects.requireNonNull(limits, "limits");
  }

  /**
   * {@code idgen.metrics}: the Prometheus endpoint, how often store-backed gauges are refreshed (and how often
   * those of a quiet sequence, 0: as often as the budget allows), and how many sequences may have series of
   * their own (0: none).
   */
  @Immutable
  public record Metrics(boolean enabled, String host, int port, Duration refreshInterval,
      int storeReadsPerRefresh, Duration quietStoreReadInterval, int maxSequenceSeries) {}

  /** {@code idgen.alarms}: when the log warns. Runway warnings of zero are off. */
  @Immutable
  @SuppressWarnings("Immutable") // components are List.copyOf: unmodifiable
  public record Alarms(List<Double> headroomWarnings, Duration nodeRunwayWarning, Duration dcRunwayWarning) {
    public Alarms {
      headroomWarnings = List.copyOf(headroomWarnings);
    }
  }

  /** Who may ask for a client certificate. */
  public enum ClientAuth {
    NONE,
    OPTIONAL,
    REQUIRE
  }

  /** {@code idgen.grpc.tls}. Paths are empty when TLS is off. */
  @Immutable
  public record Tls(boolean enabled, Optional<Path> certChain, Optional<Path> privateKey, Optional<Path> trustCerts,
      ClientAuth clientAuth, Duration refreshInterval) {}

  /**
   * {@code idgen.access}: whether access control is on, the bearer tokens (as SHA-256 digests, hex, to
   * the identity each stands for) and the rules.
   */
  @Immutable
  @SuppressWarnings("Immutable") // components are List.copyOf / Map.copyOf: unmodifiable
  public record Access(boolean enabled, Map<String, String> tokenDigests, List<AccessRule> rules,
      Map<Path, String> tokenFiles, Duration tokenRefreshInterval) {
    public Access {
      tokenDigests = Map.copyOf(tokenDigests);
      rules = List.copyOf(rules);
      tokenFiles = Map.copyOf(tokenFiles);
    }
  }

  /**
   * One access rule as configured: an identity (a glob) and the sequences (globs) it may allocate from and
   * administer. Globs: {@code *} any characters, {@code ?} one, everything else literal; the access
   * interceptor compiles and applies them.
   */
  @Immutable
  @SuppressWarnings("Immutable") // components are List.copyOf: unmodifiable
  public record AccessRule(String identity, List<String> allocate, List<String> admin) {
    public AccessRule {
      allocate = List.copyOf(allocate);
      admin = List.copyOf(admin);
    }
  }

  /** {@code idgen.limits} and {@code idgen.grpc.keepalive}: what one client may hold. Zero durations: off. */
  @Immutable
  public record Limits(int maxConcurrentCallsPerConnection, int maxInboundMessageSize, int maxInboundMetadataSize,
      Duration maxCallDuration, Duration handshakeTimeout, Duration keepaliveTime, Duration keepaliveTimeout,
      Duration permitKeepaliveTime, boolean permitKeepaliveWithoutCalls, Duration maxConnectionIdle,
      Duration maxConnectionAge, Duration maxConnectionAgeGrace) {}

  static final String METRICS = "idgen.metrics.";
  static final String ALARMS = "idgen.alarms.";
  static final String TLS = "idgen.grpc.tls.";
  static final String ACCESS = "idgen.access.";
  static final String LIMITS = "idgen.limits.";
  static final String KEEPALIVE = "idgen.grpc.keepalive.";

  /** Reads the settings with this process's environment (for {@code token-env}). */
  public static OperationsSettings from(Config config) {
    return from(config, System.getenv());
  }

  /**
   * Reads and validates the settings.
   *
   * @throws ConfigException naming the key, where it was set, and what was expected
   */
  public static OperationsSettings from(Config config, Map<String, String> environment) {
    return new OperationsSettings(metrics(config), alarms(config), tls(config), access(config, environment),
        limits(config));
  }

  private static Metrics metrics(Config config) {
    String host = config.getString(METRICS + "host").trim();
    check(config, METRICS + "host", !host.isEmpty(), "an address or host name, e.g. \"0.0.0.0\"");
    int port = config.getInt(METRICS + "port");
    check(config, METRICS + "port", port >= 0 && port <= 65535, "0 to 65535 (0: any free port), got " + port);
    Duration refresh = positive(config, METRICS + "refresh-interval", Duration.ofMillis(100));
    int reads = config.getInt(METRICS + "store-reads-per-refresh");
    check(config, METRICS + "store-reads-per-refresh", reads >= 1, "at least 1, got " + reads);
    Duration quiet = duration(config, METRICS + "quiet-store-read-interval", Duration.ofSeconds(1));
    int series = config.getInt(METRICS + "max-sequence-series");
    check(config, METRICS + "max-sequence-series", series >= 0,
        "0 or more (0: no per-sequence series), got " + series);
    return new Metrics(config.getBoolean(METRICS + "enabled"), host, port, refresh, reads, quiet, series);
  }

  private static Alarms alarms(Config config) {
    String key = ALARMS + "headroom-warnings";
    List<Double> levels = new ArrayList<>(config.getDoubleList(key));
    for (double level : levels) {
      check(config, key, level > 0 && level < 1, "fractions above 0 and below 1, e.g. [0.2, 0.1, 0.05], got "
          + level);
    }
    levels.sort((a, b) -> Double.compare(b, a)); // highest first: the order they are crossed in
    return new Alarms(levels, duration(config, ALARMS + "runway-warning.node", Duration.ZERO),
        duration(config, ALARMS + "runway-warning.dc", Duration.ZERO));
  }

  private static Tls tls(Config config) {
    boolean enabled = config.getBoolean(TLS + "enabled");
    String authName = config.getString(TLS + "client-auth").trim().toUpperCase(Locale.ROOT);
    ClientAuth auth = null;
    for (ClientAuth a : ClientAuth.values()) {
      if (a.name().equals(authName)) {
        auth = a;
      }
    }
    check(config, TLS + "client-auth", auth != null, "none, optional or require, got \""
        + config.getString(TLS + "client-auth") + "\"");
    Optional<Path> chain = path(config, TLS + "cert-chain");
    Optional<Path> key = path(config, TLS + "private-key");
    Optional<Path> trust = path(config, TLS + "trust-certs");
    Duration refresh = positive(config, TLS + "refresh-interval", Duration.ofSeconds(1));
    if (enabled) {
      check(config, TLS + "cert-chain", chain.isPresent(), "a PEM file (TLS is enabled)");
      check(config, TLS + "private-key", key.isPresent(), "a PEM file with a PKCS#8 key (TLS is enabled)");
      check(config, TLS + "trust-certs", auth == ClientAuth.NONE || trust.isPresent(),
          "a PEM file of the CAs that sign client certificates (client-auth is " + authName.toLowerCase(
              Locale.ROOT) + ")");
      for (String k : List.of("cert-chain", "private-key", "trust-certs")) {
        Optional<Path> p = path(config, TLS + k);
        check(config, TLS + k, p.isEmpty() || Files.isReadable(p.get()),
            "a readable file, got " + p.map(Path::toString).orElse(""));
      }
    } else {
      check(config, TLS + "client-auth", auth == ClientAuth.NONE,
          "none while idgen.grpc.tls.enabled is false (client certificates need TLS)");
    }
    return new Tls(enabled, chain, key, trust, auth, refresh);
  }

  private static Access access(Config config, Map<String, String> environment) {
    boolean enabled = config.getBoolean(ACCESS + "enabled");
    Map<String, String> digests = new HashMap<>();
    Map<Path, String> files = new HashMap<>(); // token-file → identity: reloaded when they change
    String tokensKey = ACCESS + "tokens";
    for (Config t : config.getConfigList(tokensKey)) {
      check(config, tokensKey, t.hasPath("identity") && !t.getString("identity").isBlank(),
          "entries { identity = \"…\", token | token-file | token-env = \"…\" }; one has no identity");
      String identity = t.getString("identity").trim();
      int sources = (t.hasPath("token") ? 1 : 0) + (t.hasPath("token-file") ? 1 : 0)
          + (t.hasPath("token-env") ? 1 : 0);
      check(config, tokensKey, sources == 1, "exactly one of token, token-file, token-env for identity '"
          + identity + "'");
      String token;
      if (t.hasPath("token")) {
        token = t.getString("token");
      } else if (t.hasPath("token-file")) {
        Path file = Path.of(t.getString("token-file"));
        files.put(file, identity);
        try {
          token = Files.readString(file, StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
          throw new ConfigException.BadValue(config.getValue(tokensKey).origin(), tokensKey,
              "cannot read token-file " + file + " of identity '" + identity + "': " + e);
        }
      } else {
        String variable = t.getString("token-env");
        token = environment.getOrDefault(variable, "").trim();
        check(config, tokensKey, !token.isEmpty(), "environment variable " + variable + " (token-env of"
            + " identity '" + identity + "') to be set");
      }
      check(config, tokensKey, token.length() >= 16, "tokens of at least 16 characters (identity '"
          + identity + "')");
      String previous = digests.put(sha256(token), identity);
      check(config, tokensKey, previous == null, "distinct tokens (identities '" + previous + "' and '"
          + identity + "' share one)");
    }
    List<AccessRule> rules = new ArrayList<>();
    String rulesKey = ACCESS + "rules";
    for (Config r : config.getConfigList(rulesKey)) {
      check(config, rulesKey, r.hasPath("identity") && !r.getString("identity").isBlank(),
          "entries { identity = \"…\", allocate = [globs], admin = [globs] }; one has no identity");
      for (String k : r.root().keySet()) {
        check(config, rulesKey, List.of("identity", "allocate", "admin").contains(k),
            "only identity, allocate and admin in a rule, got '" + k + "'");
      }
      rules.add(new AccessRule(r.getString("identity").trim(),
          r.hasPath("allocate") ? r.getStringList("allocate") : List.of(),
          r.hasPath("admin") ? r.getStringList("admin") : List.of()));
    }
    Duration refresh = config.getDuration(ACCESS + "token-refresh-interval");
    check(config, ACCESS + "token-refresh-interval", !refresh.isNegative() && !refresh.isZero(),
        "a positive duration");
    return new Access(enabled, digests, rules, files, refresh);
  }

  private static Limits limits(Config config) {
    int calls = config.getInt(LIMITS + "max-concurrent-calls-per-connection");
    check(config, LIMITS + "max-concurrent-calls-per-connection", calls >= 1, "at least 1, got " + calls);
    int message = bytes(config, LIMITS + "max-inbound-message-size", 1024);
    int metadata = bytes(config, LIMITS + "max-inbound-metadata-size", 1024);
    return new Limits(calls, message, metadata,
        duration(config, LIMITS + "max-call-duration", Duration.ofMillis(1)),
        duration(config, LIMITS + "handshake-timeout", Duration.ofMillis(1)),
        duration(config, KEEPALIVE + "time", Duration.ofSeconds(10)),
        duration(config, KEEPALIVE + "timeout", Duration.ofSeconds(1)),
        duration(config, KEEPALIVE + "permit-time", Duration.ZERO),
        config.getBoolean(KEEPALIVE + "permit-without-calls"),
        duration(config, KEEPALIVE + "max-connection-idle", Duration.ZERO),
        duration(config, KEEPALIVE + "max-connection-age", Duration.ZERO),
        duration(config, KEEPALIVE + "max-connection-age-grace", Duration.ZERO));
  }

  /** The hex SHA-256 of a token: tokens are kept, and compared, only as digests. */
  public static String sha256(String token) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
      StringBuilder hex = new StringBuilder();
      for (byte b : digest) {
        hex.append(String.format("%02x", b));
      }
      return hex.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  private static Optional<Path> path(Config config, String key) {
    String value = config.getString(key).trim();
    return value.isEmpty() ? Optional.empty() : Optional.of(Path.of(value).toAbsolutePath().normalize());
  }

  private static int bytes(Config config, String key, long min) {
    long value = config.getBytes(key);
    check(config, key, value >= min && value <= Integer.MAX_VALUE, min + " bytes to 2GiB, got " + value);
    return (int) value;
  }

  private static Duration duration(Config config, String key, Duration min) {
    Duration value = config.getDuration(key);
    boolean valid = value.isZero() || (value.compareTo(min) >= 0 && value.compareTo(Duration.ofDays(30)) <= 0);
    check(config, key, valid, "0 (off) or " + ServerSettings.format(min) + " to 30d, got " + value);
    return value;
  }

  private static Duration positive(Config config, String key, Duration min) {
    Duration value = duration(config, key, min);
    check(config, key, !value.isZero(), ServerSettings.format(min) + " to 30d, got 0");
    return value;
  }

  private static void check(Config config, String key, boolean valid, String expected) {
    if (!valid) {
      throw new ConfigException.BadValue(config.getValue(key).origin(), key, "expected " + expected);
    }
  }
}
