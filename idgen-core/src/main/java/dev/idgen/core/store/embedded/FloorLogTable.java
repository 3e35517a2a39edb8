package dev.idgen.core.store.embedded;

import dev.idgen.core.FloorLog;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The floor log: table {@code floor_log}, every advance in the order of its version (SQLite's autoincrement
 * row id). Processes that share the file read it to learn each other's advances ({@link FloorLog}), and
 * confirm the version they applied in their announcements ({@link ServerTable}).
 *
 * <p>Stateless: every method runs in the caller's transaction, on the {@link Session} it is given.
 */
final class FloorLogTable {
  /** The most changes one read returns; the reader asks again from the last one. */
  private static final int PAGE = 10_000;

  private FloorLogTable() {}

  /** Logs an advance, in its transaction: a process that reads the entry reserves above the floor. Its version. */
  static long append(Session db, String name, long floor) throws SQLException {
    PreparedStatement logged = db.prepare("INSERT INTO floor_log (name, floor) VALUES (?, ?)");
    logged.setString(1, name);
    logged.setLong(2, floor);
    logged.executeUpdate();
    try (ResultSet rs = db.prepare("SELECT last_insert_rowid()").executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The highest floor advanced for the sequence; {@link Long#MIN_VALUE} if none. */
  static long floorOf(Session db, String name) throws SQLException {
    PreparedStatement select = db.prepare("SELECT max(floor) FROM floor_log WHERE name = ?");
    select.setString(1, name);
    try (ResultSet rs = select.executeQuery()) {
      if (!rs.next()) {
        return Long.MIN_VALUE;
      }
      long f = rs.getLong(1);
      return rs.wasNull() ? Long.MIN_VALUE : f;
    }
  }

  /** The changes after {@code afterVersion}, in version order. */
  static FloorLog after(Session db, long afterVersion) throws SQLException {
    PreparedStatement select = db.prepare("SELECT version, name, floor FROM floor_log WHERE version > ?"
        + " ORDER BY version LIMIT " + PAGE);
    select.setLong(1, afterVersion);
    List<FloorLog.Change> changes = new ArrayList<>();
    try (ResultSet rs = select.executeQuery()) {
      while (rs.next()) {
        changes.add(new FloorLog.Change(rs.getLong(1), rs.getString(2), rs.getLong(3)));
      }
    }
    long version = changes.isEmpty() ? afterVersion : changes.get(changes.size() - 1).version();
    return new FloorLog(version, changes, true);
  }
}
