package dev.idgen.core.store.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.RangeStore;
import dev.idgen.core.Reservation;
import dev.idgen.core.ReserveRangeContractTest;
import dev.idgen.core.SequenceDefinition;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ReserveRangeContractTest} on the embedded store, plus what survives a reopen. */
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
  void should_add_the_reservations_table_to_a_store_of_schema_version_5() throws Exception {
    SequenceDefinition d = created("upgraded", 1, 1_000_000, 1);
    store.close();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve(EmbeddedRangeStore.FILE_NAME));
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE reservations");
      s.execute("PRAGMA user_version = 5");
    }

    store = EmbeddedRangeStore.open(dir);

    Reservation r = store.reserveRange(d, 10, "after-upgrade", "alice");
    assertThat(store.reservations(d, Long.MIN_VALUE, 10)).containsExactly(r);
    assertThat(((EmbeddedRangeStore) store).pragma("user_version")).isEqualTo(Integer.toString(Schema.VERSION));
  }
}
