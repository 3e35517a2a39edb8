package dev.idgen.core.store.embedded;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.Confirmations;
import dev.idgen.core.FloorLog;
import dev.idgen.core.IdRange;
import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.NotOwnerException;
import dev.idgen.core.Ordering;
import dev.idgen.core.OwnerRecord;
import dev.idgen.core.RangeStore;
import dev.idgen.core.RunwayPolicy;
import dev.idgen.core.SequenceAlreadyExistsException;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.SequenceState;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.StoredSequence;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;
import org.sqlite.SQLiteOpenMode;

/**
 * A {@link RangeStore} in one SQLite database file ({@value #FILE_NAME}) on local disk, so that idgen
 * runs on a single node with no Cassandra.
 *
 * <p><b>Why SQLite.</b> It is small, well kept and transactional, and with {@code journal_mode=WAL}
 * and {@code synchronous=FULL} a {@code COMMIT} returns only after the write-ahead log is fsync'd. Its
 * file locks serialise writers across processes, so even two servers pointed at the same directory by
 * mistake never share an ID. H2/MVStore was the other candidate, but it does not fsync on commit by
 * default (a crash can lose the last second of commits, which for us means re-issued IDs); a
 * hand-written journal would have to get torn writes, fsync ordering and locking right on its own.
 *
 * <p><b>Durability.</b> Every {@link #create}, {@link #reserve} and {@link #advance} is one
 * {@code BEGIN IMMEDIATE … COMMIT}, committed before the method returns, so a range is on disk before
 * anyone sees it: after {@code kill -9} or power loss, a new process resumes at or past it. If a commit
 * fails its outcome is unknown; the method throws and the range is never handed out, so at worst it is
 * lost (a gap), never issued twice. No cursor is kept in memory: every reservation reads its cursor
 * from the file under the write lock, so whether a failed commit reached the disk or not (SQLite
 * may even recover its write-ahead log frames at the next open), the next reservation starts above
 * whatever the file holds.
 *
 * <p><b>Disk faults.</b> A write that fails (a full disk, a read-only file system, an I/O error) fails the
 * operation with {@link StoreUnavailableException} naming the file and the cause ({@link DiskFaults}), and
 * the connection is discarded: sqlite-jdbc closes a prepared statement that fails that way, and a connection
 * whose files sit on a file system that was remounted never writes again. The next operation opens a new
 * connection, so the store serves again as soon as the disk does, with no restart. A file found damaged
 * ({@code SQLITE_CORRUPT}) is different: the store refuses every operation from then on, and at the next
 * start {@link IntegrityCheck} refuses the file, so that no cursor read from a damaged page is ever used.
 * {@link #open} checks the file ({@link IntegrityCheck}) and writes to it once, so that a store that cannot
 * be written (a read-only or full file system) is refused at start, not at the first call.
 *
 * <p><b>Concurrency.</b> The threads of one process share one connection, serialised by {@code lock};
 * a reserve is short (one indexed read, one write, one fsync). Instances and processes on the same
 * directory are serialised by SQLite: {@code BEGIN IMMEDIATE} takes the write lock <em>before</em> the
 * cursor is read, so no two transactions read the same cursor, and a writer that finds the lock taken
 * waits up to {@value #BUSY_TIMEOUT_MILLIS} ms ({@code busy_timeout}) before failing with
 * {@link StoreUnavailableException}. WAL coordinates processes through shared memory, so the directory
 * must be on a local file system, not NFS.
 *
 * <p><b>Native library.</b> sqlite-jdbc extracts its native library to {@code java.io.tmpdir} on first
 * use. Where that is not writable or is mounted {@code noexec}, start the JVM with
 * {@code -Dorg.sqlite.tmpdir=<dir>} (or {@code -Dorg.sqlite.lib.path} pointing to an extracted copy).
 */
@ThreadSafe
public final class EmbeddedRangeStore implements RangeStore {

  /** The database file inside the store directory. */
  static final String FILE_NAME = "idgen.db";
  /** Stored in {@code PRAGMA user_version}; bump it with a migration when the tables change. */
  static final int SCHEMA_VERSION = 5;
  /** The one "datacenter" of an embedded store, in advance receipts and announcements. */
  static final String DATACENTER = "local";
  private static final Duration FLOOR_REFRESH = Duration.ofSeconds(1);
  /** Stored in {@code PRAGMA application_id} ("idgn"), so that another SQLite file is never mistaken for ours. */
  static final int APPLICATION_ID = 0x6964676e;
  /** How long a writer waits for another process's write lock before giving up. */
  static final int BUSY_TIMEOUT_MILLIS = 10_000;

  private static final Logger logger = LoggerFactory.getLogger(EmbeddedRangeStore.class);

  private final Path file;
  private final ConnectionSetup setup;
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

  /** The disk fault that failed the last write, logged once; null once a write succeeded again. */
  @GuardedBy("lock")
  @Nullable
  private String writeFault;

  private final AtomicLong reservations = new AtomicLong();

  private EmbeddedRangeStore(Path file, ConnectionSetup setup, Connection connection) {
    this.file = file;
    this.setup = setup;
    this.session = new Session(connection);
  }

  /**
   * Runs on every connection the store opens, after the store's own settings: a seam for tests
   * ({@code PRAGMA max_page_count}, which makes SQLite fail with {@code SQLITE_FULL} as a full disk does).
   */
  @FunctionalInterface
  interface ConnectionSetup {
    ConnectionSetup NONE = connection -> {};

    void apply(Connection connection) throws SQLException;
  }

  /**
   * Opens the store in {@code dir}, creating the directory and an empty store if missing.
   *
   * @throws StoreUnavailableException if the directory cannot be created or written, or its
   *     {@value #FILE_NAME} is not an idgen store (of this or an older version), is damaged
   *     ({@link IntegrityCheck}), or cannot be written (a full or read-only file system)
   */
  public static EmbeddedRangeStore open(Path dir) {
    return open(dir, ConnectionSetup.NONE);
  }

  /** {@link #open(Path)}, with {@code setup} run on every connection the store opens. */
  static EmbeddedRangeStore open(Path dir, ConnectionSetup setup) {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(setup, "setup");
    Path absoluteDir = dir.toAbsolutePath();
    try {
      Files.createDirectories(absoluteDir);
    } catch (IOException e) {
      throw new StoreUnavailableException(
          "embedded store: cannot create the store directory " + absoluteDir + ": " + e, e);
    }
    // SQLite creates its -wal and -shm files next to the database, so the directory must be writable
    // even when the database file exists; checking here gives a clearer message than SQLite would.
    if (!Files.isWritable(absoluteDir)) {
      throw new StoreUnavailableException(
          "embedded store: the store directory " + absoluteDir + " is not writable");
    }
    Path file = absoluteDir.resolve(FILE_NAME);
    Connection connection;
    try {
      connection = connect(file, setup, true);
    } catch (SQLException | RuntimeException e) {
      throw refusal(file, e);
    }
    try {
      // Before anything is read from the file, and before a migration writes to it.
      IntegrityCheck.verify(file, connection);
      migrate(file, connection);
    } catch (SQLException | RuntimeException e) {
      try {
        connection.close();
      } catch (SQLException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw refusal(file, e);
    }
    return new EmbeddedRangeStore(file, setup, connection);
  }

  /** Why {@link #open} refuses the file, for the operator. */
  private static StoreUnavailableException refusal(Path file, Exception e) {
    if (e instanceof StoreUnavailableException s) {
      return s;
    }
    String detail = e instanceof SQLiteException s && primary(s) == SQLiteErrorCode.SQLITE_NOTADB.code
        ? "it is not an idgen store (not a SQLite database, or its header is damaged)"
        : "cannot open the database: " + (e instanceof SQLException q ? describe(file, q) : e.getMessage());
    return new StoreUnavailableException("embedded store " + file + ": " + detail, e);
  }

  /**
   * A new connection to {@code file} with the store's settings, then {@code setup}'s. Only {@link #open}
   * may {@code create} the file: opened again after a failure, a missing file is an error, not an empty
   * store (it is missing when its file system was unmounted, and then a new file would land in the mount
   * point's directory).
   */
  private static Connection connect(Path file, ConnectionSetup setup, boolean create) throws SQLException {
    SQLiteConfig config = new SQLiteConfig();
    if (!create) {
      config.resetOpenMode(SQLiteOpenMode.CREATE);
    }
    Connection connection = config.createConnection("jdbc:sqlite:" + file);
    try {
      configure(file, connection);
      setup.apply(connection);
      return connection;
    } catch (SQLException | RuntimeException e) {
      try {
        connection.close();
      } catch (SQLException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  /** SQLite's message, or for a disk fault what it says about the disk. */
  private static String describe(Path file, SQLException e) {
    return e instanceof SQLiteException s && DiskFaults.kindOf(s) != DiskFaults.Kind.OTHER
        ? DiskFaults.describe(file, s).description()
        : e.getMessage();
  }

  private static void configure(Path file, Connection connection) throws SQLException {
    try (Statement s = connection.createStatement()) {
      // First, so that the statements below already wait for another process instead of failing.
      s.execute("PRAGMA busy_timeout = " + BUSY_TIMEOUT_MILLIS);
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

  /** Creates the schema in a new file, and refuses files that are not (or not yet) ours. */
  private static void migrate(Path file, Connection connection) throws SQLException {
    try (Statement s = connection.createStatement()) {
      s.execute("BEGIN IMMEDIATE"); // two processes opening a new store at once create it once
      boolean committed = false;
      try {
        int applicationId = queryInt(s, "PRAGMA application_id");
        int version = queryInt(s, "PRAGMA user_version");
        int tables = queryInt(s, "SELECT count(*) FROM sqlite_schema");
        if (applicationId == 0 && version == 0 && tables == 0) {
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
          s.execute("PRAGMA application_id = " + APPLICATION_ID);
          s.execute("PRAGMA user_version = " + SCHEMA_VERSION);
          logger.info("Created embedded store {} (schema version {})", file, SCHEMA_VERSION);
        } else if (applicationId == APPLICATION_ID && version >= 1 && version <= 4) {
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
          addLeases(s);
          s.execute("PRAGMA user_version = " + SCHEMA_VERSION);
          logger.info("Upgraded embedded store {} to schema version {}", file, SCHEMA_VERSION);
        } else if (applicationId == APPLICATION_ID && version == SCHEMA_VERSION) {
          // Unchanged, but written: a store that cannot be written (a read-only or full file system) is
          // refused now, at start, rather than serving nothing and failing every call.
          s.execute("PRAGMA user_version = " + SCHEMA_VERSION);
        } else if (applicationId != APPLICATION_ID) {
          throw new StoreUnavailableException("embedded store " + file + ": it is not an idgen store "
              + "(a SQLite database with application_id " + applicationId + " and " + tables
              + " tables, expected application_id " + APPLICATION_ID + ")");
        } else if (version > SCHEMA_VERSION) {
          throw new StoreUnavailableException("embedded store " + file + ": it was written by a newer "
              + "idgen (schema version " + version + "; this version reads up to " + SCHEMA_VERSION + ")");
        } else if (version < 1) {
          throw new StoreUnavailableException("embedded store " + file + ": schema version " + version
              + " is invalid (expected: 1 to " + SCHEMA_VERSION + ")");
        }
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

  @Override
  public void create(SequenceDefinition definition) {
    Objects.requireNonNull(definition, "definition");
    String name = definition.name();
    if (definition.strict() && !definition.homeDatacenter().equals(DATACENTER)) {
      throw InvalidRequestException.ofField("home_datacenter", "sequence '" + name + "': home datacenter '"
          + definition.homeDatacenter() + "' (expected: " + DATACENTER + ", the embedded store's only one)");
    }
    inWriteTransaction("create sequence '" + name + "'", db -> {
      if (storedDefinition(db, name).isPresent()) {
        throw new SequenceAlreadyExistsException("sequence '" + name + "' already exists");
      }
      PreparedStatement insert = db.prepare("INSERT INTO sequences"
          + " (name, start, max, stripes, node_block_size, dc_block_size, created_at, ordering, home_datacenter)"
          + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
      insert.setString(1, name);
      insert.setLong(2, definition.start());
      insert.setLong(3, definition.max());
      insert.setInt(4, definition.stripes());
      insert.setLong(5, definition.nodeBlockSize());
      insert.setLong(6, definition.dcBlockSize());
      insert.setLong(7, Instant.now().toEpochMilli());
      insert.setString(8, definition.ordering().name());
      insert.setString(9, definition.homeDatacenter());
      insert.executeUpdate();
      PreparedStatement stripe = db.prepare("INSERT INTO stripes (name, stripe, reserved) VALUES (?, ?, 0)");
      for (int k = 0; k < definition.stripes(); k++) {
        stripe.setString(1, name);
        stripe.setInt(2, k);
        stripe.executeUpdate();
      }
      return null;
    });
  }

  @Override
  public Optional<SequenceDefinition> find(String name) {
    return findStored(name).map(StoredSequence::definition);
  }

  @Override
  public Optional<StoredSequence> findStored(String name) {
    Objects.requireNonNull(name, "name");
    return read("find sequence '" + name + "'", db -> storedSequence(db, name));
  }

  @Override
  public List<SequenceDefinition> list(String afterName, int limit) {
    return listStored(afterName, limit).stream().map(StoredSequence::definition).toList();
  }

  @Override
  public List<StoredSequence> listStored(String afterName, int limit) {
    Objects.requireNonNull(afterName, "afterName");
    if (limit < 1) {
      throw new IllegalArgumentException("limit: " + limit + " (expected: >= 1)");
    }
    return read("list sequences", db -> {
      // Names are ASCII, so SQLite's BINARY collation is String.compareTo order.
      PreparedStatement select = db.prepare("SELECT " + SEQUENCE_COLUMNS
          + " FROM sequences WHERE name > ? ORDER BY name LIMIT ?");
      select.setString(1, afterName);
      select.setInt(2, limit);
      List<StoredSequence> page = new ArrayList<>();
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          page.add(stored(rs));
        }
      }
      return page;
    });
  }

  @Override
  public IdRange reserve(SequenceDefinition sequence, int stripe, long size) {
    Objects.requireNonNull(sequence, "sequence");
    if (size < 1) {
      throw new IllegalArgumentException("size: " + size + " (expected: >= 1)");
    }
    long stripeSize = sequence.stripeSize(stripe); // also checks the stripe number
    String name = sequence.name();
    IdRange range = inWriteTransaction("reserve from stripe " + stripe + " of sequence '" + name + "'",
        db -> reserveIn(db, sequence, stripe, size, stripeSize));
    reservations.incrementAndGet();
    return range;
  }

  /** A reservation, in the caller's write transaction. */
  private IdRange reserveIn(Session db, SequenceDefinition sequence, int stripe, long size, long stripeSize)
      throws SQLException {
    String name = sequence.name();
    checkMatchesStore(db, sequence);
    IdRange back = takeReturned(db, sequence, stripe, size);
    if (back != null) {
      return back;
    }
    long from = reservedIndex(db, name, stripe);
    if (from >= stripeSize) {
      throw new SequenceExhaustedException(name, sequence.max());
    }
    // A sequence with a max is never reserved far ahead: at most a small fraction of what is left
    // (which also keeps from + size from overflowing when a caller asks for "everything left").
    long to = from + RunwayPolicy.boundedByRemaining(size, stripeSize - from);
    PreparedStatement update = db.prepare("UPDATE stripes SET reserved = ? WHERE name = ? AND stripe = ?");
    update.setLong(1, to);
    update.setString(2, name);
    update.setInt(3, stripe);
    update.executeUpdate();
    return sequence.range(stripe, from, to);
  }

  /**
   * The fence of strict sequences, in one transaction with the reservation: the stripe records the highest
   * owner epoch that reserved from it; a lower one is refused.
   */
  @Override
  public IdRange reserveStrict(SequenceDefinition sequence, long epoch, long size) {
    Objects.requireNonNull(sequence, "sequence");
    if (!sequence.strict()) {
      throw new IllegalArgumentException("sequence '" + sequence.name() + "' is not strict");
    }
    String name = sequence.name();
    IdRange range = inWriteTransaction("reserve from sequence '" + name + "' as owner epoch " + epoch, db -> {
      checkMatchesStore(db, sequence);
      PreparedStatement select = db.prepare("SELECT owner_epoch FROM stripes WHERE name = ? AND stripe = 0");
      select.setString(1, name);
      long fenced;
      try (ResultSet rs = select.executeQuery()) {
        fenced = rs.next() ? rs.getLong(1) : 0;
      }
      if (fenced > epoch) {
        throw new NotOwnerException(name, null, Duration.ZERO, "sequence '" + name + "': owner epoch " + epoch
            + " was superseded by epoch " + fenced + " (another server took the sequence over)");
      }
      if (fenced < epoch) {
        PreparedStatement update = db.prepare("UPDATE stripes SET owner_epoch = ? WHERE name = ? AND stripe = 0");
        update.setLong(1, epoch);
        update.setString(2, name);
        update.executeUpdate();
      }
      return reserveIn(db, sequence, 0, size, sequence.stripeSize(0));
    });
    reservations.incrementAndGet();
    return range;
  }

  @Override
  public Optional<OwnerRecord> owner(SequenceDefinition sequence) {
    String name = sequence.name();
    return read("read the owner of sequence '" + name + "'", db -> ownerRow(db, name));
  }

  private static Optional<OwnerRecord> ownerRow(Session db, String name) throws SQLException {
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

  @Override
  public boolean replaceOwner(SequenceDefinition sequence, @Nullable OwnerRecord expected, OwnerRecord next) {
    String name = sequence.name();
    return inWriteTransaction("write the owner of sequence '" + name + "'", db -> {
      Optional<OwnerRecord> now = ownerRow(db, name);
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
    });
  }

  @Override
  public String datacenter() {
    return DATACENTER;
  }

  /** Reserves from the IDs given back first (the lowest), in the caller's transaction; null if none. */
  private static IdRange takeReturned(Session db, SequenceDefinition sequence, int stripe, long size)
      throws SQLException {
    PreparedStatement select = db.prepare("SELECT from_index, to_index FROM returned WHERE name = ? AND stripe = ?"
        + " ORDER BY from_index LIMIT 1");
    select.setString(1, sequence.name());
    select.setInt(2, stripe);
    long from;
    long to;
    try (ResultSet rs = select.executeQuery()) {
      if (!rs.next()) {
        return null;
      }
      from = rs.getLong(1);
      to = rs.getLong(2);
    }
    long end = size >= to - from ? to : from + size;
    PreparedStatement delete = db.prepare("DELETE FROM returned WHERE name = ? AND stripe = ? AND from_index = ?");
    delete.setString(1, sequence.name());
    delete.setInt(2, stripe);
    delete.setLong(3, from);
    delete.executeUpdate();
    if (end < to) {
      insertReturned(db, sequence.name(), stripe, end, to);
    }
    return sequence.range(stripe, from, end);
  }

  private static void insertReturned(Session db, String name, int stripe, long from, long to)
      throws SQLException {
    PreparedStatement insert = db.prepare("INSERT INTO returned (name, stripe, from_index, to_index) VALUES (?, ?, ?, ?)");
    insert.setString(1, name);
    insert.setInt(2, stripe);
    insert.setLong(3, from);
    insert.setLong(4, to);
    insert.executeUpdate();
  }

  /**
   * Puts IDs this process reserved and never handed out back, in one durable transaction: either all are
   * back (then returned) or none (an exception: they are a gap). IDs at or below an advanced floor are
   * left out (dropped, as an advance drops them).
   */
  @Override
  public long giveBack(SequenceDefinition sequence, int stripe, List<IdRange> ranges) {
    Objects.requireNonNull(sequence, "sequence");
    String name = sequence.name();
    return inWriteTransaction("give back IDs of stripe " + stripe + " of sequence '" + name + "'", db -> {
      checkMatchesStore(db, sequence);
      long floorIndex = sequence.firstIndexAbove(stripe, floorOf(db, name)); // 0 if never advanced
      long back = 0;
      for (IdRange r : ranges) {
        long from = Math.max(sequence.indexOf(stripe, r.first()), floorIndex);
        long to = sequence.indexOf(stripe, r.first()) + r.count();
        if (from < to) {
          insertReturned(db, name, stripe, from, to);
          back += to - from;
        }
      }
      return back;
    });
  }

  @Override
  public AdvanceReceipt advance(SequenceDefinition sequence, long floor) {
    Objects.requireNonNull(sequence, "sequence");
    String name = sequence.name();
    long version = inWriteTransaction("advance sequence '" + name + "' past " + floor, db -> {
      checkMatchesStore(db, sequence);
      PreparedStatement update =
          db.prepare("UPDATE stripes SET reserved = ? WHERE name = ? AND stripe = ? AND reserved < ?");
      for (int k = 0; k < sequence.stripes(); k++) {
        long index = sequence.firstIndexAbove(k, floor);
        update.setLong(1, index);
        update.setString(2, name);
        update.setInt(3, k);
        update.setLong(4, index);
        update.executeUpdate();
      }
      // IDs given back below the floor are dropped, as the stripes' own are.
      PreparedStatement returned = db.prepare("SELECT stripe, from_index, to_index FROM returned WHERE name = ?");
      returned.setString(1, name);
      List<long[]> cut = new ArrayList<>();
      try (ResultSet rs = returned.executeQuery()) {
        while (rs.next()) {
          cut.add(new long[] {rs.getInt(1), rs.getLong(2), rs.getLong(3)});
        }
      }
      for (long[] r : cut) {
        long min = sequence.firstIndexAbove((int) r[0], floor);
        if (r[1] < min) {
          PreparedStatement delete = db.prepare("DELETE FROM returned WHERE name = ? AND stripe = ? AND from_index = ?");
          delete.setString(1, name);
          delete.setInt(2, (int) r[0]);
          delete.setLong(3, r[1]);
          delete.executeUpdate();
          if (min < r[2]) {
            insertReturned(db, name, (int) r[0], min, r[2]);
          }
        }
      }
      // In the same transaction: a process that reads this log entry reserves above the floor.
      PreparedStatement logged = db.prepare("INSERT INTO floor_log (name, floor) VALUES (?, ?)");
      logged.setString(1, name);
      logged.setLong(2, floor);
      logged.executeUpdate();
      try (ResultSet rs = db.prepare("SELECT last_insert_rowid()").executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    });
    return new AdvanceReceipt(Map.of(DATACENTER, version));
  }

  @Override
  public long floor(SequenceDefinition sequence) {
    return read("read the floor of sequence '" + sequence.name() + "'", db -> floorOf(db, sequence.name()));
  }

  /** The highest floor advanced for the sequence, in the caller's transaction; MIN_VALUE if none. */
  private static long floorOf(Session db, String name) throws SQLException {
    PreparedStatement select = db.prepare("SELECT max(floor) FROM floor_log WHERE name = ?");
    select.setString(1, name);
    try (ResultSet rs = select.executeQuery()) {
      if (!rs.next()) {
        return Long.MIN_VALUE;
      }
      long f = rs.getLong(1);
      return rs.wasNull() ? Long.MIN_VALUE : f;
    }
  }

  @Override
  public FloorLog floorLog(long afterVersion) {
    return read("read the floor log", db -> {
      PreparedStatement select = db.prepare("SELECT version, name, floor FROM floor_log WHERE version > ?"
          + " ORDER BY version LIMIT 10000");
      select.setLong(1, afterVersion);
      List<FloorLog.Change> changes = new ArrayList<>();
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          changes.add(new FloorLog.Change(rs.getLong(1), rs.getString(2), rs.getLong(3)));
        }
      }
      long version = changes.isEmpty() ? afterVersion : changes.get(changes.size() - 1).version();
      return new FloorLog(version, changes, true);
    });
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease) {
    announce(server, incarnation, appliedVersion, lease, null);
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease,
      @Nullable Duration leasesOutstanding) {
    inWriteTransaction("announce server " + server, db -> {
      PreparedStatement upsert = db.prepare("INSERT OR REPLACE INTO servers (server, incarnation, applied,"
          + " expires_at_millis, leases_until_millis) VALUES (?, ?, ?, ?, ?)");
      long now = System.currentTimeMillis();
      upsert.setString(1, server);
      upsert.setString(2, incarnation.toString());
      upsert.setLong(3, appliedVersion);
      upsert.setLong(4, now + lease.toMillis());
      if (leasesOutstanding == null) {
        upsert.setNull(5, java.sql.Types.INTEGER);
      } else {
        upsert.setLong(5, now + leasesOutstanding.toMillis() + 1); // rounded up
      }
      upsert.executeUpdate();
      return null;
    });
  }

  @Override
  public Confirmations confirmations(AdvanceReceipt receipt) {
    List<String> pending = unconfirmed(receipt);
    return read("read the servers' announcements", db -> {
      PreparedStatement select = db.prepare("SELECT count(*) - count(leases_until_millis), max(leases_until_millis)"
          + " FROM servers WHERE expires_at_millis > ?");
      long now = System.currentTimeMillis();
      select.setLong(1, now);
      try (ResultSet rs = select.executeQuery()) {
        rs.next();
        if (rs.getLong(1) > 0) {
          return new Confirmations(pending, Optional.empty()); // a server of an older version said nothing
        }
        long until = rs.getLong(2);
        return new Confirmations(pending, Optional.of(Duration.ofMillis(Math.max(0, until - now))));
      }
    });
  }

  @Override
  public void withdraw(String server, UUID incarnation) {
    inWriteTransaction("withdraw server " + server, db -> {
      PreparedStatement delete = db.prepare("DELETE FROM servers WHERE server = ? AND incarnation = ?");
      delete.setString(1, server);
      delete.setString(2, incarnation.toString());
      delete.executeUpdate();
      return null;
    });
  }

  @Override
  public List<String> unconfirmed(AdvanceReceipt receipt) {
    Long version = receipt.versions().get(DATACENTER);
    if (version == null) {
      return List.of();
    }
    return read("read the servers' announcements", db -> {
      PreparedStatement select = db.prepare("SELECT server FROM servers WHERE applied < ? AND expires_at_millis > ?"
          + " ORDER BY server");
      select.setLong(1, version);
      select.setLong(2, System.currentTimeMillis());
      List<String> out = new ArrayList<>();
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          out.add(DATACENTER + "/" + rs.getString(1));
        }
      }
      return out;
    });
  }

  /**
   * Processes that share the file learn each other's advances through the floor log, read this often.
   * One cheap indexed read a second.
   */
  @Override
  public Duration floorRefreshInterval() {
    return FLOOR_REFRESH;
  }

  @Override
  public SequenceState state(SequenceDefinition sequence) {
    Objects.requireNonNull(sequence, "sequence");
    String name = sequence.name();
    return read("read the state of sequence '" + name + "'", db -> {
      checkMatchesStore(db, sequence);
      PreparedStatement select = db.prepare("SELECT stripe, reserved FROM stripes WHERE name = ? ORDER BY stripe");
      select.setString(1, name);
      List<SequenceState.Stripe> stripes = new ArrayList<>();
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          int k = rs.getInt(1);
          stripes.add(new SequenceState.Stripe(k, rs.getLong(2), sequence.stripeSize(k)));
        }
      }
      if (stripes.size() != sequence.stripes()) {
        throw new IllegalStateException("embedded store " + file + ": sequence '" + name + "' has "
            + stripes.size() + " stripe rows (expected: " + sequence.stripes() + ")");
      }
      return new SequenceState(stripes, List.of());
    });
  }

  /** How many reserves this instance has committed since it was opened. */
  public long reservations() {
    return reservations.get();
  }

  @Override
  public void close() {
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

  @Override
  public String toString() {
    return "EmbeddedRangeStore[" + file + "]";
  }

  /** Runs {@code PRAGMA <pragma>} on this store's connection, for tests: its value, null if none. */
  @Nullable
  String pragma(String pragma) {
    return read("run pragma " + pragma, db -> {
      try (Statement s = db.connection.createStatement()) {
        if (!s.execute("PRAGMA " + pragma)) {
          return null;
        }
        try (ResultSet rs = s.getResultSet()) {
          return rs.next() ? rs.getString(1) : null;
        }
      }
    });
  }

  // ---- transactions and statements

  /**
   * The connection and its prepared statements. Not thread-safe: only the thread that holds the
   * store's {@code lock} uses it, in {@code inWriteTransaction} and {@code read}, which hand it to the
   * work they run (so that the work needs no access to guarded fields).
   */
  private static final class Session {
    final Connection connection;
    /** Prepared once per SQL text: parsing dominates a reserve otherwise. */
    private final Map<String, PreparedStatement> statements = new HashMap<>();

    Session(Connection connection) {
      this.connection = connection;
    }

    PreparedStatement prepare(String sql) throws SQLException {
      PreparedStatement s = statements.get(sql);
      if (s == null) {
        s = connection.prepareStatement(sql);
        statements.put(sql, s);
      }
      return s;
    }

    void execute(String sql) throws SQLException {
      prepare(sql).execute();
    }

    void close() throws SQLException {
      for (PreparedStatement s : statements.values()) {
        s.close();
      }
      statements.clear();
      connection.close();
    }
  }

  /** Work that runs under {@code lock}, on the session it is given. */
  @FunctionalInterface
  private interface SqlWork<T> {
    T run(Session db) throws SQLException;
  }

  /** Runs {@code work} in one write transaction, committed (and fsync'd) before this returns. */
  private <T> T inWriteTransaction(String operation, SqlWork<T> work) {
    synchronized (lock) {
      try {
        Session db = session();
        db.execute("BEGIN IMMEDIATE");
        T result;
        try {
          result = work.run(db);
          db.execute("COMMIT");
        } catch (Throwable t) {
          rollback(db, t);
          throw t;
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
  private <T> T read(String operation, SqlWork<T> work) {
    synchronized (lock) {
      try {
        return work.run(session());
      } catch (SQLException e) {
        throw failure(operation, e);
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
      session = new Session(connect(file, setup, false));
      logger.debug("Embedded store {}: opened a new connection after a failure", file);
    }
    return session;
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

  private static Optional<SequenceDefinition> storedDefinition(Session db, String name) throws SQLException {
    return storedSequence(db, name).map(StoredSequence::definition);
  }

  private static Optional<StoredSequence> storedSequence(Session db, String name) throws SQLException {
    PreparedStatement select = db.prepare("SELECT " + SEQUENCE_COLUMNS + " FROM sequences WHERE name = ?");
    select.setString(1, name);
    try (ResultSet rs = select.executeQuery()) {
      return rs.next() ? Optional.of(stored(rs)) : Optional.empty();
    }
  }

  /** The columns {@link #stored(ResultSet)} reads, in its order. */
  private static final String SEQUENCE_COLUMNS =
      "name, start, max, stripes, node_block_size, dc_block_size, created_at, ordering, home_datacenter";

  private static StoredSequence stored(ResultSet rs) throws SQLException {
    long created = rs.getLong(7);
    boolean unknown = rs.wasNull(); // about the last column read: before definition() reads the others
    return new StoredSequence(definition(rs), unknown ? Optional.empty() : Optional.of(Instant.ofEpochMilli(created)));
  }

  /**
   * Refuses a definition whose ID space differs from the stored one: the ranges are computed from the
   * caller's definition, so a stale or forged one could hand out IDs of another stripe.
   */
  private static void checkMatchesStore(Session db, SequenceDefinition given) throws SQLException {
    SequenceDefinition stored = storedDefinition(db, given.name()).orElseThrow(() -> notFound(given.name()));
    if (stored.start() != given.start() || stored.max() != given.max() || stored.stripes() != given.stripes()
        || stored.ordering() != given.ordering()) {
      throw new IllegalArgumentException("sequence '" + given.name() + "': the definition " + given
          + " does not match the stored one " + stored);
    }
  }

  private long reservedIndex(Session db, String name, int stripe) throws SQLException {
    PreparedStatement select = db.prepare("SELECT reserved FROM stripes WHERE name = ? AND stripe = ?");
    select.setString(1, name);
    select.setInt(2, stripe);
    try (ResultSet rs = select.executeQuery()) {
      if (!rs.next()) {
        throw new IllegalStateException(
            "embedded store " + file + ": sequence '" + name + "' has no row for stripe " + stripe);
      }
      return rs.getLong(1);
    }
  }

  private static SequenceDefinition definition(ResultSet rs) throws SQLException {
    return new SequenceDefinition(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getInt(4), rs.getLong(5),
        rs.getLong(6), Ordering.valueOf(rs.getString(8)), rs.getString(9));
  }

  private static SequenceNotFoundException notFound(String name) {
    return new SequenceNotFoundException("sequence '" + name + "' does not exist");
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
    if (e instanceof SQLiteException s) {
      int code = primary(s);
      DiskFaults.Kind kind = DiskFaults.kindOf(s);
      if (kind != DiskFaults.Kind.OTHER) {
        DiskFaults.Fault fault = DiskFaults.describe(file, s);
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
      if (code == SQLiteErrorCode.SQLITE_BUSY.code) {
        message += " (another process held the store's write lock for more than "
            + BUSY_TIMEOUT_MILLIS + " ms)";
      } else if (code == SQLiteErrorCode.SQLITE_ERROR.code
          || code == SQLiteErrorCode.SQLITE_CONSTRAINT.code
          || code == SQLiteErrorCode.SQLITE_MISMATCH.code
          || code == SQLiteErrorCode.SQLITE_MISUSE.code
          || code == SQLiteErrorCode.SQLITE_RANGE.code) {
        return new IllegalStateException(message, e);
      }
    }
    return new StoreUnavailableException(message, e);
  }

  private static int primary(SQLiteException e) {
    return DiskFaults.primary(e);
  }
}
