package dev.idgen.server.config;

import com.google.errorprone.annotations.Immutable;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import dev.idgen.core.SequenceDefinition;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * The server's settings: typed, validated once at start, immutable. Each field is one key of
 * {@code reference.conf}, where its meaning and default are documented.
 */
@Immutable
public record ServerSettings(
    String grpcHost,
    int grpcPort,
    StoreKind store,
    Path embeddedDir,
    long maxIdsPerCall,
    Duration outageRunway,
    long minNodeBlock,
    double refillStep,
    Duration maxWait,
    Duration quietPeriod,
    Duration shutdownTimeout,
    Duration giveBackDeadline,
    String serverName,
    Duration serverLease,
    Duration advanceConfirmTimeout,
    Duration clientLeaseLifetime,
    int maxWaitingCalls,
    Duration unloadIdleAfter,
    String advertiseAddress,
    Duration ownerLease,
    double ownerLeaseMargin,
    int forwardedInFlight) {

  public static final String GRPC_HOST = "idgen.grpc.host";
  public static final String GRPC_PORT = "idgen.grpc.port";
  public static final String STORE = "idgen.store";
  public static final String EMBEDDED_DIR = "idgen.embedded.dir";
  public static final String MAX_IDS_PER_CALL = "idgen.limits.max-ids-per-call";
  public static final String OUTAGE_RUNWAY = "idgen.allocator.outage-runway";
  public static final String MIN_NODE_BLOCK = "idgen.allocator.min-node-block";
  public static final String REFILL_STEP = "idgen.allocator.refill-step";
  public static final String UNLOAD_IDLE_AFTER = "idgen.allocator.unload-idle-after";
  public static final String MAX_WAIT = "idgen.allocator.max-wait";
  public static final String QUIET_PERIOD = "idgen.shutdown.quiet-period";
  public static final String SHUTDOWN_TIMEOUT = "idgen.shutdown.timeout";
  public static final String GIVE_BACK_DEADLINE = "idgen.shutdown.give-back-deadline";
  public static final String SERVER_NAME = "idgen.server-name";
  public static final String SERVER_LEASE = "idgen.advance.server-lease";
  public static final String ADVANCE_CONFIRM_TIMEOUT = "idgen.advance.confirm-timeout";
  public static final String CLIENT_LEASE_LIFETIME = "idgen.advance.client-lease-lifetime";
  public static final String MAX_WAITING_CALLS = "idgen.limits.max-waiting-calls";
  public static final String ADVERTISE_ADDRESS = "idgen.grpc.advertise-address";
  public static final String OWNER_LEASE = "idgen.strict.owner-lease";
  /** A fraction of the owner lease. */
  public static final String OWNER_LEASE_MARGIN = "idgen.strict.owner-lease-margin";
  public static final String FORWARDED_IN_FLIGHT = "idgen.strict.forwarded-in-flight";

  /** The largest per-call limit: a single call should not be able to take a whole sequence's blocks. */
  static final long MAX_IDS_PER_CALL_LIMIT = SequenceDefinition.MAX_BLOCK_SIZE;

  /** The longest duration any setting accepts. */
  static final Duration MAX_DURATION = Duration.ofDays(1);

  /** Where sequences are kept ({@code idgen.store}). */
  public enum StoreKind {
    EMBEDDED,
    CASSANDRA;

    /** The name used in configuration files. */
    String configName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  public ServerSettings {
    Objects.requireNonNull(grpcHost, "grpcHost");
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(embeddedDir, "embeddedDir");
    Objects.requireNonNull(outageRunway, "outageRunway");
    Objects.requireNonNull(unloadIdleAfter, "unloadIdleAfter");
    Objects.requireNonNull(maxWait, "maxWait");
    Objects.requireNonNull(quietPeriod, "quietPeriod");
    Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    Objects.requireNonNull(giveBackDeadline, "giveBackDeadline");
    Objects.requireNonNull(serverName, "serverName");
    Objects.requireNonNull(serverLease, "serverLease");
    Objects.requireNonNull(advanceConfirmTimeout, "advanceConfirmTimeout");
    Objects.requireNonNull(clientLeaseLifetime, "clientLeaseLifetime");
    Objects.requireNonNull(advertiseAddress, "advertiseAddress");
    Objects.requireNonNull(ownerLease, "ownerLease");
  }

  /**
   * Where other servers reach this one to forward calls of the strict sequences it owns: host:port.
   * {@code idgen.grpc.advertise-address} (its port, or the bound one when it names none); else the bound
   * address when {@code idgen.grpc.host} names one, else the host name, with the bound port.
   */
  public String effectiveAdvertiseAddress(int boundPort) {
    if (!advertiseAddress.isEmpty()) {
      return hasPort(advertiseAddress) ? advertiseAddress : advertiseAddress + ":" + boundPort;
    }
    boolean wildcard = grpcHost.equals("0.0.0.0") || grpcHost.equals("::") || grpcHost.equals("[::]");
    String host = grpcHost;
    if (wildcard) {
      try {
        host = java.net.InetAddress.getLocalHost().getHostName();
      } catch (java.io.IOException e) {
        host = "localhost";
      }
    }
    return (host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + boundPort;
  }

  private static boolean hasPort(String address) {
    int colon = address.lastIndexOf(':');
    return colon > 0 && colon > address.lastIndexOf(']') && address.indexOf(':') == colon;
  }

  /**
   * This server's name among the store's live servers: {@code idgen.server-name}, or the host name and
   * the gRPC port. A restart under the same name replaces the old process's announcement at once.
   */
  public String effectiveServerName(int boundPort) {
    if (!serverName.isEmpty()) {
      return serverName;
    }
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.io.IOException e) {
      host = "localhost";
    }
    return host + ":" + boundPort;
  }

  /**
   * Reads and validates the settings from a resolved configuration (see {@link ConfigLoader}).
   *
   * @throws ConfigException naming the key, where it was set, and what was expected
   */
  public static ServerSettings from(Config config) {
    String host = config.getString(GRPC_HOST).trim();
    check(config, GRPC_HOST, !host.isEmpty(), "an address or host name, e.g. \"0.0.0.0\"");

    int port = config.getInt(GRPC_PORT);
    check(config, GRPC_PORT, port >= 0 && port <= 65535, "0 to 65535 (0: any free port), got " + port);

    String storeName = config.getString(STORE);
    StoreKind store = null;
    for (StoreKind kind : StoreKind.values()) {
      if (kind.configName().equals(storeName)) {
        store = kind;
      }
    }
    check(config, STORE, store != null, "embedded or cassandra, got \"" + storeName + "\"");

    String dirName = config.getString(EMBEDDED_DIR);
    check(config, EMBEDDED_DIR, !dirName.isBlank(), "a directory, got an empty string");
    Path dir;
    try {
      dir = Path.of(dirName).toAbsolutePath().normalize();
    } catch (InvalidPathException e) {
      throw new ConfigException.BadValue(config.origin(), EMBEDDED_DIR, "not a valid path: " + e.getMessage());
    }

    long maxIds = config.getLong(MAX_IDS_PER_CALL);
    check(config, MAX_IDS_PER_CALL, maxIds >= 1 && maxIds <= MAX_IDS_PER_CALL_LIMIT,
        "1 to " + MAX_IDS_PER_CALL_LIMIT + ", got " + maxIds);

    Duration runway = duration(config, OUTAGE_RUNWAY, Duration.ofMillis(1));

    long minBlock = config.getLong(MIN_NODE_BLOCK);
    check(config, MIN_NODE_BLOCK, minBlock >= 1 && minBlock <= SequenceDefinition.MAX_BLOCK_SIZE,
        "1 to " + SequenceDefinition.MAX_BLOCK_SIZE + ", got " + minBlock);

    double step = config.getDouble(REFILL_STEP);
    check(config, REFILL_STEP, step > 0 && step <= 4, "above 0 and at most 4, got " + step);

    Duration maxWait = duration(config, MAX_WAIT, Duration.ZERO);
    Duration quiet = duration(config, QUIET_PERIOD, Duration.ZERO);
    Duration timeout = duration(config, SHUTDOWN_TIMEOUT, Duration.ZERO);
    Duration giveBack = duration(config, GIVE_BACK_DEADLINE, Duration.ZERO);

    String serverName = config.getString(SERVER_NAME).trim();
    Duration serverLease = duration(config, SERVER_LEASE, Duration.ofSeconds(4));
    Duration confirmTimeout = duration(config, ADVANCE_CONFIRM_TIMEOUT, Duration.ZERO);
    Duration clientLease = duration(config, CLIENT_LEASE_LIFETIME, Duration.ZERO);
    int maxWaiting = config.getInt(MAX_WAITING_CALLS);
    check(config, MAX_WAITING_CALLS, maxWaiting >= 1 && maxWaiting <= 1_000_000,
        "1 to 1000000, got " + maxWaiting);

    Duration unloadIdle = duration(config, UNLOAD_IDLE_AFTER, Duration.ZERO);
    String advertise = config.getString(ADVERTISE_ADDRESS).trim();
    Duration ownerLease = duration(config, OWNER_LEASE, Duration.ofSeconds(1));
    double ownerMargin = config.getDouble(OWNER_LEASE_MARGIN);
    check(config, OWNER_LEASE_MARGIN, ownerMargin >= 0 && ownerMargin < 0.5,
        "a fraction of " + OWNER_LEASE + " from 0 to below 0.5, got " + ownerMargin);
    int forwardedInFlight = config.getInt(FORWARDED_IN_FLIGHT);
    check(config, FORWARDED_IN_FLIGHT, forwardedInFlight >= 1 && forwardedInFlight <= 64,
        "1 to 64, got " + forwardedInFlight);
    return new ServerSettings(host, port, store, dir, maxIds, runway, minBlock, step, maxWait, quiet,
        timeout, giveBack, serverName, serverLease, confirmTimeout, clientLease, maxWaiting, unloadIdle, advertise, ownerLease,
        ownerMargin, forwardedInFlight);
  }

  /** A one-line description of the store, for the start-up log. */
  public String describeStore() {
    return store == StoreKind.EMBEDDED ? "embedded store in " + embeddedDir : store.configName() + " store";
  }

  /**
   * A duration of at least {@code min} and at most a day: longer makes no sense for any of ours, and the
   * bound keeps every conversion to nanoseconds (which overflows after 292 years) safe.
   */
  private static Duration duration(Config config, String key, Duration min) {
    Duration value = config.getDuration(key);
    boolean valid = value.compareTo(min) >= 0 && value.compareTo(MAX_DURATION) <= 0;
    check(config, key, valid, format(min) + " to " + format(MAX_DURATION) + ", got " + iso(value));
    return value;
  }

  /** A duration as a person (and HOCON) writes it: "1s", "250ms", rather than "PT1S". */
  public static String format(Duration duration) {
    if (duration.getNano() % 1_000_000 != 0 || duration.abs().compareTo(MAX_DURATION) > 0) {
      return iso(duration); // sub-millisecond or out of range: rare, and exact this way
    }
    long millis = duration.toMillis();
    if (millis != 0 && millis % 86_400_000 == 0) {
      return millis / 86_400_000 + "d";
    }
    return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
  }

  /** "PT8760H" as "8760h". */
  private static String iso(Duration duration) {
    return duration.toString().substring(2).toLowerCase(Locale.ROOT);
  }

  private static void check(Config config, String key, boolean valid, String expected) {
    if (!valid) {
      // BadValue's message reads "<file>: <line>: Invalid value at '<key>': expected …".
      throw new ConfigException.BadValue(config.getValue(key).origin(), key, "expected " + expected);
    }
  }

  /** {@link #ownerLeaseMargin} as a duration: that fraction of the owner lease. */
  public Duration ownerLeaseMarginDuration() {
    return Duration.ofNanos((long) (ownerLease.toNanos() * ownerLeaseMargin));
  }
}
