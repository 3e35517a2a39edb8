package dev.idgen.core.store.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.WallClock;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Disk faults on the embedded store, made without root through SQLite itself: {@code PRAGMA max_page_count}
 * makes SQLite fail with {@code SQLITE_FULL} when the file would grow past it (a full disk; raising it is
 * space coming back), {@code PRAGMA query_only} with {@code SQLITE_READONLY} (a read-only file system), and
 * bytes overwritten in a closed file are damaged pages. {@link EmbeddedDiskMountTest} makes the same faults
 * with real file systems when it runs as root.
 */
class EmbeddedDiskFaultTest {

  @TempDir
  Path dir;

  @TempDir
  Path elsewhere;

  private EmbeddedRangeStore store;

  private final Ledger ledger = new Ledger();

  @AfterEach
  void close() {
    if (store != null) {
      store.close();
    }
  }

  private Path file() {
    return dir.toAbsolutePath().resolve(EmbeddedRangeStore.FILE_NAME);
  }

  // ---- a full disk

  @Test
  void should_fail_with_disk_full_while_the_file_cannot_grow_and_serve_again_once_it_can() {
    AtomicLong maxPages = new AtomicLong();
    store = EmbeddedRangeStore.open(dir, c -> {
      if (maxPages.get() > 0) {
        execute(c, "PRAGMA max_page_count = " + maxPages.get());
      }
    });
    // 1,280 stripe rows whose cursors are 0 (stored in no bytes): the b-tree pages are full of them.
    List<SequenceDefinition> sequences = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      SequenceDefinition d = new SequenceDefinition("a-sequence-name-long-enough-to-fill-pages-" + i, 1,
          Long.MAX_VALUE, SequenceDefinition.MAX_STRIPES, 1000, 100_000);
      store.create(d);
      sequences.add(d);
    }
    setMaxPages(maxPages, Long.parseLong(store.pragma("page_count"))); // the disk is full

    // Each reservation makes a cursor 6 bytes longer; sooner or later a page splits and needs a new one.
    StoreUnavailableException full = null;
    SequenceDefinition d = null;
    int stripe = -1;
    for (int n = 0; n < sequences.size() * SequenceDefinition.MAX_STRIPES && full == null; n++) {
      d = sequences.get(n / SequenceDefinition.MAX_STRIPES);
      stripe = n % SequenceDefinition.MAX_STRIPES;
      try {
        ledger.add(d.name(), store.reserve(d, stripe, 1L << 40));
      } catch (StoreUnavailableException e) {
        full = e;
      }
    }
    assertThat(full).as("a reservation that needs a new page").isNotNull();
    assertThat(ledger.size()).as("reservations before the disk was full").isPositive();
    assertThat(full).hasMessageContaining(file().toString()).hasMessageContaining("disk full")
        .hasMessageContaining("SQLITE_FULL").hasMessageContaining("resumes by itself once space is freed");

    // While the disk is full, every attempt fails the same way (not "statement is not executing"); reads work.
    for (int i = 0; i < 3; i++) {
      SequenceDefinition failing = d;
      int failingStripe = stripe;
      assertThatThrownBy(() -> store.reserve(failing, failingStripe, 1L << 40))
          .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("disk full");
    }
    assertThat(store.find(d.name())).contains(d);

    setMaxPages(maxPages, 1_000_000); // space freed
    IdRange after = ledger.add(d.name(), store.reserve(d, stripe, 1L << 40));

    assertThat(after.first()).as("the failed reservations were rolled back: the stripe's first IDs")
        .isEqualTo(d.range(stripe, 0, 1).first());
    for (SequenceDefinition s : sequences) {
      ledger.add(s.name(), store.reserve(s, 0, 1L << 40));
    }
    store.close();
    store = EmbeddedRangeStore.open(dir);
    for (SequenceDefinition s : sequences) {
      IdRange r = store.reserve(s, 0, 1);
      assertThat(r.first()).as("after a restart, above all of %s handed out", s.name())
          .isGreaterThan(ledger.highest(s.name(), r));
      ledger.add(s.name(), r);
    }
    ledger.assertNoIdTwice();
  }

  /** Sets the page limit on the connection and on any the store opens from now on. */
  private void setMaxPages(AtomicLong maxPages, long pages) {
    maxPages.set(pages);
    assertThat(store.pragma("max_page_count = " + pages)).isEqualTo(String.valueOf(pages));
  }

  // ---- a read-only file system

  @Test
  void should_fail_with_read_only_while_the_store_cannot_write_and_serve_again_once_it_can() {
    AtomicBoolean readOnly = new AtomicBoolean();
    store = EmbeddedRangeStore.open(dir, c -> execute(c, "PRAGMA query_only = " + readOnly.get()));
    SequenceDefinition d = new SequenceDefinition("ro", 1, Long.MAX_VALUE, 2, 100, 10_000);
    store.create(d);
    IdRange before = ledger.add(d.name(), store.reserve(d, 1, 100));

    readOnly.set(true);
    store.pragma("query_only = true");
    for (int i = 0; i < 3; i++) {
      assertThatThrownBy(() -> store.reserve(d, 1, 100)).isInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining(file().toString()).hasMessageContaining("read-only")
          .hasMessageContaining("SQLITE_READONLY");
    }
    assertThat(store.state(d).stripes().get(1).reserved()).as("reads work").isEqualTo(100);

    readOnly.set(false);
    store.pragma("query_only = false");
    IdRange after = ledger.add(d.name(), store.reserve(d, 1, 100));

    assertThat(after.first()).isEqualTo(before.last() + d.stripes());
    ledger.assertNoIdTwice();
  }

  @Test
  void should_not_create_an_empty_store_when_the_file_is_gone_after_a_failure() throws Exception {
    AtomicBoolean readOnly = new AtomicBoolean();
    store = EmbeddedRangeStore.open(dir, c -> execute(c, "PRAGMA query_only = " + readOnly.get()));
    SequenceDefinition d = new SequenceDefinition("moved", 1, Long.MAX_VALUE, 1, 100, 10_000);
    store.create(d);
    IdRange before = store.reserve(d, 0, 10);
    readOnly.set(true);
    store.pragma("query_only = true");
    assertThatThrownBy(() -> store.reserve(d, 0, 10)).isInstanceOf(StoreUnavailableException.class);

    // As when its file system is unmounted: the store's files are gone from the directory.
    readOnly.set(false);
    List<String> names = List.of(EmbeddedRangeStore.FILE_NAME, EmbeddedRangeStore.FILE_NAME + "-wal",
        EmbeddedRangeStore.FILE_NAME + "-shm");
    for (String name : names) {
      if (Files.exists(dir.resolve(name))) {
        Files.move(dir.resolve(name), elsewhere.resolve(name));
      }
    }
    assertThatThrownBy(() -> store.reserve(d, 0, 10)).isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("missing: " + file());
    assertThat(file()).as("no empty store in its place").doesNotExist();

    for (String name : names) {
      if (Files.exists(elsewhere.resolve(name))) {
        Files.move(elsewhere.resolve(name), dir.resolve(name));
      }
    }
    assertThat(store.reserve(d, 0, 10).first()).isEqualTo(before.last() + 1);
  }

  // ---- a file system that fails while a commit is made durable

  @Test
  void should_fail_a_commit_the_check_after_it_fails_and_never_hand_out_what_it_reserved() {
    AtomicBoolean failing = new AtomicBoolean();
    AtomicLong checks = new AtomicLong();
    store = EmbeddedRangeStore.open(dir, ConnectionSetup.NONE, () -> {
      checks.incrementAndGet();
      if (failing.get()) {
        throw new FileSystemException(dir.toString(), null, "Read-only file system");
      }
    }, WallClock.system());
    SequenceDefinition d = new SequenceDefinition("uncertain", 1, Long.MAX_VALUE, 1, 100, 10_000);
    store.create(d);
    IdRange before = store.reserve(d, 0, 10);
    long checked = checks.get();

    failing.set(true);
    // The commit succeeded in SQLite (here it is in the file); what matters is that nothing of it is used.
    assertThatThrownBy(() -> store.reserve(d, 0, 10)).isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining(file().toString()).hasMessageContaining("read-only")
        .hasMessageContaining("may be missing from the file").hasMessageContaining("Read-only file system");
    assertThat(checks.get()).as("the check runs after the commit").isEqualTo(checked + 1);

    failing.set(false);
    IdRange after = store.reserve(d, 0, 10);
    assertThat(after.first()).as("the uncertain reservation is a gap, never handed out")
        .isGreaterThan(before.last() + 10);
  }

  @Test
  void should_pass_the_commit_check_on_a_healthy_directory_and_leave_nothing_behind() throws IOException {
    CommitCheck check = CommitCheck.of(dir);
    Files.createFile(dir.resolve(CommitCheck.PROBE)); // left by a process that died between the steps

    for (int i = 0; i < 3; i++) {
      check.afterCommit();
    }

    assertThat(dir.resolve(CommitCheck.PROBE)).doesNotExist();
    assertThatThrownBy(() -> CommitCheck.of(dir.resolve("missing")).afterCommit()).isInstanceOf(IOException.class);
  }

  // ---- damaged pages

  @Test
  void should_refuse_to_open_a_file_with_damaged_pages_naming_the_file_and_the_check() throws Exception {
    store = EmbeddedRangeStore.open(dir);
    for (int i = 0; i < 200; i++) {
      store.create(new SequenceDefinition("damaged-" + i, 1, Long.MAX_VALUE, 4, 100, 10_000));
    }
    store.close();
    store = null;
    long pages = overwrite(file(), new Random(42));

    assertThat(pages).as("pages damaged").isGreaterThan(5);
    assertThatThrownBy(() -> EmbeddedRangeStore.open(dir)).isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining(file().toString()).hasMessageContaining("damaged")
        .hasMessageContaining(IntegrityCheck.PRAGMA + " failed");
  }

  @Test
  void should_refuse_every_operation_once_it_finds_the_file_damaged() throws Exception {
    // A page cache of the fewest pages SQLite keeps, so that the damage below is read from the file.
    store = EmbeddedRangeStore.open(dir, c -> execute(c, "PRAGMA cache_size = 0"));
    List<SequenceDefinition> sequences = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      SequenceDefinition d = new SequenceDefinition("later-" + i, 1, Long.MAX_VALUE, 4, 100, 10_000);
      store.create(d);
      sequences.add(d);
    }
    SequenceDefinition d = sequences.get(0);
    store.reserve(d, 0, 10);
    store.close();
    store = EmbeddedRangeStore.open(dir, c -> execute(c, "PRAGMA cache_size = 0")); // passes the check
    breakPageHeaders(file());

    StoreUnavailableException damaged = catchThrowableOfType(StoreUnavailableException.class,
        () -> store.list("", 1000));

    assertThat(damaged).as("reading the damaged pages").isNotNull()
        .hasMessageContaining(file().toString()).hasMessageContaining("damaged").hasMessageContaining("SQLITE_CORRUPT");
    assertThatThrownBy(() -> store.reserve(d, 0, 10)).isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("refused since the file was found damaged");
    assertThatThrownBy(() -> store.find(d.name())).isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("refused since the file was found damaged");
    store.close();
    store = null;
    assertThatThrownBy(() -> EmbeddedRangeStore.open(dir)).isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining(IntegrityCheck.PRAGMA + " failed");
  }

  /** As a failing disk might: 512 random bytes every 8 KB past the first page. The number of pages hit. */
  static long overwrite(Path file, Random random) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      long pages = 0;
      byte[] garbage = new byte[512];
      for (long at = 8192; at + garbage.length <= f.length(); at += 8192) {
        random.nextBytes(garbage);
        f.seek(at);
        f.write(garbage);
        pages++;
      }
      return pages;
    }
  }

  /** Makes every page past the first one of no b-tree page type, which SQLite reports as corrupt when read. */
  private static void breakPageHeaders(Path file) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(16); // the header's page size
      int pageSize = f.readUnsignedShort();
      for (long at = pageSize; at < f.length(); at += pageSize) {
        f.seek(at);
        f.write(0x7f);
      }
    }
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }
}
