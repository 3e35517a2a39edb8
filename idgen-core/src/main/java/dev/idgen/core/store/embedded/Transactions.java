package dev.idgen.core.store.embedded;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.core.StoreUnavailableException;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * The store's one connection, and the transactions that every room's work runs in: {@link #write} (one
 * {@code BEGIN IMMEDIATE … COMMIT}, fsync'd before it returns) and {@link #read} (one statement's snapshot).
 * Also what a failure means ({@link #failure}): a disk fault ({@link DiskFaults}) or a lock held too long is
 * {@link StoreUnavailableException}, and the connection is discarded so that the next operation opens a new
 * one (the store serves again as soon as the disk does); a damaged file makes the store refuse every later
 * operation. A write whose commit failed has an unknown outcome: it may be in the page cache and not on disk,
 * so no new connection serves until a {@link Checkpoint} has proven the file on disk.
 *
 * <p>Threads: the threads of one process share the connection, serialised by {@code lock}, which is held for
 * the whole of each transaction and hands the {@link Session} to the work it runs.
 */
@ThreadSafe
final class Transactions {
  private static final Logger logger = LoggerFactory.getLogger(EmbeddedRangeStore.class);

  private final Path file;
  private final ConnectionSetup setup;
  private final CommitCheck commitCheck;
  private final Commit commit;
  private final Object lock = new Object();

  /**
   * The connection; used only under {@code lock}, which hands it to the work it runs. Null after a failure
   * discarded it, until the next operation opens a new one.
   */
  @GuardedBy("lock")
  @Nullable
  private Session session;

  @GuardedBy("lock")
  private boolean closed;

  /** Why the store refuses every operation: the file was found damaged. Null while it was not. */
  @GuardedBy("lock")
  @Nullable
  private String damage;

  /**
   * The write whose outcome is unknown (its commit failed, or the check after it did), until a {@link
   * Checkpoint} on a new connection proves the file on disk; null while every commit is confirmed.
   */
  @GuardedBy("lock")
  @Nullable
  private String unconfirmed;

  /** The disk fault that failed the last write, logged once; null once a write succeeded again. */
  @GuardedBy("lock")
  @Nullable
  private String writeFault;

  Transactions(Path file, ConnectionSetup setup, CommitCheck commitCheck, Commit commit, Connection first) {
    this.file = file;
    this.setup = setup;
    this.commitCheck = commitCheck;
    this.commit = commit;
    this.session = new Session(first);
  }

  /**
   * Runs {@code work} in one write transaction, committed (and fsync'd) before this returns, and proven
   * durable by the {@link CommitCheck}: a commit the check fails is a failure (it may or may not be in the
   * file), so nothing it reserved is handed out.
   */
  <T> T write(String operation, Session.Work<T> work) {
    synchronized (lock) {
      try {
        Session db = session();
        db.execute("BEGIN IMMEDIATE");
        T result;
        try {
          result = work.run(db);
        } catch (Throwable t) {
          rollback(db, t);
          throw t;
        }
        try {
          commit.run(db);
        } catch (Throwable t) {
          // Its log may be written (a later connection reads it) but not on disk: see Checkpoint.
          unconfirmed = operation;
          discardSession(t); // closing rolls back what is left of the transaction
          throw t;
        }
        try {
          commitCheck.afterCommit();
        } catch (IOException | RuntimeException e) {
          unconfirmed = operation;
          throw uncertainCommit(operation, e);
        }
        if (writeFault != null) {
          logger.info("Embedded store {}: writes succeed again (they failed with: {})", file, writeFault);
          writeFault = null;
        }
        return result;
      } catch (SQLException e) {
        throw failure(operation, e);
      }
    }
  }

  /** Runs one read; a single statement reads a consistent snapshot, so no transaction is needed. */
  <T> T read(String operation, Session.Work<T> work) {
    synchronized (lock) {
      try {
        return work.run(session());
      } catch (SQLException e) {
        throw failure(operation, e);
      }
    }
  }

  /** Closes the connection; idempotent. A failed close is logged, not thrown: every commit is durable. */
  void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      if (session == null) {
        return; // a failure discarded it
      }
      try {
        session.close();
        session = null;
        logger.debug("Closed embedded store {}", file);
      } catch (SQLException e) {
        // Every commit is already durable; a failed close loses nothing, so it must not fail a shutdown.
        logger.warn("Embedded store {}: closing the database failed: {}", file, e.toString());
      }
    }
  }

  /** The connection, opened again if a failure discarded it; refused once closed or found damaged. */
  @GuardedBy("lock")
  private Session session() throws SQLException {
    if (closed) {
      throw new IllegalStateException("embedded store " + file + " is closed");
    }
    if (damage != null) {
      throw new StoreUnavailableException("embedded store " + file + ": refused since the file was found "
          + damage);
    }
    if (session == null) {
      Connection connection = Connections.connect(file, setup, false);
      if (unconfirmed != null) {
        prove(connection);
      }
      session = new Session(connection);
      logger.debug("Embedded store {}: opened a new connection after a failure", file);
    }
    return session;
  }

  /** Proves the file on disk on a new connection after an unknown outcome; closes it if that fails. */
  @GuardedBy("lock")
  private void prove(Connection connection) throws SQLException {
    try {
      Checkpoint.prove(file, connection);
    } catch (SQLException | RuntimeException e) {
      try {
        connection.close();
      } catch (SQLException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    logger.info("Embedded store {}: the file is proven on disk again ({} completed after the outcome of '{}'"
        + " was unknown)", file, Checkpoint.PRAGMA, unconfirmed);
    unconfirmed = null;
  }

  @GuardedBy("lock")
  private void rollback(Session db, Throwable cause) {
    try {
      db.execute("ROLLBACK");
    } catch (SQLException e) {
      // Also when SQLite already rolled back by itself (after an I/O error or a full disk, say); then
      // sqlite-jdbc has closed the ROLLBACK statement: start afresh.
      cause.addSuppressed(e);
      discardSession(cause);
    }
  }

  /**
   * Closes the connection after a failure; the next operation opens a new one. Closing ends an open
   * transaction (a rollback) and drops every prepared statement, some of which sqlite-jdbc may have closed
   * (it does so on most errors, and then every later use fails with "statement is not executing").
   */
  @GuardedBy("lock")
  private void discardSession(Throwable cause) {
    if (session == null) {
      return;
    }
    try {
      session.close();
    } catch (SQLException e) {
      // On a failing disk the connection may not close cleanly; a new one is opened all the same.
      cause.addSuppressed(e);
    }
    session = null;
  }

  /**
   * Maps a failure to the exception a caller can act on, and discards the connection: the store failing
   * (a disk fault named by {@link DiskFaults}, another process holding the lock too long) is
   * {@link StoreUnavailableException}; SQL that SQLite rejects is a bug, hence {@link IllegalStateException}.
   * A damaged file makes the store refuse every later operation.
   */
  @GuardedBy("lock")
  private RuntimeException failure(String operation, SQLException e) {
    discardSession(e);
    String message = "embedded store " + file + ": " + operation + " failed: " + e.getMessage();
    if (!(e instanceof SQLiteException s)) {
      return new StoreUnavailableException(message, e);
    }
    if (DiskFaults.kindOf(s) != DiskFaults.Kind.OTHER) {
      return diskFault(operation, s);
    }
    int code = DiskFaults.primary(s);
    if (code == SQLiteErrorCode.SQLITE_BUSY.code) {
      message += " (another process held the store's file for more than " + setup.busyTimeoutMillis()
          + " ms; every server needs a directory of its own)";
    } else if (code == SQLiteErrorCode.SQLITE_ERROR.code
        || code == SQLiteErrorCode.SQLITE_CONSTRAINT.code
        || code == SQLiteErrorCode.SQLITE_MISMATCH.code
        || code == SQLiteErrorCode.SQLITE_MISUSE.code
        || code == SQLiteErrorCode.SQLITE_RANGE.code) {
      return new IllegalStateException(message, e);
    }
    return new StoreUnavailableException(message, e);
  }

  /**
   * The file system failed around a commit ({@link CommitCheck}): the commit may or may not be durable, so it
   * counts as failed, and the connection is discarded as after any disk fault.
   */
  @GuardedBy("lock")
  private StoreUnavailableException uncertainCommit(String operation, Exception e) {
    discardSession(e);
    String reason = e instanceof FileSystemException f && f.getReason() != null ? f.getReason() : e.toString();
    String description = "the file system of " + file.getParent() + " failed while the commit was made durable"
        + " (a check right after it: " + reason + "), so the commit may be missing from the file and nothing of"
        + " it is used (reserved IDs are a gap); the store resumes once the file system is writable again";
    if (writeFault == null) {
      writeFault = description;
      logger.warn("Embedded store {}: {} failed: {}", file, operation, description);
    }
    return new StoreUnavailableException(
        "embedded store " + file + ": " + operation + " failed: read-only: " + description, e);
  }

  /** A disk fault, logged once until writes succeed again; a damaged file is refused from now on. */
  @GuardedBy("lock")
  private StoreUnavailableException diskFault(String operation, SQLiteException e) {
    DiskFaults.Fault fault = DiskFaults.describe(file, e);
    if (fault.kind() == DiskFaults.Kind.DAMAGED) {
      damage = fault.description();
      logger.error("Embedded store {}: {} failed: {}", file, operation, damage);
    } else if (writeFault == null) {
      writeFault = fault.description();
      logger.warn("Embedded store {}: {} failed: {}", file, operation, writeFault);
    }
    return new StoreUnavailableException(
        "embedded store " + file + ": " + operation + " failed: " + fault.description(), e);
  }
}
