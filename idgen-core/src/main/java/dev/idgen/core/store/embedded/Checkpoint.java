package dev.idgen.core.store.embedded;

import dev.idgen.core.StoreUnavailableException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Proves that what a new connection reads is on disk, before the store serves from it: a completed
 * {@value #PRAGMA} copies every page of the write-ahead log into the database file, fsyncs that file, and only
 * then empties the log. Run on the first connection of every store, and on a new connection after a write whose
 * outcome is unknown (its commit failed, or the {@link CommitCheck} after it did).
 *
 * <p>Why: a commit whose fsync failed can stay in the page cache, written but never on disk (Linux marks such
 * pages clean and a later fsync succeeds without writing them: "fsyncgate"). SQLite's recovery of the log at
 * the next open reads it back as committed, and a reservation that builds on it would be appended to the log
 * after it; a power cut then drops both, since recovery stops at the first frame that is not on disk, and the
 * cursor falls below IDs already handed out. A checkpoint writes those pages anew, so its fsync covers them.
 * A new commit moving the cursors past the unknown one would not do: it lies behind the lost frames in the log.
 *
 * <p>Stateless; runs on the connection it is given, before the store shares it.
 */
final class Checkpoint {

  static final String PRAGMA = "PRAGMA wal_checkpoint(TRUNCATE)";

  private Checkpoint() {}

  /**
   * Runs the checkpoint.
   *
   * @throws SQLException as SQLite fails it (an I/O error, a full disk, ...): nothing is proven
   * @throws StoreUnavailableException if it returned without copying the whole log
   */
  static void prove(Path file, Connection connection) throws SQLException {
    try (Statement s = connection.createStatement(); ResultSet rs = s.executeQuery(PRAGMA)) {
      // One row: 1 if it could not complete (busy), the log's pages, the pages copied.
      boolean completed = rs.next() && rs.getInt(1) == 0 && rs.getInt(2) == rs.getInt(3);
      if (!completed) {
        throw new StoreUnavailableException("embedded store " + file + ": " + PRAGMA + " did not complete, so"
            + " what the file holds is not proven on disk and the store does not serve from it yet");
      }
    }
  }
}
