package dev.idgen.core.store.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.core.IdRange;
import dev.idgen.core.RangeStore;
import dev.idgen.core.RangeStoreContractTest;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceState;
import dev.idgen.core.StoreUnavailableException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/** The store contract on the embedded store, plus what only a store on local disk has to show. */
@Execution(ExecutionMode.CONCURRENT) // waits on real time; a directory of its own per test
class EmbeddedRangeStoreTest extends RangeStoreContractTest {

  @TempDir
  Path dir;

  @Override
  protected RangeStore newStore() {
    return EmbeddedRangeStore.open(dir);
  }

  private EmbeddedRangeStore embedded() {
    return (EmbeddedRangeStore) store;
  }

  // ---- durability

  @Test
  void should_reserve_ids_given_back_first_durably_and_drop_those_an_advance_passes() {
    SequenceDefinition d = created(prefix + "g", 1, 1_000_000, 2);
    IdRange a = store.reserve(d, 1, 100); // 2, 4, ..., 200
    IdRange b = store.reserve(d, 1, 100); // 202 ... 400
    assertThat(store.giveBack(d, 1, List.of(a.tail(40), b))).isEqualTo(160);
    store.close();

    try (EmbeddedRangeStore reopened = EmbeddedRangeStore.open(dir)) {
      IdRange first = reopened.reserve(d, 1, 50);
      assertThat(first.first()).as("the lowest given-back ID first, after a restart").isEqualTo(a.get(40));
      assertThat(first.count()).isEqualTo(50);
      reopened.advance(d, 300);
      IdRange next = reopened.reserve(d, 1, 1_000);
      assertThat(next.first()).as("given-back IDs at or below an advanced floor are dropped").isEqualTo(302);
      assertThat(next.last()).isEqualTo(b.last());
      assertThat(reopened.reserve(d, 1, 1).first()).as("then the stripe's cursor").isEqualTo(b.last() + 2);
    }
  }

  @Test
  void should_keep_definitions_and_cursors_across_close_and_reopen() {
    SequenceDefinition striped = created(prefix + "a", 1, 1_000_000, 3);
    SequenceDefinition advanced = created(prefix + "b", 1, 1_000_000, 1);
    IdRange before = store.reserve(striped, 1, 10);
    store.advance(advanced, 500);
    List<SequenceDefinition> definitions = store.list("", 10);
    SequenceState stripedState = store.state(striped);
    store.close();

    try (EmbeddedRangeStore reopened = EmbeddedRangeStore.open(dir)) {
      assertThat(reopened.list("", 10)).isEqualTo(definitions).hasSize(2);
      assertThat(reopened.state(striped)).isEqualTo(stripedState);
      assertThat(reopened.reserve(striped, 1, 1).first()).isEqualTo(before.last() + 3);
      assertThat(reopened.reserve(advanced, 0, 1).first()).isEqualTo(501);
    }
  }

  @Test
  void should_commit_in_wal_mode_with_full_sync() {
    assertThat(embedded().pragma("journal_mode")).isEqualTo("wal");
    assertThat(embedded().pragma("synchronous")).isEqualTo("2"); // FULL
    assertThat(embedded().pragma("busy_timeout")).isEqualTo(String.valueOf(Connections.BUSY_TIMEOUT_MILLIS));
  }

  /**
   * A separate JVM reserves and prints every range it got until it is killed with SIGKILL; the store
   * reopened afterwards must continue above every printed ID.
   */
  @Test
  @Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void should_never_reissue_an_id_after_kill_9() throws Exception {
    String name = prefix + "killed";
    created(name, 1, Long.MAX_VALUE, 1);
    store.close();

    Process child = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", System.getProperty("java.class.path"),
            ReservingProcess.class.getName(), dir.toString(), name)
        .redirectErrorStream(true)
        .start();
    long highest = 0;
    int ranges = 0;
    List<String> otherOutput = new ArrayList<>();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while (ranges < 300 && (line = out.readLine()) != null) {
        if (line.startsWith(ReservingProcess.PREFIX)) {
          long last = Long.parseLong(line.substring(ReservingProcess.PREFIX.length()).trim());
          assertThat(last).isGreaterThan(highest);
          highest = last;
          ranges++;
        } else {
          otherOutput.add(line);
        }
      }
    } finally {
      child.destroyForcibly(); // SIGKILL: no shutdown hook, no close
      child.waitFor(30, TimeUnit.SECONDS);
    }
    assertThat(ranges).as("ranges the child printed; its other output: %s", otherOutput).isEqualTo(300);

    try (EmbeddedRangeStore reopened = EmbeddedRangeStore.open(dir)) {
      SequenceDefinition d = reopened.find(name).orElseThrow();
      assertThat(reopened.reserve(d, 0, 1).first()).isGreaterThan(highest);
    }
  }

  /** The child JVM of {@link #should_never_reissue_an_id_after_kill_9}. */
  static final class ReservingProcess {
    static final String PREFIX = "reserved up to ";

    public static void main(String[] args) {
      RangeStore store = EmbeddedRangeStore.open(Path.of(args[0]));
      SequenceDefinition d = store.find(args[1]).orElseThrow();
      Random random = new Random();
      while (true) {
        IdRange r = store.reserve(d, 0, 1 + random.nextInt(50));
        System.out.println(PREFIX + r.last());
        System.out.flush();
      }
    }
  }

  // ---- several instances

  @Test
  void should_never_overlap_when_many_threads_reserve_at_once() throws Exception {
    SequenceDefinition d = created(prefix + "shared", 1, Long.MAX_VALUE, 1);
    ConcurrentLinkedQueue<IdRange> ranges = new ConcurrentLinkedQueue<>();
    runConcurrently(4, t -> {
      Random random = new Random(t);
      for (int i = 0; i < 200; i++) {
        ranges.add(store.reserve(d, 0, 1 + random.nextInt(20)));
      }
      return null;
    });

    // Sorted, the ranges must tile [1, n] exactly: no overlap, and no gap either.
    List<IdRange> sorted = new ArrayList<>(ranges);
    sorted.sort(Comparator.comparingLong(IdRange::first));
    long next = 1;
    for (IdRange r : sorted) {
      assertThat(r.first()).as("first ID of %s", r).isEqualTo(next);
      next = r.last() + 1;
    }
    assertThat(sorted).hasSize(800);
  }

  @Test
  void should_refuse_a_second_instance_on_a_directory_in_use_and_keep_serving_the_first() {
    SequenceDefinition d = created(prefix + "held", 1, Long.MAX_VALUE, 1);
    IdRange before = store.reserve(d, 0, 10);

    // The file stays locked while the first instance is open: the second waits out its busy timeout (10 s
    // in production, asserted by should_commit_in_wal_mode_with_full_sync; half a second here) and is refused.
    ConnectionSetup shortBusyTimeout = new ConnectionSetup() {
      @Override
      public void apply(java.sql.Connection connection) {}

      @Override
      public int busyTimeoutMillis() {
        return 500;
      }
    };
    assertThatThrownBy(() -> EmbeddedRangeStore.open(dir, shortBusyTimeout))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining(dir.resolve(EmbeddedRangeStore.FILE_NAME).toString())
        .hasMessageContaining("another process has it open (waited 500 ms)")
        .hasMessageContaining("a directory of its own");

    assertThat(store.reserve(d, 0, 10).first()).isEqualTo(before.last() + 1);
    store.close();
    try (EmbeddedRangeStore next = EmbeddedRangeStore.open(dir)) {
      assertThat(next.reserve(d, 0, 1).first()).as("opened once the first let go").isEqualTo(before.last() + 11);
    }
  }

  // ---- opening

  @Test
  void should_create_the_store_directory_when_it_is_missing() {
    Path nested = dir.resolve("a/b/c");

    try (EmbeddedRangeStore s = EmbeddedRangeStore.open(nested)) {
      assertThat(s.list("", 1)).isEmpty();
    }

    assertThat(nested.resolve(EmbeddedRangeStore.FILE_NAME)).isRegularFile();
  }

  @Test
  void should_fail_clearly_when_the_directory_cannot_be_created() throws Exception {
    Path file = Files.writeString(dir.resolve("a-file"), "x");

    assertThatThrownBy(() -> EmbeddedRangeStore.open(file.resolve("store")))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("cannot create the store directory")
        .hasMessageContaining(file.toString());
  }

  @Test
  void should_fail_clearly_when_the_file_is_not_a_database() throws Exception {
    Path other = Files.createDirectory(dir.resolve("other"));
    Path file = other.resolve(EmbeddedRangeStore.FILE_NAME);
    Files.writeString(file, "this is not a database\n".repeat(200));

    assertThatThrownBy(() -> EmbeddedRangeStore.open(other))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("not an idgen store");
    assertThat(Files.readString(file)).isEqualTo("this is not a database\n".repeat(200));
  }

  @Test
  void should_fail_clearly_when_the_database_is_not_an_idgen_store() throws Exception {
    Path other = Files.createDirectory(dir.resolve("other"));
    Path file = other.resolve(EmbeddedRangeStore.FILE_NAME);
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)");
    }

    assertThatThrownBy(() -> EmbeddedRangeStore.open(other))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("not an idgen store");
  }

  @Test
  void should_refuse_a_store_written_by_a_newer_version() throws Exception {
    store.close();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(EmbeddedRangeStore.FILE_NAME));
        Statement s = c.createStatement()) {
      s.execute("PRAGMA user_version = " + (Schema.VERSION + 1));
    }

    assertThatThrownBy(() -> EmbeddedRangeStore.open(dir))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("newer idgen");
  }

  @Test
  void should_record_the_creation_time_and_upgrade_a_version_2_store_in_place() throws Exception {
    java.time.Instant before = java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
    SequenceDefinition d = created(prefix + "timed", 1, 100, 1);
    java.time.Instant after = java.time.Instant.now();
    assertThat(store.findStored(d.name()).orElseThrow().createTime()).hasValueSatisfying(
        t -> assertThat(t).isBetween(before, after));
    assertThat(store.listStored("", 100)).filteredOn(x -> x.definition().equals(d)).singleElement()
        .satisfies(x -> assertThat(x.createTime()).isEqualTo(store.findStored(d.name()).orElseThrow().createTime()));
    store.close();
    // A store written before version 3: no created_at column.
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(EmbeddedRangeStore.FILE_NAME));
        Statement s = c.createStatement()) {
      s.execute("ALTER TABLE sequences DROP COLUMN created_at");
      // ... nor what version 4 added (strict ordering).
      s.execute("ALTER TABLE sequences DROP COLUMN ordering");
      s.execute("ALTER TABLE sequences DROP COLUMN home_datacenter");
      s.execute("ALTER TABLE stripes DROP COLUMN owner_epoch");
      s.execute("DROP TABLE owners");
      // ... nor version 5's (how long a server's client leases may still be used).
      s.execute("ALTER TABLE servers DROP COLUMN leases_until_millis");
      // ... nor version 6's (ReserveRange's records) ...
      s.execute("DROP TABLE reservations");
      // ... nor version 7's (a sequence's version and deletion).
      s.execute("ALTER TABLE sequences DROP COLUMN version");
      s.execute("ALTER TABLE sequences DROP COLUMN deleted_at");
      s.execute("ALTER TABLE sequences DROP COLUMN expires_at");
      s.execute("ALTER TABLE sequences DROP COLUMN purged");
      s.execute("PRAGMA user_version = 2");
    }

    store = EmbeddedRangeStore.open(dir);

    assertThat(store.findStored(d.name()).orElseThrow().createTime()).as("unknown for an old row").isEmpty();
    assertThat(store.findStored(d.name()).orElseThrow().version()).as("never changed").isEqualTo(1);
    assertThat(store.findStored(d.name()).orElseThrow().deleted()).isFalse();
    assertThat(store.find(d.name())).contains(d);
    SequenceDefinition later = created(prefix + "later", 1, 100, 1);
    assertThat(store.findStored(later.name()).orElseThrow().createTime()).isPresent();
    assertThat(store.reserveRange(d, 10, "after-upgrade", "alice").first()).as("version 6's table").isPositive();
    assertThat(((EmbeddedRangeStore) store).pragma("user_version")).isEqualTo(Integer.toString(Schema.VERSION));
  }

  @Test
  void should_report_the_longest_client_lease_time_the_live_servers_announced() {
    SequenceDefinition d = created(prefix + "leases", 1, 100, 1);
    dev.idgen.core.AdvanceReceipt receipt = store.advance(d, 10);
    java.util.UUID one = java.util.UUID.randomUUID();
    store.announce("a", one, Long.MAX_VALUE, java.time.Duration.ofMinutes(1), java.time.Duration.ZERO);
    // the announcement rounds up to the next millisecond: a read within it still sees 1 ms
    assertThat(store.confirmations(receipt).leasesOutstanding().orElseThrow())
        .isBetween(java.time.Duration.ZERO, java.time.Duration.ofMillis(1));

    store.announce("b", java.util.UUID.randomUUID(), Long.MAX_VALUE, java.time.Duration.ofMinutes(1),
        java.time.Duration.ofSeconds(30));
    assertThat(store.confirmations(receipt).pending()).isEmpty();
    assertThat(store.confirmations(receipt).leasesOutstanding().orElseThrow())
        .isBetween(java.time.Duration.ofSeconds(29), java.time.Duration.ofSeconds(31));

    store.announce("c", java.util.UUID.randomUUID(), 0, java.time.Duration.ofMinutes(1)); // an older server
    assertThat(store.confirmations(receipt).leasesOutstanding()).as("one server did not say").isEmpty();
    assertThat(store.confirmations(receipt).pending()).containsExactly("local/c");
  }

  @Test
  void should_time_announcements_confirmations_and_creation_by_the_wall_clock_it_is_given() {
    java.util.concurrent.atomic.AtomicLong millis = new java.util.concurrent.atomic.AtomicLong(1_000_000);
    try (EmbeddedRangeStore s = EmbeddedRangeStore.open(dir.resolve("stepped"), millis::get)) {
      SequenceDefinition d = new SequenceDefinition("clocked", 1, 100, 1, 10, 100);
      s.create(d);
      assertThat(s.findStored("clocked").orElseThrow().createTime())
          .contains(java.time.Instant.ofEpochMilli(1_000_000));
      dev.idgen.core.AdvanceReceipt receipt = s.advance(d, 10);
      java.time.Duration lease = java.time.Duration.ofSeconds(10);
      s.announce("a", java.util.UUID.randomUUID(), 0, lease, java.time.Duration.ZERO);
      assertThat(s.confirmations(receipt).pending()).containsExactly("local/a");
      assertThat(s.confirmations(receipt).leasesOutstanding()).as("rounded up").contains(java.time.Duration.ofMillis(1));

      millis.addAndGet(1);
      assertThat(s.confirmations(receipt).leasesOutstanding()).contains(java.time.Duration.ZERO);
      s.announce("b", java.util.UUID.randomUUID(), Long.MAX_VALUE, lease, java.time.Duration.ofSeconds(30));
      assertThat(s.confirmations(receipt).leasesOutstanding()).contains(java.time.Duration.ofMillis(30_001));

      millis.addAndGet(9_999); // a's announcement has just expired, b's lasts 1 ms more
      assertThat(s.unconfirmed(receipt)).as("an expired announcement confirms nothing").isEmpty();
      assertThat(s.confirmations(receipt).leasesOutstanding()).contains(java.time.Duration.ofMillis(20_002));
      millis.addAndGet(1);
      assertThat(s.confirmations(receipt).leasesOutstanding()).as("no live server").contains(java.time.Duration.ZERO);
    }
  }

  // ---- what the contract leaves open

  @Test
  void should_report_exact_state_and_no_datacenter_reserves() {
    SequenceDefinition d = created(prefix + "state", 1, 100, 2);
    store.reserve(d, 0, 10);

    assertThat(store.state(d)).isEqualTo(new SequenceState(
        List.of(new SequenceState.Stripe(0, 10, 50), new SequenceState.Stripe(1, 0, 50)), List.of()));

    store.advance(d, 60);

    assertThat(store.state(d)).isEqualTo(new SequenceState(
        List.of(new SequenceState.Stripe(0, 30, 50), new SequenceState.Stripe(1, 30, 50)), List.of()));
  }

  @Test
  void should_refuse_a_definition_that_differs_from_the_stored_one() {
    SequenceDefinition d = created(prefix + "forged", 1, 100, 2);
    SequenceDefinition forged = new SequenceDefinition(d.name(), 1, 100, 3, 10, 100);

    assertThatThrownBy(() -> store.reserve(forged, 2, 1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("does not match the stored one");
    assertThatThrownBy(() -> store.advance(forged, 50)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> store.state(forged)).isInstanceOf(IllegalArgumentException.class);
    assertThat(store.reserve(d, 0, 1).first()).isEqualTo(1);
  }

  @Test
  void should_count_the_reservations_it_committed() {
    SequenceDefinition d = created(prefix + "counted", 1, 3, 1);
    store.reserve(d, 0, 1);
    store.reserve(d, 0, 5);
    assertThatThrownBy(() -> store.reserve(d, 0, 1)).isInstanceOf(SequenceExhaustedException.class);

    assertThat(embedded().reservations()).isEqualTo(2);
  }

  @Test
  void should_reject_calls_after_close_and_allow_closing_twice() {
    SequenceDefinition d = created(prefix + "closed", 1, 100, 1);

    store.close();
    store.close();

    assertThatThrownBy(() -> store.reserve(d, 0, 1)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
    assertThatThrownBy(() -> store.find(d.name())).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> store.create(SequenceDefinition.withDefaults(prefix + "late")))
        .isInstanceOf(IllegalStateException.class);
  }
}
