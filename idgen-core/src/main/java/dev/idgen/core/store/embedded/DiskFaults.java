package dev.idgen.core.store.embedded;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * What a failure of SQLite says about the disk under the embedded store, in words an operator can act on:
 * "disk full", "read-only", "I/O error", "damaged". SQLite's own messages ("database or disk is full",
 * "disk I/O error") name neither the file nor, for an I/O error, the cause. A write refused because the file
 * system went read-only (the kernel remounts ext4 read-only after an error, say) reaches SQLite as a plain
 * {@code SQLITE_IOERR_WRITE}, and such a file system still looks writable to {@code access(2)} and
 * {@code statvfs(2)}; so on an I/O error this writes a small probe file into the store's directory, and the
 * kernel's answer to it ({@code Read-only file system}, {@code No space left on device}) names the cause.
 *
 * <p>The probe never opens the database file or its {@code -wal}/{@code -shm} files: closing a second
 * descriptor of a file drops every POSIX lock the process holds on it, SQLite's included.
 *
 * <p>Stateless and thread-safe; it touches the disk only after a failure.
 */
final class DiskFaults {

  /** What went wrong, from SQLite's primary result code (and the probe, for an I/O error). */
  enum Kind {
    /** No space left: writes resume once space is freed. */
    FULL,
    /** The file system (or the file) cannot be written: writes resume once it can. */
    READ_ONLY,
    /** The disk or file system failed otherwise. */
    IO_ERROR,
    /** The file's content is inconsistent: nothing read from it can be trusted. */
    DAMAGED,
    /** Not a disk fault (SQL SQLite rejects, a lock held too long, ...). */
    OTHER
  }

  /** A failure's kind and its description, which names the cause and what brings the store back. */
  record Fault(Kind kind, String description) {}

  private static final String PROBE_PREFIX = ".idgen-write-probe-";

  private DiskFaults() {}

  /** The kind of a failure, from its primary result code alone (no probe). */
  static Kind kindOf(SQLiteException e) {
    int code = primary(e);
    if (code == SQLiteErrorCode.SQLITE_FULL.code) {
      return Kind.FULL;
    }
    if (code == SQLiteErrorCode.SQLITE_READONLY.code) {
      return Kind.READ_ONLY;
    }
    if (code == SQLiteErrorCode.SQLITE_IOERR.code || code == SQLiteErrorCode.SQLITE_CANTOPEN.code) {
      return Kind.IO_ERROR;
    }
    if (code == SQLiteErrorCode.SQLITE_CORRUPT.code || code == SQLiteErrorCode.SQLITE_NOTADB.code) {
      return Kind.DAMAGED;
    }
    return Kind.OTHER;
  }

  /**
   * Describes a failure of SQLite on {@code file}; for {@link Kind#OTHER}, SQLite's message. An I/O error
   * whose probe shows a full or read-only file system is reported as such.
   */
  static Fault describe(Path file, SQLiteException e) {
    Path dir = file.getParent();
    String code = e.getResultCode().name();
    return switch (kindOf(e)) {
      case FULL -> full(dir, code);
      case READ_ONLY -> {
        Optional<String> probe = probe(dir);
        yield new Fault(Kind.READ_ONLY, probe.isPresent()
            ? "read-only: " + dir + " cannot be written (" + code + "; a test write there failed: "
                + probe.get() + "); the store resumes once the file system is writable again"
            : "read-only: SQLite cannot write " + file + " (" + code + "); check that the server may write"
                + " it, its -wal and -shm files and " + dir);
      }
      case IO_ERROR -> {
        if (primary(e) == SQLiteErrorCode.SQLITE_CANTOPEN.code && !Files.exists(file)) {
          yield new Fault(Kind.IO_ERROR, "missing: " + file + " is not there (" + code + "; was its file"
              + " system unmounted, or the file moved?); the store resumes once it is back");
        }
        Optional<String> probe = probe(dir);
        if (probe.isPresent() && probe.get().contains("Read-only file system")) {
          yield new Fault(Kind.READ_ONLY, "read-only: the file system of " + dir + " is read-only (" + code
              + "; a test write there failed: " + probe.get() + "; the kernel may have remounted it after"
              + " an error, see its log); the store resumes once the file system is writable again");
        }
        if (probe.isPresent() && probe.get().contains("No space left")) {
          yield full(dir, code);
        }
        yield new Fault(Kind.IO_ERROR, "I/O error on " + file + " (" + e.getMessage()
            + (probe.isPresent() ? "; a test write to " + dir + " failed too: " + probe.get() : "")
            + "); see the kernel log");
      }
      case DAMAGED -> new Fault(Kind.DAMAGED, "damaged: " + file + " is corrupt (" + e.getMessage() + "); its"
          + " cursors cannot be trusted not to hand out IDs twice, so the store refuses every operation; see"
          + " 'Disk faults on the embedded store' in docs/operations.md");
      case OTHER -> new Fault(Kind.OTHER, e.getMessage());
    };
  }

  private static Fault full(Path dir, String code) {
    return new Fault(Kind.FULL, "disk full: no space left on the file system of " + dir + " (" + code + "; "
        + usable(dir) + "); the store resumes by itself once space is freed");
  }

  private static String usable(Path dir) {
    try {
      return Files.getFileStore(dir).getUsableSpace() + " bytes usable now";
    } catch (IOException | RuntimeException e) {
      return "free space unknown: " + e.getMessage();
    }
  }

  /**
   * Creates, writes one page to, syncs and deletes a probe file in {@code dir}: the kernel's error if that
   * fails ({@code Read-only file system}, {@code No space left on device}, ...), empty if it works.
   */
  static Optional<String> probe(Path dir) {
    Path probe = null;
    try {
      probe = Files.createTempFile(dir, PROBE_PREFIX, null);
      try (FileChannel channel = FileChannel.open(probe, StandardOpenOption.WRITE)) {
        ByteBuffer page = ByteBuffer.allocate(4096);
        while (page.hasRemaining()) {
          channel.write(page);
        }
        channel.force(false);
      }
      return Optional.empty();
    } catch (FileSystemException e) {
      return Optional.of(e.getReason() != null ? e.getReason() : String.valueOf(e.getMessage()));
    } catch (IOException | RuntimeException e) {
      return Optional.of(e.getMessage() != null ? e.getMessage() : e.toString());
    } finally {
      if (probe != null) {
        try {
          Files.deleteIfExists(probe);
        } catch (IOException ignored) {
          // A read-only file system keeps it; the next probe on a writable one does not fail for it.
        }
      }
    }
  }

  /** The primary result code: extended codes carry it in their low byte. */
  static int primary(SQLiteException e) {
    return e.getResultCode().code & 0xff;
  }
}
