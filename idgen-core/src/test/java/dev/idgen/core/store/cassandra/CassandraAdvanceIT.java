package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.LocalCassandra.DC1;
import static dev.idgen.core.store.cassandra.LocalCassandra.DC2;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.Allocator;
import dev.idgen.core.FloorLog;
import dev.idgen.core.ForwardingRangeStore;
import dev.idgen.core.IdRange;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceDefinition;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import dev.idgen.testing.CassandraExtension;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * AdvanceSequence on the real two-datacenter cluster: it returns only when every live server has
 * dropped its cached IDs at or below the floor, however late a server's floor poll is; it works where a
 * datacenter of the cluster holds no replica of the keyspace; and it holds against the interleavings that
 * once slipped past it: an advance racing a datacenter's first refill (the pool row did not exist yet), a
 * driver without schema metadata (the datacenters to cover must not shrink to the local one), and a
 * datacenter added to the replication while the driver's metadata still lacks it. (The servers'
 * announcements, which an advance reads, are {@link CassandraAnnouncementIT}'s.)
 *
 * <p>The tests that only read and write their own sequence share one keyspace ({@link #shared}); those that
 * read a whole table of the keyspace (the servers' announcements, the floor log's versions) or make it
 * differently have one of their own.
 */
@ExtendWith(CassandraExtension.class)
class CassandraAdvanceIT {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final long RACE_FLOOR = 50_000;

  /** The keyspace of the tests that need only a sequence of their own (each test names its own). */
  private static String shared;

  @AutoClose
  private final Closer closer = new Closer();

  @BeforeAll
  static void sharedKeyspace() {
    shared = LocalCassandra.newKeyspace("advshared");
    CassandraRangeStore.connect(LocalCassandra.settings(shared, DC1, true)).close();
  }

  private static long min(List<IdRange> ranges) {
    return ranges.stream().mapToLong(IdRange::first).min().orElseThrow();
  }

  @Test
  void should_not_return_from_an_advance_before_a_server_with_a_stalled_floor_poll_dropped_its_cached_ids()
      throws Exception {
    String ks = LocalCassandra.newKeyspace("advance");
    CassandraRangeStore storeA = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)));
    CassandraRangeStore storeB = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
    CountDownLatch stalling = new CountDownLatch(1);
    AtomicBoolean stallNext = new AtomicBoolean();
    RangeStore slowB = new ForwardingRangeStore(storeB) {
      @Override
      public FloorLog floorLog(long afterVersion) {
        if (stallNext.getAndSet(false)) {
          stalling.countDown();
          try {
            Thread.sleep(3_000); // one slow read among many, a GC pause
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return delegate().floorLog(afterVersion);
      }
    };
    Allocator a = closer.add(Allocator.builder(storeA).serverName("a").minNodeBlock(1_000).build());
    Allocator b = closer.add(Allocator.builder(slowB).serverName("b").minNodeBlock(1_000).build());
    a.create(new SequenceDefinition("legacy", 1, Long.MAX_VALUE, 1, 10_000, 100_000));
    assertThat(min(b.allocate("legacy", 5, WAIT))).isLessThan(1_000_000); // b caches IDs below the floor

    stallNext.set(true);
    assertThat(stalling.await(5, TimeUnit.SECONDS)).as("b's poller is stalled").isTrue();
    a.advance("legacy", 1_000_000);

    for (int i = 0; i < 50; i++) {
      assertThat(min(b.allocate("legacy", 7, WAIT))).isGreaterThan(1_000_000);
    }
    assertThat(storeA.unconfirmed(new AdvanceReceipt(Map.of(DC1, 1L, DC2, 1L)))).isEmpty();
  }

  @Test
  void should_advance_where_a_datacenter_of_the_cluster_holds_no_replica_of_the_keyspace() throws Exception {
    String ks = LocalCassandra.newKeyspace("onedc");
    CassandraSettings base = LocalCassandra.settings(ks, DC1, true);
    CassandraSettings dc1Only = new CassandraSettings(base.contactPoints(), DC1, ks, true, Map.of(DC1, 1),
        base.username(), base.password(), base.tls(),
        base.requestTimeout(), base.casDeadline(), base.poolRefillStep(), base.floorRefresh(),
        base.isolationRunway(), base.driverConfig());
    CassandraRangeStore store = closer.add(CassandraRangeStore.connect(dc1Only));
    Allocator a = closer.add(Allocator.builder(store).minNodeBlock(100).build());
    a.create(new SequenceDefinition("local", 1, Long.MAX_VALUE, 2, 1_000, 10_000));
    a.allocate("local", 10, WAIT);

    a.advance("local", 500_000);

    assertThat(min(a.allocate("local", 10, WAIT))).isGreaterThan(500_000);
    assertThat(a.describe("local").state().datacenterReserves())
        .allSatisfy(r -> assertThat(r.datacenter()).isEqualTo(DC1));
  }

  @Test
  void should_cut_a_first_refill_that_raced_an_advance_at_the_floor() {
    String ks = shared;
    CassandraRangeStore s1 = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, false)));
    CassandraRangeStore s2 = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, false)));
    SequenceDefinition def = new SequenceDefinition("race", 1, Long.MAX_VALUE, 1, 1_000, 100_000);
    s1.create(def);
    // s2 has taken [1, 100001) from the global cursor for dc1's pool, which does not exist yet; the advance
    // runs before the block is appended (the global cursor is past the floor already, so only the pool can cut).
    AtomicBoolean once = new AtomicBoolean(true);
    AtomicReference<AdvanceReceipt> receipt = new AtomicReference<>();
    s2.casExecutor = (kind, statement, session) -> {
      if (kind == CassandraRangeStore.CasKind.POOL_APPEND && once.getAndSet(false)) {
        receipt.set(s1.advance(def, RACE_FLOOR));
      }
      return session.apply(statement);
    };

    IdRange first = s2.reserve(def, 0, 10);

    assertThat(receipt.get()).as("the advance ran between the two steps of the refill").isNotNull();
    assertThat(first.first()).as("s2's own reservation").isGreaterThan(RACE_FLOOR);
    // A store (a server) that comes later, with no memory of the floor, reads the pool as it is.
    CassandraRangeStore s3 = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, false)));
    for (int i = 0; i < 20; i++) {
      assertThat(s3.reserve(def, 0, 1_000).first()).isGreaterThan(RACE_FLOOR);
    }
    assertThat(s3.floor(def)).isEqualTo(RACE_FLOOR);
    // And an allocator loaded there now, as after a restart or an idle unload.
    Allocator late = closer.add(Allocator.builder(s3).serverName("late").minNodeBlock(100).build());
    assertThat(late.allocate("race", 50, WAIT)).allSatisfy(r -> assertThat(r.first()).isGreaterThan(RACE_FLOOR));
  }

  @Test
  void should_create_a_missing_pool_row_of_every_datacenter_at_the_floor() {
    String ks = shared;
    CassandraRangeStore s1 = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, false)));
    SequenceDefinition def = new SequenceDefinition("fresh", 1, Long.MAX_VALUE, 2, 1_000, 100_000);
    s1.create(def);

    s1.advance(def, RACE_FLOOR);

    CassandraRangeStore s2 = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
    assertThat(s1.floor(def)).isEqualTo(RACE_FLOOR);
    assertThat(s2.floor(def)).as("dc2's pool rows carry the floor before dc2 ever refilled").isEqualTo(RACE_FLOOR);
  }

  @Tag("full") // about 50 s (a keyspace altered twice): the full set, to keep the test command within its 8 minutes
  @Test
  void should_cover_a_datacenter_added_to_the_replication_as_soon_as_the_alter_returned() {
    String ks = LocalCassandra.newKeyspace("adddc");
    CassandraSettings base = LocalCassandra.settings(ks, DC1, true);
    // Replicated to dc1 only, by a store whose driver learns of a schema change 5 s after its event (1 s by
    // default; longer while its control connection reconnects): its metadata still says dc1 only when the
    // advance below runs, as a server's does right after an operator's ALTER KEYSPACE.
    CassandraSettings dc1Only = new CassandraSettings(base.contactPoints(), DC1, ks, true, Map.of(DC1, 1),
        base.username(), base.password(), base.tls(), base.requestTimeout(), base.casDeadline(),
        base.poolRefillStep(), base.floorRefresh(), base.isolationRunway(),
        "advanced.metadata.schema.debouncer.window = 5 seconds");
    CassandraRangeStore store = closer.add(CassandraRangeStore.connect(dc1Only));
    SequenceDefinition def = new SequenceDefinition("grow", 1, Long.MAX_VALUE, 1, 1_000, 100_000);
    store.create(def);
    store.reserve(def, 0, 10);
    String[] hostPort = LocalCassandra.contactPoint(DC1).split(":");
    try (CqlSession operator = CqlSession.builder()
        .addContactPoint(new InetSocketAddress(hostPort[0], hostPort.length > 1 ? Integer.parseInt(hostPort[1]) : 9042))
        .withLocalDatacenter(DC1).build()) {
      ResultSet altered = operator.execute(SimpleStatement.newInstance("ALTER KEYSPACE " + ks + " WITH replication"
          + " = {'class': 'NetworkTopologyStrategy', '" + DC1 + "': 1, '" + DC2 + "': 1}").setTimeout(Duration.ofSeconds(30)));
      assertThat(altered.getExecutionInfo().isSchemaInAgreement()).as("the nodes agree on the new replication").isTrue();
    }

    AdvanceReceipt receipt = store.advance(def, RACE_FLOOR);

    assertThat(receipt.versions()).as("the datacenters the advance covered").containsOnlyKeys(DC1, DC2);
    CassandraRangeStore dc2 = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
    assertThat(dc2.floor(def)).as("dc2's pool row, made at the floor by the advance").isEqualTo(RACE_FLOOR);
    assertThat(dc2.reserve(def, 0, 10).first()).as("dc2's first reservation").isGreaterThan(RACE_FLOOR);
  }

  @Test
  void should_cover_every_datacenter_when_the_driver_has_no_schema_metadata() {
    String ks = shared;
    CassandraRangeStore normal = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, false)));
    // create-schema on: its statements are idempotent, and without schema metadata nothing can be checked.
    CassandraRangeStore blind = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)
        .withDriverConfig("advanced.metadata.schema.enabled = false")));
    SequenceDefinition def = new SequenceDefinition("blind", 1, Long.MAX_VALUE, 1, 1_000, 100_000);
    normal.create(def);

    AdvanceReceipt receipt = blind.advance(def, RACE_FLOOR);

    assertThat(receipt.versions()).containsOnlyKeys(DC1, DC2);
    CassandraRangeStore dc2 = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
    assertThat(dc2.reserve(def, 0, 10).first()).isGreaterThan(RACE_FLOOR);
  }
}
