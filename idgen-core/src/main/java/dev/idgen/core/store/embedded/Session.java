package dev.idgen.core.store.embedded;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

/**
 * The connection and its prepared statements.
 *
 * <p>Not thread-safe: only the thread that holds the lock of {@link Transactions} uses it, which hands it to
 * the work it runs (so that the rooms that do the work need no access to guarded fields).
 */
final class Session {
  final Connection connection;
  /** Prepared once per SQL text: parsing dominates a reserve otherwise. */
  private final Map<String, PreparedStatement> statements = new HashMap<>();

  Session(Connection connection) {
    this.connection = connection;
  }

  PreparedStatement prepare(String sql) throws SQLException {
    PreparedStatement s = statements.get(sql);
    if (s == null) {
      s = connection.prepareStatement(sql);
      statements.put(sql, s);
    }
    return s;
  }

  void execute(String sql) throws SQLException {
    prepare(sql).execute();
  }

  void close() throws SQLException {
    for (PreparedStatement s : statements.values()) {
      s.close();
    }
    statements.clear();
    connection.close();
  }

  /** Work that runs under the lock of {@link Transactions}, on the session it is given. */
  @FunctionalInterface
  interface Work<T> {
    T run(Session db) throws SQLException;
  }
}
