package dev.idgen.core.store.embedded;

import dev.idgen.core.Confirmations;
import dev.idgen.core.RangeStore;
import dev.idgen.core.WallClock;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import javax.annotation.Nullable;

/**
 * The servers' announcements ({@link RangeStore#announce}): table {@code servers}, one row per server name,
 * with the floor-log version it applied, when the announcement expires, and until when client leases it handed
 * out may still be used. What an advance waits for is read here ({@link #unconfirmed}, {@link #confirmations}).
 *
 * <p>Times are wall-clock milliseconds of {@code wall} (processes sharing the file share the machine's
 * clock), injectable so that tests can step it. Thread-safe and stateless but for the clock; every method
 * runs in the caller's transaction, on the {@link Session} it is given.
 */
final class ServerTable {
  private final WallClock wall;

  ServerTable(WallClock wall) {
    this.wall = wall;
  }

  /** Writes the server's announcement, replacing any earlier one under its name. */
  void announce(Session db, String server, UUID incarnation, long appliedVersion, Duration lease,
      @Nullable Duration leasesOutstanding) throws SQLException {
    PreparedStatement upsert = db.prepare("INSERT OR REPLACE INTO servers (server, incarnation, applied,"
        + " expires_at_millis, leases_until_millis) VALUES (?, ?, ?, ?, ?)");
    long now = wall.millis();
    upsert.setString(1, server);
    upsert.setString(2, incarnation.toString());
    upsert.setLong(3, appliedVersion);
    upsert.setLong(4, now + lease.toMillis());
    if (leasesOutstanding == null) {
      upsert.setNull(5, Types.INTEGER);
    } else {
      upsert.setLong(5, now + leasesOutstanding.toMillis() + 1); // rounded up
    }
    upsert.executeUpdate();
  }

  /** Deletes the server's announcement if it is still this incarnation's. */
  static void withdraw(Session db, String server, UUID incarnation) throws SQLException {
    PreparedStatement delete = db.prepare("DELETE FROM servers WHERE server = ? AND incarnation = ?");
    delete.setString(1, server);
    delete.setString(2, incarnation.toString());
    delete.executeUpdate();
  }

  /** The live servers that have not applied floor-log {@code version}, as {@code datacenter/name}. */
  List<String> unconfirmed(Session db, String datacenter, long version) throws SQLException {
    PreparedStatement select = db.prepare("SELECT server FROM servers WHERE applied < ? AND expires_at_millis > ?"
        + " ORDER BY server");
    select.setLong(1, version);
    select.setLong(2, wall.millis());
    List<String> out = new ArrayList<>();
    try (ResultSet rs = select.executeQuery()) {
      while (rs.next()) {
        out.add(datacenter + "/" + rs.getString(1));
      }
    }
    return out;
  }

  /**
   * {@code pending}, with the longest client lease time the live servers announced: empty if one of them
   * (a server of an older version) said nothing.
   */
  Confirmations confirmations(Session db, List<String> pending) throws SQLException {
    PreparedStatement select = db.prepare("SELECT count(*) - count(leases_until_millis), max(leases_until_millis)"
        + " FROM servers WHERE expires_at_millis > ?");
    long now = wall.millis();
    select.setLong(1, now);
    try (ResultSet rs = select.executeQuery()) {
      rs.next();
      if (rs.getLong(1) > 0) {
        return new Confirmations(pending, Optional.empty()); // a server of an older version said nothing
      }
      long until = rs.getLong(2);
      return new Confirmations(pending, Optional.of(Duration.ofMillis(Math.max(0, until - now))));
    }
  }
}
