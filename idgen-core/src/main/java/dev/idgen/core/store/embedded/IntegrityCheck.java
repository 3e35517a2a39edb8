package dev.idgen.core.store.embedded;

import dev.idgen.core.StoreUnavailableException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sqlite.SQLiteException;

/**
 * SQLite's own consistency check of the store file, run at every open before anything is read from it: a
 * file with damaged pages is refused, naming the file and what the check found, so that a server never
 * serves from cursors it cannot trust.
 *
 * <p>{@code PRAGMA quick_check} reads every page: missing or doubly used pages, malformed or out-of-order
 * records, {@code NOT NULL} and {@code CHECK} constraints. What {@code integrity_check} adds is comparing
 * indexes with their tables and checking {@code UNIQUE} constraints; the store has no secondary index.
 * SQLite keeps no page checksums, so a page overwritten with well-formed content (one cursor's value
 * changed and nothing else) passes either check; random bytes from a failing disk or a stray write nearly
 * always break a page's structure, and do not. The cost grows with the file, about 10 ms a megabyte: 10 to 20 ms for
 * 10,000 sequences of 4 stripes (1.8 MB), 100 to 300 ms for 10,000 of 64 stripes (18 MB), on a busy
 * 2-core machine (docs/operations.md).
 *
 * <p>Stateless; runs on the connection it is given, before the store shares it.
 */
final class IntegrityCheck {

  /** The check, and how many problems it lists at most (the first few say enough). */
  static final String PRAGMA = "PRAGMA quick_check(5)";

  private static final Logger logger = LoggerFactory.getLogger(IntegrityCheck.class);

  private IntegrityCheck() {}

  /**
   * Runs the check.
   *
   * @throws StoreUnavailableException naming {@code file} and the failed check if it finds a problem or
   *     cannot read the file to the end
   */
  static void verify(Path file, Connection connection) throws SQLException {
    long start = System.nanoTime();
    List<String> problems = new ArrayList<>();
    try (Statement s = connection.createStatement(); ResultSet rs = s.executeQuery(PRAGMA)) {
      while (rs.next()) {
        problems.add(rs.getString(1));
      }
    } catch (SQLiteException e) {
      if (DiskFaults.kindOf(e) != DiskFaults.Kind.DAMAGED) {
        throw e; // an I/O error, say: the caller describes it
      }
      problems.add(e.getMessage());
    }
    if (!problems.equals(List.of("ok"))) {
      throw new StoreUnavailableException("embedded store " + file + ": refusing a damaged file: "
          + PRAGMA + " failed: " + String.join("; ", problems) + ". Its cursors cannot be trusted not to hand"
          + " out IDs twice; see 'Disk faults on the embedded store' in docs/operations.md");
    }
    logger.debug("Embedded store {}: {} ok in {} ms", file, PRAGMA,
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
  }
}
