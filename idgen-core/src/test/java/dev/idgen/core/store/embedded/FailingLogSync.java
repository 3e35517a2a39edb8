package dev.idgen.core.store.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.Arrays;
import javax.annotation.Nullable;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * A disk on which one fsync of the store's write-ahead log fails, as on Linux ("fsyncgate"): the commit's bytes
 * were written to the page cache, the sync that should have put them on disk failed, and the kernel keeps them
 * in the cache marked clean. They are read back (by a connection opened afterwards), but never reach the disk,
 * not even with a later fsync that succeeds. {@link #powerLoss} copies the store's files as such a disk holds
 * them after a power cut.
 *
 * <p>The model, from what this seam sees (the files at the failed commit, and at the power cut):
 * <ul>
 *   <li>The log's bytes that the failed commit wrote (it appends to a log already on disk) are lost; what
 *       commits that succeeded wrote after them is on disk. SQLite's recovery reads the log from its start and
 *       stops at the first frame that is not valid: the lost ones, so every commit after them is lost too.
 *   <li>The database file is written only by checkpoints. Until the log is started over, it counts as on disk
 *       as it was at the failure: a checkpoint that did not complete proves nothing.
 *   <li>SQLite starts the log over (a new checkpoint number and salts in its header, or no log at all) only
 *       after a checkpoint completed, which syncs the database file first: from then on the files are on disk
 *       as they are.
 * </ul>
 *
 * <p>Not thread-safe: the store calls it under its lock, the test between the store's calls.
 */
final class FailingLogSync implements Commit {
  /** The log header's checkpoint number and salts: bytes 12 to 24. */
  private static final int HEADER_FROM = 12;
  private static final int HEADER_TO = 24;

  private final Path db;
  private final Path wal;
  private boolean failNext;
  private boolean reportNext;

  @Nullable
  private Failure failure;

  /** The files at the failed commit: the database, and the log before and after it (as the page cache shows it). */
  private record Failure(byte[] db, byte[] walBefore, byte[] walAfter) {}

  FailingLogSync(Path dir) {
    this.db = dir.toAbsolutePath().resolve(EmbeddedRangeStore.FILE_NAME);
    this.wal = dir.toAbsolutePath().resolve(EmbeddedRangeStore.FILE_NAME + "-wal");
  }

  /** Makes the next commit's sync fail, and the commit with it ({@code SQLITE_IOERR_FSYNC}). */
  void failNextSync() {
    failNext = true;
    reportNext = true;
  }

  /**
   * Makes the next commit's sync lose its bytes and return success all the same, as ext4 may while it handles an
   * error (what {@link CommitCheck} catches).
   */
  void loseNextSync() {
    failNext = true;
    reportNext = false;
  }

  @Override
  public void run(Session session) throws SQLException {
    if (!failNext) {
      session.execute("COMMIT");
      return;
    }
    failNext = false;
    byte[] before = read(wal);
    session.execute("COMMIT"); // SQLite wrote the transaction to the log: the page cache shows it
    byte[] after = read(wal);
    if (before.length <= HEADER_TO || after.length <= before.length
        || !Arrays.equals(before, Arrays.copyOf(after, before.length))) {
      throw new IllegalStateException("the model needs a commit that appends to a log already started (log of "
          + before.length + " bytes, then " + after.length + ")");
    }
    // Reading the database drops this process's locks on it; the store discards this connection right after.
    failure = new Failure(read(db), before, after);
    if (!reportNext) {
      return;
    }
    throw new SQLiteException("[SQLITE_IOERR_FSYNC] disk I/O error (simulated: the fsync of " + wal + " failed)",
        SQLiteErrorCode.SQLITE_IOERR_FSYNC);
  }

  /**
   * Leaves the files as the failing disk does once the store has closed its connection after the failure: the
   * log as the failed commit wrote it, the database as it was. (Here the close checkpointed the log into the
   * database and removed it, as SQLite does on a healthy disk; on the failing one that checkpoint fails too, or
   * the process is killed first.) Call it while the store holds no connection to the files.
   */
  void leaveTheFilesAsTheFailingDiskDid() throws IOException {
    Failure f = failed();
    Files.write(db, f.db());
    Files.write(wal, f.walAfter());
  }

  /** Copies the store's files into {@code into} as the disk holds them after a power cut now. */
  void powerLoss(Path into) throws IOException {
    Failure f = failed();
    byte[] walNow = read(wal);
    byte[] dbNow = read(db);
    if (!startedOver(f.walAfter(), walNow)) {
      dbNow = f.db();
      int lostTo = Math.min(walNow.length, f.walAfter().length);
      Arrays.fill(walNow, Math.min(f.walBefore().length, lostTo), lostTo, (byte) 0);
    }
    Files.createDirectories(into);
    Files.write(into.resolve(db.getFileName()), dbNow);
    if (walNow.length > 0) {
      Files.write(into.resolve(wal.getFileName()), walNow);
    }
  }

  private static boolean startedOver(byte[] atFailure, byte[] now) {
    return now.length < HEADER_TO || !Arrays.equals(atFailure, HEADER_FROM, HEADER_TO, now, HEADER_FROM, HEADER_TO);
  }

  private Failure failed() {
    if (failure == null) {
      throw new IllegalStateException("no sync has failed yet");
    }
    return failure;
  }

  private static byte[] read(Path file) {
    try {
      return Files.exists(file) ? Files.readAllBytes(file) : new byte[0];
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
