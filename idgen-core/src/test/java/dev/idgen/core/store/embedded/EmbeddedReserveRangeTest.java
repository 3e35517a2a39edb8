package dev.idgen.core.store.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.RangeStore;
import dev.idgen.core.Reservation;
import dev.idgen.core.ReserveRangeContractTest;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceUpdate;
import dev.idgen.core.StoredSequence;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/** {@link ReserveRangeContractTest} on the embedded store, plus what survives a reopen. */
@Execution(ExecutionMode.CONCURRENT) // shares nothing static; beside the classes that wait on real time
class EmbeddedReserveRangeTest extends ReserveRangeContractTest {
  @TempDir
  Path dir;

  @Override
  protected RangeStore newStore() {
    return EmbeddedRangeStore.open(dir);
  }

  @Test
  void should_keep_reservations_and_their_request_ids_across_a_reopen() {
    SequenceDefinition d = created("durable", 1, 1_000_000, 1);
    Reservation r = store.reserveRange(d, 100, "kept", "alice");
    store.close();

    store = EmbeddedRangeStore.open(dir);

    assertThat(store.reservations(d, Long.MIN_VALUE, 10)).containsExactly(r);
    assertThat(store.reserveRange(d, 100, "kept", "bob").asStored()).isEqualTo(r);
    assertThat(store.reserve(d, 0, 10).first()).isGreaterThan(r.last());
  }

  @Test
  void should_add_the_reservations_table_and_the_sequences_life_to_a_store_of_schema_version_5() throws Exception {
    SequenceDefinition d = created("upgraded", 1, 1_000_000, 1);
    store.close();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(EmbeddedRangeStore.FILE_NAME));
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE reservations");
      dropLifecycleColumns(s);
      s.execute("PRAGMA user_version = 5");
    }

    store = EmbeddedRangeStore.open(dir);

    Reservation r = store.reserveRange(d, 10, "after-upgrade", "alice");
    assertThat(store.reservations(d, Long.MIN_VALUE, 10)).containsExactly(r);
    assertDeletable(d);
    assertThat(((EmbeddedRangeStore) store).pragma("user_version")).isEqualTo(Integer.toString(Schema.VERSION));
  }

  @Test
  void should_keep_the_reservations_and_add_the_sequences_life_to_a_store_of_schema_version_6() throws Exception {
    SequenceDefinition d = created("six", 1, 1_000_000, 1);
    Reservation before = store.reserveRange(d, 100, "before-upgrade", "alice");
    store.close();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(EmbeddedRangeStore.FILE_NAME));
        Statement s = c.createStatement()) {
      dropLifecycleColumns(s);
      s.execute("PRAGMA user_version = 6");
    }

    store = EmbeddedRangeStore.open(dir);

    assertThat(store.reservations(d, Long.MIN_VALUE, 10)).containsExactly(before);
    assertThat(store.reserveRange(d, 100, "before-upgrade", "bob").asStored()).as("a retry").isEqualTo(before);
    assertThat(store.findStored(d.name()).orElseThrow().version()).as("never changed").isEqualTo(1);
    assertDeletable(d);
    assertThat(((EmbeddedRangeStore) store).pragma("user_version")).isEqualTo(Integer.toString(Schema.VERSION));
  }

  /**
   * A development build of version 7's change marked its files version 6 with the sequences' new columns but
   * without version 6's reservations table: such a file is upgraded too, its sequences' lives kept.
   */
  @Test
  void should_upgrade_a_version_6_store_that_has_the_sequences_life_but_no_reservations() throws Exception {
    SequenceDefinition d = created("early", 1, 1_000_000, 1);
    StoredSequence stored = store.findStored(d.name()).orElseThrow();
    store.redefine(stored, stored.redefined(SequenceUpdate.NONE.withMax(2_000_000).applyTo(d)));
    store.close();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(EmbeddedRangeStore.FILE_NAME));
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE reservations");
      s.execute("PRAGMA user_version = 6");
    }

    store = EmbeddedRangeStore.open(dir);

    StoredSequence upgraded = store.findStored(d.name()).orElseThrow();
    assertThat(upgraded.version()).as("kept").isEqualTo(2);
    assertThat(upgraded.definition().max()).isEqualTo(2_000_000);
    Reservation r = store.reserveRange(upgraded.definition(), 10, "after-upgrade", "alice");
    assertThat(store.reservations(upgraded.definition(), Long.MIN_VALUE, 10)).containsExactly(r);
    assertThat(((EmbeddedRangeStore) store).pragma("user_version")).isEqualTo(Integer.toString(Schema.VERSION));
  }

  /** What schema version 7 added: a sequence's version and deletion. */
  private static void dropLifecycleColumns(Statement s) throws Exception {
    s.execute("ALTER TABLE sequences DROP COLUMN version");
    s.execute("ALTER TABLE sequences DROP COLUMN deleted_at");
    s.execute("ALTER TABLE sequences DROP COLUMN expires_at");
    s.execute("ALTER TABLE sequences DROP COLUMN purged");
  }

  /** The upgraded file records a deletion: version 7's columns are there. */
  private void assertDeletable(SequenceDefinition d) {
    StoredSequence stored = store.findStored(d.name()).orElseThrow();
    Instant at = Instant.ofEpochMilli(1_000_000);
    store.redefine(stored, stored.deletedAt(at, at.plusSeconds(60)));
    StoredSequence deleted = store.findStored(d.name()).orElseThrow();
    assertThat(deleted.deleteTime()).contains(at);
    assertThat(deleted.version()).isEqualTo(stored.version() + 1);
  }
}
