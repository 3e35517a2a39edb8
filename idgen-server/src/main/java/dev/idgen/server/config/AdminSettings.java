package dev.idgen.server.config;

import com.google.errorprone.annotations.Immutable;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;

/**
 * Settings of {@code idgen.v1.SequenceAdmin}'s calls ({@code idgen.admin} in {@code reference.conf}):
 * typed, validated once at start, immutable.
 *
 * @param maxReserveCount the largest {@code count} one {@code ReserveRange} may ask for
 */
@Immutable
public record AdminSettings(long maxReserveCount) {
  public static final String MAX_RESERVE_COUNT = "idgen.admin.max-reserve-count";
  /**
   * The default: ten times the ten-million-ID import that reservations are for, and under 5 % of a
   * 32-bit sequence, so that a mistyped count cannot burn a sequence's space in one call (a reservation
   * is never undone).
   */
  public static final long DEFAULT_MAX_RESERVE_COUNT = 100_000_000L;

  public AdminSettings {
    if (maxReserveCount < 1) {
      throw new IllegalArgumentException("maxReserveCount: " + maxReserveCount + " (expected: >= 1)");
    }
  }

  /**
   * Reads and validates the settings; a configuration without {@code idgen.admin} gets the defaults.
   *
   * @throws ConfigException naming the key and what was expected
   */
  public static AdminSettings from(Config config) {
    long max = config.hasPath(MAX_RESERVE_COUNT) ? config.getLong(MAX_RESERVE_COUNT) : DEFAULT_MAX_RESERVE_COUNT;
    if (max < 1) {
      throw new ConfigException.BadValue(config.origin(), MAX_RESERVE_COUNT, "1 to " + Long.MAX_VALUE + ", got " + max);
    }
    return new AdminSettings(max);
  }
}
