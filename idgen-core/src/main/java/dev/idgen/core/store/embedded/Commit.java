package dev.idgen.core.store.embedded;

import java.sql.SQLException;

/**
 * The step that ends a write transaction: {@code COMMIT}, which with {@code synchronous=FULL} returns once
 * SQLite has written the transaction to the write-ahead log and fsync'd the log. A seam for tests, which make it
 * fail as a failed fsync does: the log written (the page cache shows the commit), its sync failed
 * ({@code SQLITE_IOERR_FSYNC}).
 *
 * <p>Called under the lock of {@link Transactions}, on the session it holds.
 */
@FunctionalInterface
interface Commit {
  Commit SQLITE = db -> db.execute("COMMIT");

  void run(Session db) throws SQLException;
}
