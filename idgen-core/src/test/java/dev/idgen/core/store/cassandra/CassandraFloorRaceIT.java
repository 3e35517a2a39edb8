package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.LocalCassandra.DC1;
import static dev.idgen.core.store.cassandra.LocalCassandra.DC2;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.Allocator;
import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.testing.CassandraExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * AdvanceSequence against the interleavings that once slipped past it, on the real two-datacenter
 * cluster: an advance racing a datacenter's first refill (the pool row did not exist yet), and a driver
 * without schema metadata (the datacenters to cover must not shrink to the local one).
 */
@ExtendWith(CassandraExtension.class)
class CassandraFloorRaceIT {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final long FLOOR = 50_000;

  private final List<AutoCloseable> closeables = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
  }

  private <T extends AutoCloseable> T closeLater(T c) {
    closeables.add(c);
    return c;
  }

  @Test
  void should_cut_a_first_refill_that_raced_an_advance_at_the_floor() {
    String ks = LocalCassandra.newKeyspace("firstrefill");
    CassandraRangeStore s1 = closeLater(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)));
    CassandraRangeStore s2 = closeLater(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, false)));
    SequenceDefinition def = new SequenceDefinition("race", 1, Long.MAX_VALUE, 1, 1_000, 100_000);
    s1.create(def);
    // s2 has taken [1, 100001) from the global cursor for dc1's pool, which does not exist yet; the advance
    // runs before the block is appended (the global cursor is past the floor already, so only the pool can cut).
    AtomicBoolean once = new AtomicBoolean(true);
    AtomicReference<AdvanceReceipt> receipt = new AtomicReference<>();
    s2.casExecutor = (kind, statement, session) -> {
      if (kind == CassandraRangeStore.CasKind.POOL_APPEND && once.getAndSet(false)) {
        receipt.set(s1.advance(def, FLOOR));
      }
      return session.apply(statement);
    };

    IdRange first = s2.reserve(def, 0, 10);

    assertThat(receipt.get()).as("the advance ran between the two steps of the refill").isNotNull();
    assertThat(first.first()).as("s2's own reservation").isGreaterThan(FLOOR);
    // A store (a server) that comes later, with no memory of the floor, reads the pool as it is.
    CassandraRangeStore s3 = closeLater(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, false)));
    for (int i = 0; i < 20; i++) {
      assertThat(s3.reserve(def, 0, 1_000).first()).isGreaterThan(FLOOR);
    }
    assertThat(s3.floor(def)).isEqualTo(FLOOR);
    // And an allocator loaded there now, as after a restart or an idle unload.
    Allocator late = closeLater(Allocator.builder(s3).serverName("late").minNodeBlock(100).build());
    assertThat(late.allocate("race", 50, WAIT)).allSatisfy(r -> assertThat(r.first()).isGreaterThan(FLOOR));
  }

  @Test
  void should_create_a_missing_pool_row_of_every_datacenter_at_the_floor() {
    String ks = LocalCassandra.newKeyspace("nopool");
    CassandraRangeStore s1 = closeLater(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)));
    SequenceDefinition def = new SequenceDefinition("fresh", 1, Long.MAX_VALUE, 2, 1_000, 100_000);
    s1.create(def);

    s1.advance(def, FLOOR);

    CassandraRangeStore s2 = closeLater(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
    assertThat(s1.floor(def)).isEqualTo(FLOOR);
    assertThat(s2.floor(def)).as("dc2's pool rows carry the floor before dc2 ever refilled").isEqualTo(FLOOR);
  }

  @Test
  void should_cover_every_datacenter_when_the_driver_has_no_schema_metadata() {
    String ks = LocalCassandra.newKeyspace("nometa");
    CassandraRangeStore normal = closeLater(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)));
    // create-schema on: its statements are idempotent, and without schema metadata nothing can be checked.
    CassandraRangeStore blind = closeLater(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)
        .withDriverConfig("advanced.metadata.schema.enabled = false")));
    SequenceDefinition def = new SequenceDefinition("blind", 1, Long.MAX_VALUE, 1, 1_000, 100_000);
    normal.create(def);

    AdvanceReceipt receipt = blind.advance(def, FLOOR);

    assertThat(receipt.versions()).containsOnlyKeys(DC1, DC2);
    CassandraRangeStore dc2 = closeLater(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
    assertThat(dc2.reserve(def, 0, 10).first()).isGreaterThan(FLOOR);
  }
}
