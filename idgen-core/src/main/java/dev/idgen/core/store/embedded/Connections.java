package dev.idgen.core.store.embedded;

import dev.idgen.core.StoreUnavailableException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;
import org.sqlite.SQLiteOpenMode;

/**
 * Opening connections to the store's file with its settings: the file locked for this process alone
 * ({@code locking_mode=EXCLUSIVE}, see {@link #configure}), write-ahead logging, {@code synchronous=FULL} (a
 * commit returns once fsync'd), a {@code busy_timeout} for a process that still holds the file, foreign keys.
 * The first connection of a store also checks the file ({@link IntegrityCheck}), proves its write-ahead log on
 * disk ({@link Checkpoint}) and brings its schema up to date ({@link Schema}).
 *
 * <p>Stateless and thread-safe.
 */
final class Connections {
  /** How long a connection waits for another process to let go of the file before giving up. */
  static final int BUSY_TIMEOUT_MILLIS = 10_000;

  private Connections() {}

  /**
   * The first connection of a store: opened (creating the file if missing), checked, proven on disk and
   * migrated.
   *
   * @throws StoreUnavailableException why the file is refused, for the operator
   */
  static Connection first(Path file, ConnectionSetup setup) {
    Connection connection;
    try {
      connection = connect(file, setup, true);
    } catch (SQLException | RuntimeException e) {
      throw refusal(file, e, setup.busyTimeoutMillis());
    }
    try {
      // Before anything is read from the file, and before a migration writes to it.
      IntegrityCheck.verify(file, connection);
      // A process that stopped after a commit whose fsync failed left no word of it: prove the log on disk.
      Checkpoint.prove(file, connection);
      Schema.migrate(file, connection);
    } catch (SQLException | RuntimeException e) {
      closeAfter(connection, e);
      throw refusal(file, e, setup.busyTimeoutMillis());
    }
    return connection;
  }

  /**
   * A new connection to {@code file} with the store's settings, then {@code setup}'s. Only {@link #first}
   * may {@code create} the file: opened again after a failure, a missing file is an error, not an empty
   * store (it is missing when its file system was unmounted, and then a new file would land in the mount
   * point's directory).
   */
  static Connection connect(Path file, ConnectionSetup setup, boolean create) throws SQLException {
    SQLiteConfig config = new SQLiteConfig();
    if (!create) {
      config.resetOpenMode(SQLiteOpenMode.CREATE);
    }
    Connection connection = config.createConnection("jdbc:sqlite:" + file);
    try {
      configure(file, connection, setup.busyTimeoutMillis());
      setup.apply(connection);
      return connection;
    } catch (SQLException | RuntimeException e) {
      closeAfter(connection, e);
      throw e;
    }
  }

  private static void closeAfter(Connection connection, Exception cause) {
    try {
      connection.close();
    } catch (SQLException suppressed) {
      cause.addSuppressed(suppressed);
    }
  }

  /** Why the store refuses the file at open, for the operator. */
  private static StoreUnavailableException refusal(Path file, Exception e, int busyTimeoutMillis) {
    if (e instanceof StoreUnavailableException s) {
      return s;
    }
    int code = e instanceof SQLiteException s ? DiskFaults.primary(s) : -1;
    String detail = code == SQLiteErrorCode.SQLITE_NOTADB.code
        ? "it is not an idgen store (not a SQLite database, or its header is damaged)"
        : code == SQLiteErrorCode.SQLITE_BUSY.code
        ? "another process has it open (waited " + busyTimeoutMillis + " ms): every server needs a directory of"
            + " its own; a server that is still stopping lets go of it when it exits"
        : "cannot open the database: " + (e instanceof SQLException q ? describe(file, q) : e.getMessage());
    return new StoreUnavailableException("embedded store " + file + ": " + detail, e);
  }

  /** SQLite's message, or for a disk fault what it says about the disk. */
  private static String describe(Path file, SQLException e) {
    return e instanceof SQLiteException s && DiskFaults.kindOf(s) != DiskFaults.Kind.OTHER
        ? DiskFaults.describe(file, s).description()
        : e.getMessage();
  }

  private static void configure(Path file, Connection connection, int busyTimeoutMillis) throws SQLException {
    try (Statement s = connection.createStatement()) {
      // First, so that the statements below already wait for another process instead of failing.
      s.execute("PRAGMA busy_timeout = " + busyTimeoutMillis);
      // Before the first access in WAL mode: SQLite then keeps the log's index in this process's memory
      // instead of a -shm file mapped into it. A write through such a mapping on a full disk raises SIGBUS,
      // which killed the JVM (measured: 14 times in 30 cycles of a full disk under a plain SQLite writer, and
      // in the disk soak). The file stays locked while the connection is open, so a second process on the
      // directory, which idgen never supports, is refused instead of sharing it.
      s.execute("PRAGMA locking_mode = EXCLUSIVE");
      String mode;
      try (ResultSet rs = s.executeQuery("PRAGMA journal_mode = WAL")) {
        mode = rs.next() ? rs.getString(1) : "";
      }
      if (!"wal".equalsIgnoreCase(mode)) {
        throw new StoreUnavailableException("embedded store " + file + ": cannot switch to write-ahead "
            + "logging (journal_mode is '" + mode + "'); is the directory on a local file system?");
      }
      s.execute("PRAGMA synchronous = FULL");
      s.execute("PRAGMA fullfsync = ON"); // macOS: fsync alone does not flush the drive's cache
      s.execute("PRAGMA foreign_keys = ON");
    }
  }
}
