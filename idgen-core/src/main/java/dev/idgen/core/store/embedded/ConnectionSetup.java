package dev.idgen.core.store.embedded;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Runs on every connection the store opens, after the store's own settings: a seam for tests
 * ({@code PRAGMA max_page_count}, which makes SQLite fail with {@code SQLITE_FULL} as a full disk does).
 */
@FunctionalInterface
interface ConnectionSetup {
  ConnectionSetup NONE = connection -> {};

  void apply(Connection connection) throws SQLException;

  /**
   * How long a connection waits for another process to let go of the file ({@code busy_timeout}) before
   * giving up: {@link Connections#BUSY_TIMEOUT_MILLIS} but in tests that wait it out on purpose.
   */
  default int busyTimeoutMillis() {
    return Connections.BUSY_TIMEOUT_MILLIS;
  }
}
