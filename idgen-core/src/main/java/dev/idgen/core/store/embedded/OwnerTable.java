package dev.idgen.core.store.embedded;

import dev.idgen.core.OwnerRecord;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import java.util.UUID;
import javax.annotation.Nullable;

/**
 * The owner rows of strict sequences: table {@code owners}, one row per sequence, replaced by compare and
 * set within a write transaction (the store's write lock makes the compare and the set one step).
 *
 * <p>Stateless: every method runs in the caller's transaction, on the {@link Session} it is given.
 */
final class OwnerTable {
  private OwnerTable() {}

  static Optional<OwnerRecord> row(Session db, String name) throws SQLException {
    PreparedStatement select = db.prepare("SELECT server, incarnation, target, epoch, version FROM owners"
        + " WHERE name = ?");
    select.setString(1, name);
    try (ResultSet rs = select.executeQuery()) {
      if (!rs.next()) {
        return Optional.empty();
      }
      return Optional.of(new OwnerRecord(rs.getString(1), UUID.fromString(rs.getString(2)), rs.getString(3),
          rs.getLong(4), UUID.fromString(rs.getString(5))));
    }
  }

  /** Writes {@code next} if the row is still {@code expected} (null: none); whether it did. */
  static boolean replace(Session db, String name, @Nullable OwnerRecord expected, OwnerRecord next)
      throws SQLException {
    Optional<OwnerRecord> now = row(db, name);
    if (!now.equals(Optional.ofNullable(expected))) {
      return false;
    }
    PreparedStatement upsert = db.prepare("INSERT OR REPLACE INTO owners"
        + " (name, server, incarnation, target, epoch, version) VALUES (?, ?, ?, ?, ?, ?)");
    upsert.setString(1, name);
    upsert.setString(2, next.server());
    upsert.setString(3, next.incarnation().toString());
    upsert.setString(4, next.target());
    upsert.setLong(5, next.epoch());
    upsert.setString(6, next.version().toString());
    upsert.executeUpdate();
    return true;
  }
}
