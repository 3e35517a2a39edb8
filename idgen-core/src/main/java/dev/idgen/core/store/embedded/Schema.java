package dev.idgen.core.store.embedded;

import dev.idgen.core.RangeStore;
import dev.idgen.core.StoreUnavailableException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tables of the embedded store and their migrations. The file says what it is in its header:
 * {@code PRAGMA application_id} ({@value #APPLICATION_ID}, "idgn", so that another SQLite file is never
 * mistaken for ours) and {@code PRAGMA user_version} (the schema version, {@value #VERSION}).
 *
 * <pre>
 * sequences (name)                  the definitions: created once, changed by updates, deletes, undeletes
 * stripes (name, stripe)            how many of each stripe's IDs are reserved; the owner epoch (fence)
 * returned (name, stripe, from)     IDs given back at graceful stops, reserved again first
 * owners (name)                     the owner rows of strict sequences
 * floor_log (version)               every advance, read by the processes that share the file
 * servers (server)                  their announcements: floor-log version applied, lease, client leases
 * reservations (name, first)        ranges ReserveRange handed to callers, by request id too
 * </pre>
 *
 * <p>Stateless; {@link #migrate} runs once per store, on its first connection, in one write transaction.
 */
final class Schema {
  /** Stored in {@code PRAGMA user_version}; bump it with a migration when the tables change. */
  static final int VERSION = 7;
  /** Stored in {@code PRAGMA application_id} ("idgn"), so that another SQLite file is never mistaken for ours. */
  static final int APPLICATION_ID = 0x6964676e;

  private static final Logger logger = LoggerFactory.getLogger(EmbeddedRangeStore.class);

  private Schema() {}

  /** Creates the schema in a new file, upgrades an older one, and refuses files that are not (or not yet) ours. */
  static void migrate(Path file, Connection connection) throws SQLException {
    try (Statement s = connection.createStatement()) {
      s.execute("BEGIN IMMEDIATE"); // two processes opening a new store at once create it once
      boolean committed = false;
      try {
        migrateIn(file, s);
        s.execute("COMMIT");
        committed = true;
      } finally {
        if (!committed) {
          try {
            s.execute("ROLLBACK");
          } catch (SQLException ignored) {
            // The original failure is what matters; closing the connection ends the transaction.
          }
        }
      }
    }
  }

  private static void migrateIn(Path file, Statement s) throws SQLException {
    int applicationId = queryInt(s, "PRAGMA application_id");
    int version = queryInt(s, "PRAGMA user_version");
    int tables = queryInt(s, "SELECT count(*) FROM sqlite_schema");
    if (applicationId == 0 && version == 0 && tables == 0) {
      create(s);
      logger.info("Created embedded store {} (schema version {})", file, VERSION);
    } else if (applicationId == APPLICATION_ID && version >= 1 && version < VERSION) {
      upgrade(s, version);
      logger.info("Upgraded embedded store {} to schema version {}", file, VERSION);
    } else if (applicationId == APPLICATION_ID && version == VERSION) {
      // Unchanged, but written: a store that cannot be written (a read-only or full file system) is
      // refused now, at start, rather than serving nothing and failing every call.
      s.execute("PRAGMA user_version = " + VERSION);
    } else if (applicationId != APPLICATION_ID) {
      throw new StoreUnavailableException("embedded store " + file + ": it is not an idgen store "
          + "(a SQLite database with application_id " + applicationId + " and " + tables
          + " tables, expected application_id " + APPLICATION_ID + ")");
    } else if (version > VERSION) {
      throw new StoreUnavailableException("embedded store " + file + ": it was written by a newer "
          + "idgen (schema version " + version + "; this version reads up to " + VERSION + ")");
    } else {
      throw new StoreUnavailableException("embedded store " + file + ": schema version " + version
          + " is invalid (expected: 1 to " + VERSION + ")");
    }
  }

  /** The schema of a new, empty file. */
  private static void create(Statement s) throws SQLException {
    s.execute("CREATE TABLE sequences ("
        + " name TEXT NOT NULL PRIMARY KEY,"
        + " start INTEGER NOT NULL,"
        + " max INTEGER NOT NULL,"
        + " stripes INTEGER NOT NULL,"
        + " node_block_size INTEGER NOT NULL,"
        + " dc_block_size INTEGER NOT NULL,"
        + " created_at INTEGER" // epoch milliseconds; NULL for sequences created before version 3
        + ") WITHOUT ROWID");
    // reserved: how many of the stripe's IDs are reserved, an index, never an ID.
    s.execute("CREATE TABLE stripes ("
        + " name TEXT NOT NULL REFERENCES sequences (name),"
        + " stripe INTEGER NOT NULL,"
        + " reserved INTEGER NOT NULL CHECK (reserved >= 0),"
        + " PRIMARY KEY (name, stripe)"
        + ") WITHOUT ROWID");
    createFloorTables(s);
    addOrdering(s);
    addLeases(s);
    addReservations(s);
    addLifecycle(s);
    s.execute("PRAGMA application_id = " + APPLICATION_ID);
    s.execute("PRAGMA user_version = " + VERSION);
  }

  /** From {@code version} (1 to 6) to {@link #VERSION}. */
  private static void upgrade(Statement s, int version) throws SQLException {
    if (version == 1) {
      createFloorTables(s);
    }
    if (version <= 2) {
      // Version 3: the creation time (SequenceAdmin's Sequence.create_time); unknown for older rows.
      s.execute("ALTER TABLE sequences ADD COLUMN created_at INTEGER");
    }
    if (version <= 3) {
      addOrdering(s);
    }
    if (version <= 4) {
      addLeases(s);
    }
    // Both also run on a version 6 file: a development build of version 7's change marked its files 6
    // with the sequences' new columns but without version 6's reservations table (see addLifecycle).
    addReservations(s);
    addLifecycle(s);
    s.execute("PRAGMA user_version = " + VERSION);
  }

  /**
   * Schema version 7: a sequence's life after its creation: the definition's version (the API's etag; 1 for
   * older rows), when it was deleted and until when it can be restored (epoch millis; NULL: live), and
   * whether it was purged (a tombstone that keeps the name taken). A column already there is kept: a
   * development build of this change wrote these columns into files it marked version 6.
   */
  private static void addLifecycle(Statement s) throws SQLException {
    Set<String> columns = columns(s, "sequences");
    addColumnIfMissing(s, columns, "version", "INTEGER NOT NULL DEFAULT 1");
    addColumnIfMissing(s, columns, "deleted_at", "INTEGER");
    addColumnIfMissing(s, columns, "expires_at", "INTEGER");
    addColumnIfMissing(s, columns, "purged", "INTEGER NOT NULL DEFAULT 0");
  }

  private static void addColumnIfMissing(Statement s, Set<String> columns, String column, String type)
      throws SQLException {
    if (!columns.contains(column)) {
      s.execute("ALTER TABLE sequences ADD COLUMN " + column + " " + type);
    }
  }

  private static Set<String> columns(Statement s, String table) throws SQLException {
    Set<String> columns = new HashSet<>();
    try (ResultSet rs = s.executeQuery("PRAGMA table_info(" + table + ")")) {
      while (rs.next()) {
        columns.add(rs.getString("name"));
      }
    }
    return columns;
  }

  /**
   * Schema version 4: the ordering of each sequence (sequences of older versions are PER_SERVER), the
   * owner rows of strict sequences, and the highest owner epoch that reserved from each stripe (the fence).
   */
  private static void addOrdering(Statement s) throws SQLException {
    s.execute("ALTER TABLE sequences ADD COLUMN ordering TEXT NOT NULL DEFAULT 'PER_SERVER'");
    s.execute("ALTER TABLE sequences ADD COLUMN home_datacenter TEXT NOT NULL DEFAULT ''");
    s.execute("ALTER TABLE stripes ADD COLUMN owner_epoch INTEGER NOT NULL DEFAULT 0");
    s.execute("CREATE TABLE IF NOT EXISTS owners ("
        + " name TEXT NOT NULL PRIMARY KEY REFERENCES sequences (name),"
        + " server TEXT NOT NULL,"
        + " incarnation TEXT NOT NULL,"
        + " target TEXT NOT NULL,"
        + " epoch INTEGER NOT NULL,"
        + " version TEXT NOT NULL"
        + ") WITHOUT ROWID");
  }

  /**
   * Schema version 5: until when (wall-clock millis: processes sharing the file share the machine's clock)
   * client leases a server handed out below the floors it applied may be used; NULL from older servers.
   */
  private static void addLeases(Statement s) throws SQLException {
    s.execute("ALTER TABLE servers ADD COLUMN leases_until_millis INTEGER");
  }

  /**
   * Schema version 6: the ranges {@code ReserveRange} handed to callers, one row each, found by their first ID
   * (listings) and by their request id (a retry returns the same range).
   */
  private static void addReservations(Statement s) throws SQLException {
    s.execute("CREATE TABLE IF NOT EXISTS reservations ("
        + " name TEXT NOT NULL REFERENCES sequences (name),"
        + " first INTEGER NOT NULL,"
        + " last INTEGER NOT NULL CHECK (last >= first),"
        + " request_id TEXT NOT NULL,"
        + " reserved_by TEXT NOT NULL,"
        + " reserved_at_millis INTEGER NOT NULL,"
        + " PRIMARY KEY (name, first)"
        + ") WITHOUT ROWID");
    s.execute("CREATE UNIQUE INDEX IF NOT EXISTS reservations_by_request ON reservations (name, request_id)");
  }

  /**
   * Schema version 2: the floor log that processes sharing the file read to learn each other's advances,
   * their announcements (see {@link RangeStore#announce}), and the IDs given back at graceful stops.
   */
  private static void createFloorTables(Statement s) throws SQLException {
    s.execute("CREATE TABLE IF NOT EXISTS floor_log ("
        + " version INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,"
        + " name TEXT NOT NULL,"
        + " floor INTEGER NOT NULL)");
    // IDs a server gave back at a graceful stop, by index of their stripe: reserved again first.
    s.execute("CREATE TABLE IF NOT EXISTS returned ("
        + " name TEXT NOT NULL REFERENCES sequences (name),"
        + " stripe INTEGER NOT NULL,"
        + " from_index INTEGER NOT NULL,"
        + " to_index INTEGER NOT NULL CHECK (to_index > from_index),"
        + " PRIMARY KEY (name, stripe, from_index)"
        + ") WITHOUT ROWID");
    s.execute("CREATE TABLE IF NOT EXISTS servers ("
        + " server TEXT NOT NULL PRIMARY KEY,"
        + " incarnation TEXT NOT NULL,"
        + " applied INTEGER NOT NULL,"
        + " expires_at_millis INTEGER NOT NULL"
        + ") WITHOUT ROWID");
  }

  private static int queryInt(Statement s, String sql) throws SQLException {
    try (ResultSet rs = s.executeQuery(sql)) {
      return rs.next() ? rs.getInt(1) : 0;
    }
  }
}
