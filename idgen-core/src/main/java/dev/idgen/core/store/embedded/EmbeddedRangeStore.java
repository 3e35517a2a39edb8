package dev.idgen.core.store.embedded;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.Confirmations;
import dev.idgen.core.FloorLog;
import dev.idgen.core.IdRange;
import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.OwnerRecord;
import dev.idgen.core.RangeStore;
import dev.idgen.core.Reservation;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceState;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.StoredSequence;
import dev.idgen.core.WallClock;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import javax.annotation.Nullable;

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
 * from the file under the write lock. A failed commit may still be read from the file though it is not on
 * disk (its fsync failed, the page cache kept it), so no connection serves after one, nor at open, until
 * a {@link Checkpoint} has proven on disk what it reads: the next reservation never builds on a write whose
 * durability was not confirmed.
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
 * waits up to {@value Connections#BUSY_TIMEOUT_MILLIS} ms ({@code busy_timeout}) before failing with
 * {@link StoreUnavailableException}. WAL coordinates processes through shared memory, so the directory
 * must be on a local file system, not NFS.
 *
 * <p><b>Native library.</b> sqlite-jdbc extracts its native library to {@code java.io.tmpdir} on first
 * use. Where that is not writable or is mounted {@code noexec}, start the JVM with
 * {@code -Dorg.sqlite.tmpdir=<dir>} (or {@code -Dorg.sqlite.lib.path} pointing to an extracted copy).
 *
 * <p><b>Where things live.</b> This class is the facade: it opens the store and runs each operation as one
 * transaction of {@link Transactions} (the connection, its lock, and what a failure means), handing the
 * connection to the rooms of this package that do the work, one table or concern each:
 * {@link Connections} (opening connections with the store's settings), {@link Schema} (tables and migrations),
 * {@link Definitions} ({@code sequences}), {@link Stripes} ({@code stripes}: reservations and the fence of
 * strict sequences), {@link Returned} (IDs given back), {@link OwnerTable} ({@code owners}),
 * {@link FloorLogTable} ({@code floor_log}), {@link ServerTable} ({@code servers}: announcements and
 * confirmations, on an injectable {@link WallClock}) and {@link Reservations} ({@code reservations}: ranges
 * reserved for one caller); {@link DiskFaults} and {@link IntegrityCheck} say what
 * a failure or a damaged file means for the operator, {@link Checkpoint} proves the file on disk.
 */
@ThreadSafe
public final class EmbeddedRangeStore implements RangeStore {

  /** The database file inside the store directory. */
  static final String FILE_NAME = "idgen.db";
  /** The one "datacenter" of an embedded store, in advance receipts and announcements. */
  static final String DATACENTER = "local";
  private static final Duration FLOOR_REFRESH = Duration.ofSeconds(1);

  private final Path file;
  private final Transactions tx;
  private final WallClock wall;
  private final Stripes stripes;
  private final ServerTable servers;
  private final Reservations reservationTable;
  private final AtomicLong reservations = new AtomicLong();

  private EmbeddedRangeStore(Path file, Transactions tx, WallClock wall) {
    this.file = file;
    this.tx = tx;
    this.wall = wall;
    this.stripes = new Stripes(file);
    this.servers = new ServerTable(wall);
    this.reservationTable = new Reservations(file);
  }

  /**
   * Opens the store in {@code dir}, creating the directory and an empty store if missing.
   *
   * @throws StoreUnavailableException if the directory cannot be created or written, or its
   *     {@value #FILE_NAME} is not an idgen store (of this or an older version), is damaged
   *     ({@link IntegrityCheck}), or cannot be written (a full or read-only file system)
   */
  public static EmbeddedRangeStore open(Path dir) {
    return open(dir, WallClock.system());
  }

  /**
   * {@link #open(Path)}, with the wall clock that announcements, confirmations and creation times are read
   * from (a fake one in tests).
   */
  public static EmbeddedRangeStore open(Path dir, WallClock wall) {
    return open(dir, ConnectionSetup.NONE, wall);
  }

  /** {@link #open(Path)}, with {@code setup} run on every connection the store opens. */
  static EmbeddedRangeStore open(Path dir, ConnectionSetup setup) {
    return open(dir, setup, WallClock.system());
  }

  static EmbeddedRangeStore open(Path dir, ConnectionSetup setup, WallClock wall) {
    return open(dir, setup, null, wall);
  }

  /** {@code check}: run after every commit; null: {@link CommitCheck#of} the store's directory. */
  static EmbeddedRangeStore open(Path dir, ConnectionSetup setup, @Nullable CommitCheck check, WallClock wall) {
    return open(dir, setup, check, Commit.SQLITE, wall);
  }

  /** {@code commit}: ends every write transaction ({@link Commit#SQLITE} but in tests). */
  static EmbeddedRangeStore open(Path dir, ConnectionSetup setup, @Nullable CommitCheck check, Commit commit,
      WallClock wall) {
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(setup, "setup");
    Objects.requireNonNull(commit, "commit");
    Objects.requireNonNull(wall, "wall");
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
    CommitCheck afterCommit = check != null ? check : CommitCheck.of(absoluteDir);
    return new EmbeddedRangeStore(file,
        new Transactions(file, setup, afterCommit, commit, Connections.first(file, setup)), wall);
  }

  // ---- definitions

  @Override
  public void create(SequenceDefinition definition) {
    Objects.requireNonNull(definition, "definition");
    String name = definition.name();
    if (definition.strict() && !definition.homeDatacenter().equals(DATACENTER)) {
      throw InvalidRequestException.ofField("home_datacenter", "sequence '" + name + "': home datacenter '"
          + definition.homeDatacenter() + "' (expected: " + DATACENTER + ", the embedded store's only one)");
    }
    Instant createdAt = Instant.ofEpochMilli(wall.millis());
    tx.write("create sequence '" + name + "'", db -> {
      Definitions.insert(db, definition, createdAt);
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
    return tx.read("find sequence '" + name + "'", db -> Definitions.stored(db, name));
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
    return tx.read("list sequences", db -> Definitions.page(db, afterName, limit));
  }

  @Override
  public Optional<StoredSequence> findCurrent(String name) {
    return findStored(name); // one file: every read sees every committed change
  }

  /** The row and the floor-log entry in one transaction: a server that reads the entry reads the new row. */
  @Override
  public AdvanceReceipt redefine(StoredSequence expected, StoredSequence next) {
    Objects.requireNonNull(expected, "expected");
    Objects.requireNonNull(next, "next");
    String name = expected.definition().name();
    long version = tx.write("change sequence '" + name + "'", db -> {
      Definitions.replace(db, expected, next);
      return FloorLogTable.append(db, name, FloorLog.DEFINITION_CHANGED);
    });
    return new AdvanceReceipt(Map.of(DATACENTER, version));
  }

  // ---- reservations

  @Override
  public IdRange reserve(SequenceDefinition sequence, int stripe, long size) {
    Objects.requireNonNull(sequence, "sequence");
    if (size < 1) {
      throw new IllegalArgumentException("size: " + size + " (expected: >= 1)");
    }
    long stripeSize = sequence.stripeSize(stripe); // also checks the stripe number
    IdRange range = tx.write("reserve from stripe " + stripe + " of sequence '" + sequence.name() + "'",
        db -> stripes.reserve(db, sequence, stripe, size, stripeSize));
    reservations.incrementAndGet();
    return range;
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
    IdRange range = tx.write("reserve from sequence '" + sequence.name() + "' as owner epoch " + epoch, db -> {
      Definitions.checkMatchesStore(db, sequence);
      Stripes.fence(db, sequence, epoch);
      return stripes.reserve(db, sequence, 0, size, sequence.stripeSize(0));
    });
    reservations.incrementAndGet();
    return range;
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
    return tx.write("give back IDs of stripe " + stripe + " of sequence '" + name + "'", db -> {
      Definitions.checkMatchesStore(db, sequence);
      long floorIndex = sequence.firstIndexAbove(stripe, FloorLogTable.floorOf(db, name)); // 0 if never advanced
      return Returned.giveBack(db, sequence, stripe, ranges, floorIndex);
    });
  }

  // ---- ranges reserved for one caller (ReserveRange)

  /** The cursor moves and the record is written in one durable transaction: see {@link Reservations}. */
  @Override
  public Reservation reserveRange(SequenceDefinition sequence, long count, String requestId, String reservedBy) {
    Objects.requireNonNull(sequence, "sequence");
    if (count < 1) {
      throw new IllegalArgumentException("count: " + count + " (expected: >= 1)");
    }
    Instant now = Instant.ofEpochMilli(wall.millis());
    return tx.write("reserve " + count + " IDs of sequence '" + sequence.name() + "' for request " + requestId,
        db -> reservationTable.reserve(db, sequence, count, requestId, reservedBy, now));
  }

  @Override
  public List<Reservation> reservations(SequenceDefinition sequence, long afterFirst, int limit) {
    Objects.requireNonNull(sequence, "sequence");
    if (limit < 1) {
      throw new IllegalArgumentException("limit: " + limit + " (expected: >= 1)");
    }
    return tx.read("list the reservations of sequence '" + sequence.name() + "'",
        db -> Reservations.page(db, sequence.name(), afterFirst, limit));
  }

  // ---- owners of strict sequences

  @Override
  public Optional<OwnerRecord> owner(SequenceDefinition sequence) {
    String name = sequence.name();
    return tx.read("read the owner of sequence '" + name + "'", db -> OwnerTable.row(db, name));
  }

  @Override
  public boolean replaceOwner(SequenceDefinition sequence, @Nullable OwnerRecord expected, OwnerRecord next) {
    String name = sequence.name();
    return tx.write("write the owner of sequence '" + name + "'", db -> OwnerTable.replace(db, name, expected, next));
  }

  @Override
  public String datacenter() {
    return DATACENTER;
  }

  // ---- floors, announcements, confirmations

  @Override
  public AdvanceReceipt advance(SequenceDefinition sequence, long floor) {
    Objects.requireNonNull(sequence, "sequence");
    String name = sequence.name();
    long version = tx.write("advance sequence '" + name + "' past " + floor, db -> {
      Definitions.checkMatchesStore(db, sequence);
      Stripes.raiseTo(db, sequence, floor);
      // IDs given back below the floor are dropped, as the stripes' own are.
      Returned.dropBelow(db, sequence, floor);
      // In the same transaction: a process that reads this log entry reserves above the floor.
      return FloorLogTable.append(db, name, floor);
    });
    return new AdvanceReceipt(Map.of(DATACENTER, version));
  }

  @Override
  public long floor(SequenceDefinition sequence) {
    return tx.read("read the floor of sequence '" + sequence.name() + "'",
        db -> FloorLogTable.floorOf(db, sequence.name()));
  }

  @Override
  public FloorLog floorLog(long afterVersion) {
    return tx.read("read the floor log", db -> FloorLogTable.after(db, afterVersion));
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease) {
    announce(server, incarnation, appliedVersion, lease, null);
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease,
      @Nullable Duration leasesOutstanding) {
    tx.write("announce server " + server, db -> {
      servers.announce(db, server, incarnation, appliedVersion, lease, leasesOutstanding);
      return null;
    });
  }

  @Override
  public Confirmations confirmations(AdvanceReceipt receipt) {
    List<String> pending = unconfirmed(receipt);
    return tx.read("read the servers' announcements", db -> servers.confirmations(db, pending));
  }

  @Override
  public void withdraw(String server, UUID incarnation) {
    tx.write("withdraw server " + server, db -> {
      ServerTable.withdraw(db, server, incarnation);
      return null;
    });
  }

  @Override
  public List<String> unconfirmed(AdvanceReceipt receipt) {
    Long version = receipt.versions().get(DATACENTER);
    if (version == null) {
      return List.of();
    }
    return tx.read("read the servers' announcements", db -> servers.unconfirmed(db, DATACENTER, version));
  }

  /**
   * Processes that share the file learn each other's advances through the floor log, read this often.
   * One cheap indexed read a second.
   */
  @Override
  public Duration floorRefreshInterval() {
    return FLOOR_REFRESH;
  }

  // ---- state and lifecycle

  @Override
  public SequenceState state(SequenceDefinition sequence) {
    Objects.requireNonNull(sequence, "sequence");
    return tx.read("read the state of sequence '" + sequence.name() + "'", db -> {
      Definitions.checkMatchesStore(db, sequence);
      return stripes.state(db, sequence);
    });
  }

  /**
   * Writes a consistent copy of the store to {@code target}, a new file, while the store serves: the copy is
   * made under the store's lock, so it holds every commit before it and none after, and reservations wait
   * for it. It is SQLite's online backup API (sqlite-jdbc's {@code backup to} statement): a page-by-page copy
   * with the store's header, so {@link #open} takes it as it is. Written to a temporary file next to {@code target}, fsync'd,
   * then renamed, so {@code target} is either complete or absent.
   *
   * <p>Why here and not with the {@code sqlite3} shell: the store locks its file for its own process
   * ({@link Connections}), so no other process can read it while the server runs.
   *
   * @return the size of the copy in bytes
   * @throws InvalidRequestException if {@code target} exists or its directory does not
   * @throws StoreUnavailableException if the copy cannot be written (a full disk, say)
   */
  public long backupTo(Path target) {
    Objects.requireNonNull(target, "target");
    Path absolute = target.toAbsolutePath();
    Path dir = absolute.getParent();
    if (Files.exists(absolute)) {
      throw InvalidRequestException.ofField("to", "the backup file " + absolute
          + " already exists: name a new file (a backup never overwrites one)");
    }
    if (dir == null || !Files.isDirectory(dir)) {
      throw InvalidRequestException.ofField("to", "the directory of the backup file " + absolute
          + " does not exist: create it first");
    }
    if (absolute.equals(file)) {
      throw InvalidRequestException.ofField("to", "the backup file is the store's own file " + file);
    }
    Path partial = dir.resolve("." + absolute.getFileName() + ".partial-" + UUID.randomUUID());
    try {
      tx.read("back up to " + absolute, db -> {
        // sqlite-jdbc's statement for SQLite's online backup API; VACUUM INTO would refuse while the
        // store's cached statements are open.
        try (Statement s = db.connection.createStatement()) {
          s.executeUpdate("backup to '" + partial.toString().replace("'", "''") + "'");
        }
        return null;
      });
      try (FileChannel ch = FileChannel.open(partial,
          StandardOpenOption.WRITE)) {
        ch.force(true);
      }
      Files.move(partial, absolute, StandardCopyOption.ATOMIC_MOVE);
      fsyncDirectory(dir);
      return Files.size(absolute);
    } catch (IOException e) {
      throw new StoreUnavailableException("embedded store " + file + ": writing the backup " + absolute
          + " failed: " + e, e);
    } finally {
      try {
        Files.deleteIfExists(partial);
      } catch (IOException ignored) {
        // Only a leftover temporary file; the failure above is what the caller needs.
      }
    }
  }

  /** A rename is durable only once its directory is fsync'd (Linux: open it read-only and force). */
  private static void fsyncDirectory(Path dir) {
    try (FileChannel ch = FileChannel.open(dir,
        StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      // Some file systems and platforms cannot open a directory: the file itself is fsync'd already.
    }
  }

  /** How many reserves this instance has committed since it was opened. */
  public long reservations() {
    return reservations.get();
  }

  @Override
  public void close() {
    tx.close();
  }

  @Override
  public String toString() {
    return "EmbeddedRangeStore[" + file + "]";
  }

  /** Runs {@code PRAGMA <pragma>} on this store's connection, for tests: its value, null if none. */
  @Nullable
  String pragma(String pragma) {
    return tx.read("run pragma " + pragma, db -> {
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
}
