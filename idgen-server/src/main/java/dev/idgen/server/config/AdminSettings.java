package dev.idgen.server.config;

import com.google.errorprone.annotations.Immutable;
import com.typesafe.config.Config;
import dev.idgen.core.Allocator;
import com.typesafe.config.ConfigException;
import java.time.Duration;

/**
 * Settings of {@code idgen.v1.SequenceAdmin}'s calls ({@code idgen.admin} in {@code reference.conf}):
 * typed, validated once at start, immutable.
 *
 * @param maxReserveCount the largest {@code count} one {@code ReserveRange} may ask for
 * @param undeleteWindow how long after {@code DeleteSequence} an {@code UndeleteSequence} brings the sequence
 *     back, and before which a purge is refused
 */
@Immutable
public record AdminSettings(long maxReserveCount, Duration undeleteWindow) {
  public static final String MAX_RESERVE_COUNT = "idgen.admin.max-reserve-count";
  public static final String UNDELETE_WINDOW = "idgen.admin.undelete-window";
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
    if (undeleteWindow.isNegative()) {
      throw new IllegalArgumentException("undeleteWindow: " + undeleteWindow + " (expected: >= 0)");
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
    Duration window = config.hasPath(UNDELETE_WINDOW) ? config.getDuration(UNDELETE_WINDOW)
        : Allocator.DEFAULT_UNDELETE_WINDOW;
    if (window.isNegative()) {
      throw new ConfigException.BadValue(config.origin(), UNDELETE_WINDOW, "a duration >= 0 (e.g. 30d), got " + window);
    }
    return new AdminSettings(max, window);
  }
}
