package dev.idgen.server;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigRenderOptions;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import dev.idgen.core.RangeStore;
import dev.idgen.core.store.cassandra.CassandraRangeStore;
import dev.idgen.core.store.cassandra.CassandraSettings;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Binds the Cassandra {@link RangeStore}, configured by {@code idgen.cassandra.*} and the
 * {@code datastax-java-driver} block. {@link IdGenServer} closes it at shutdown, after the allocator.
 */
final class CassandraStoreModule extends AbstractModule {
  private static final String PREFIX = "idgen.cassandra.";
  /** The driver's own options, passed to it as they are (except what idgen pins). */
  static final String DRIVER_ROOT = "datastax-java-driver";

  private final CassandraSettings settings;

  CassandraStoreModule(CassandraSettings settings) {
    this.settings = settings;
  }

  @Provides
  @Singleton
  RangeStore store(MeterRegistry registry) {
    // Connects in the background: the server starts, reports NOT_SERVING, and SERVING once the store
    // answers (IdGenServer), so that a pod started before Cassandra waits for it instead of crash-looping.
    // The driver reports its own metrics (cassandra_*) into the server's registry.
    return CassandraRangeStore.open(settings, registry);
  }

  /**
   * Reads {@code idgen.cassandra.*}. Throws {@link ConfigException} naming the key of a bad value, so
   * that {@code Main} reports it as a configuration error.
   */
  static CassandraSettings settings(Config config) {
    try {
      return new CassandraSettings(
          contactPoints(config),
          config.getString(PREFIX + "local-datacenter").trim(),
          config.getString(PREFIX + "keyspace").trim(),
          config.getBoolean(PREFIX + "create-schema"),
          replication(config),
          optional(config.getString(PREFIX + "username")),
          optional(config.getString(PREFIX + "password")),
          tls(config),
          config.getDuration(PREFIX + "request-timeout"),
          config.getDuration(PREFIX + "cas-deadline"),
          config.getDouble(PREFIX + "pool-refill-step"),
          config.getDuration(PREFIX + "floor-refresh"),
          config.getDuration(PREFIX + "isolation-runway"),
          driverBlock(config));
    } catch (IllegalArgumentException e) {
      // CassandraSettings names the key in its messages.
      throw new ConfigException.Generic(e.getMessage(), e);
    }
  }

  /** {@code idgen.cassandra.tls}; the stores' files must be readable when TLS is on. */
  private static CassandraSettings.Tls tls(Config config) {
    String tls = PREFIX + "tls.";
    boolean enabled = config.getBoolean(tls + "enabled");
    Optional<Path> truststore = optional(config.getString(tls + "truststore")).map(Path::of);
    Optional<Path> keystore = optional(config.getString(tls + "keystore")).map(Path::of);
    if (enabled) {
      readable(config, tls + "truststore", truststore);
      readable(config, tls + "keystore", keystore);
    }
    return new CassandraSettings.Tls(enabled, truststore, optional(config.getString(tls + "truststore-password")),
        keystore, optional(config.getString(tls + "keystore-password")),
        config.getBoolean(tls + "hostname-validation"));
  }

  private static void readable(Config config, String key, Optional<Path> file) {
    if (file.isPresent() && !Files.isReadable(file.get())) {
      throw new ConfigException.BadValue(config.getValue(key).origin(), key,
          "a readable JKS or PKCS#12 file (TLS is enabled), got " + file.get());
    }
  }

  /**
   * The {@code datastax-java-driver} block as the user wrote it (file, environment, system properties:
   * {@link dev.idgen.server.config.ConfigLoader} leaves the driver's own defaults out), rendered as HOCON for
   * the driver; empty if there is none. {@link CassandraSettings} checks it.
   */
  private static String driverBlock(Config config) {
    if (!config.hasPath(DRIVER_ROOT)) {
      return "";
    }
    return config.getConfig(DRIVER_ROOT).root().render(ConfigRenderOptions.concise());
  }

  /** A list of "host:port", or one comma-separated string (as an environment variable gives it). */
  private static List<String> contactPoints(Config config) {
    String key = PREFIX + "contact-points";
    ConfigValue value = config.getValue(key);
    List<String> out = new ArrayList<>();
    if (value.valueType() == ConfigValueType.STRING) {
      for (String part : config.getString(key).split(",")) {
        if (!part.isBlank()) {
          out.add(part.trim());
        }
      }
    } else {
      for (String cp : config.getStringList(key)) {
        out.add(cp.trim());
      }
    }
    return out;
  }

  private static Map<String, Integer> replication(Config config) {
    Map<String, Integer> out = new TreeMap<>();
    Config replication = config.getConfig(PREFIX + "replication");
    for (Map.Entry<String, ConfigValue> e : replication.root().entrySet()) {
      out.put(e.getKey(), replication.getInt(e.getKey()));
    }
    return out;
  }

  private static Optional<String> optional(String s) {
    return s.isEmpty() ? Optional.empty() : Optional.of(s);
  }

}
