package dev.idgen.server;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import dev.idgen.core.RangeStore;
import dev.idgen.core.store.cassandra.CassandraRangeStore;
import dev.idgen.core.store.cassandra.CassandraSettings;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Binds the Cassandra {@link RangeStore}, configured by {@code idgen.cassandra.*}. {@link IdGenServer}
 * closes it at shutdown, after the allocator.
 */
final class CassandraStoreModule extends AbstractModule {
  private static final String PREFIX = "idgen.cassandra.";

  private final CassandraSettings settings;

  CassandraStoreModule(CassandraSettings settings) {
    this.settings = settings;
  }

  @Provides
  @Singleton
  RangeStore store(MeterRegistry registry) {
    // Connects eagerly (Stage.PRODUCTION): an unreachable cluster fails the start before the port binds.
    // The driver reports its own metrics (cassandra_*) into the server's registry.
    return CassandraRangeStore.connect(settings, registry);
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
          config.getBoolean(PREFIX + "tls.enabled"),
          optional(config.getString(PREFIX + "tls.truststore")).map(Path::of),
          optional(config.getString(PREFIX + "tls.truststore-password")),
          config.getDuration(PREFIX + "request-timeout"),
          config.getDuration(PREFIX + "cas-deadline"),
          config.getDouble(PREFIX + "pool-refill-step"),
          config.getDuration(PREFIX + "floor-refresh"),
          config.getDuration(PREFIX + "isolation-runway"));
    } catch (IllegalArgumentException e) {
      // CassandraSettings names the key in its messages.
      throw new ConfigException.Generic(e.getMessage(), e);
    }
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
