package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.LocalCassandra.DC1;
import static dev.idgen.core.store.cassandra.LocalCassandra.DC2;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.Allocator;
import dev.idgen.core.Confirmations;
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
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * AdvanceSequence on the real two-datacenter cluster: it returns only when every live server has
 * dropped its cached IDs at or below the floor, however late a server's floor poll is; it works where a
 * datacenter of the cluster holds no replica of the keyspace; and it holds against the interleavings that
 * once slipped past it: an advance racing a datacenter's first refill (the pool row did not exist yet), a
 * driver without schema metadata (the datacenters to cover must not shrink to the local one), and a
 * datacenter added to the replication while the driver's metadata still lacks it.
 */
@ExtendWith(CassandraExtension.class)
class CassandraAdvanceIT {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final long RACE_FLOOR = 50_000;

  @AutoClose
  private final Closer closer = new Closer();

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
    String ks = LocalCassandra.newKeyspace("firstrefill");
    CassandraRangeStore s1 = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)));
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
    String ks = LocalCassandra.newKeyspace("nopool");
    CassandraRangeStore s1 = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)));
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
    String ks = LocalCassandra.newKeyspace("nometa");
    CassandraRangeStore normal = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)));
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

  @Test
  void should_report_a_heartbeat_that_changes_with_every_announcement_and_keep_the_announcement_three_leases()
      throws Exception {
    String ks = LocalCassandra.newKeyspace("beat");
    CassandraRangeStore storeA = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)));
    CassandraRangeStore storeB = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
    AdvanceReceipt receipt = new AdvanceReceipt(Map.of(DC1, 1L, DC2, 1L));
    UUID incarnation = UUID.randomUUID();
    Duration lease = Duration.ofSeconds(40);

    storeB.announce("b", incarnation, 0, lease, lease.multipliedBy(3), Duration.ZERO);
    Confirmations first = storeA.confirmations(receipt);
    storeB.announce("b", incarnation, 0, lease, lease.multipliedBy(3), Duration.ZERO);
    Confirmations second = storeA.confirmations(receipt);
    Confirmations again = storeA.confirmations(receipt);

    String b = DC2 + "/" + FloorLogTable.rowKey("b", incarnation);
    assertThat(first.pending()).containsExactly(b);
    assertThat(first.heartbeats().get(b).lease()).isEqualTo(lease);
    assertThat(second.heartbeats().get(b).beat()).as("a renewal changes the heartbeat")
        .isNotEqualTo(first.heartbeats().get(b).beat());
    assertThat(again.heartbeats().get(b)).as("no renewal, the same heartbeat").isEqualTo(second.heartbeats().get(b));
    String[] hostPort = LocalCassandra.contactPoint(DC2).split(":");
    try (CqlSession operator = CqlSession.builder()
        .addContactPoint(new InetSocketAddress(hostPort[0], hostPort.length > 1 ? Integer.parseInt(hostPort[1]) : 9042))
        .withLocalDatacenter(DC2).build()) {
      int ttl = operator.execute(SimpleStatement.newInstance("SELECT ttl(applied) FROM " + ks + ".servers"
          + " WHERE datacenter = ? AND server = ?", DC2, FloorLogTable.rowKey("b", incarnation))).one().getInt(0);
      assertThat(ttl).as("kept three leases: only a node ahead by two leases could hide it").isGreaterThan(100);

      // A server of an older version writes its row, keyed by its name alone, without lease_ms: no heartbeat,
      // the TTL decides.
      operator.execute(SimpleStatement.newInstance("INSERT INTO " + ks + ".servers (datacenter, server,"
          + " incarnation, applied, leases_ms) VALUES (?, 'c', ?, 0, 0) USING TTL 40", DC2, UUID.randomUUID()));
      Confirmations older = storeA.confirmations(receipt);
      assertThat(older.pending()).containsExactlyInAnyOrder(b, DC2 + "/c");
      assertThat(older.heartbeats()).containsKey(b).doesNotContainKey(DC2 + "/c");
    }
  }

  /**
   * A server's clock ran ten minutes ahead, then was put back, and the server was restarted under the same
   * name after its earlier process's announcement had expired: that announcement's tombstones carry timestamps
   * ten minutes ahead. The new process's announcements must still be seen (and waited for): had they gone to
   * the same row, every one would be shadowed until the real time caught up, and advances would not wait for a
   * server that serves.
   */
  @Test
  void should_see_a_restarted_server_whose_earlier_process_announced_with_a_clock_ahead() throws Exception {
    String ks = LocalCassandra.newKeyspace("ahead");
    CassandraRangeStore storeA = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)));
    CassandraRangeStore earlier = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
    earlier.announceClock = () -> System.currentTimeMillis() + Duration.ofMinutes(10).toMillis();
    AdvanceReceipt receipt = new AdvanceReceipt(Map.of(DC2, 1L));
    Duration lease = Duration.ofSeconds(2);
    UUID before = UUID.randomUUID();
    // Kept five seconds only: the earlier process's row expires, into tombstones ten minutes ahead. Long enough
    // for the read below to find it on a busy machine (a 1 s TTL once expired before that read).
    earlier.announce("b", before, 0, lease, Duration.ofSeconds(5), Duration.ZERO);
    assertThat(processIn(storeA.confirmations(receipt), before)).as("the earlier process's announcement").isNotNull();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (processIn(storeA.confirmations(receipt), before) != null && System.nanoTime() - deadline < 0) {
      TimeUnit.MILLISECONDS.sleep(200);
    }
    assertThat(processIn(storeA.confirmations(receipt), before)).as("the earlier process's row expired").isNull();
    CassandraRangeStore restarted = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
    UUID after = UUID.randomUUID();

    restarted.announce("b", after, 0, lease, lease.multipliedBy(3), Duration.ZERO);
    Confirmations first = storeA.confirmations(receipt);
    String now = processIn(first, after);
    assertThat(now).as("the restarted process's announcement: %s", first.heartbeats()).isNotNull();
    assertThat(first.pending()).as("it has not applied version 1: the advance waits for it").containsExactly(now);
    restarted.announce("b", after, 0, lease, lease.multipliedBy(3), Duration.ZERO);
    assertThat(storeA.confirmations(receipt).heartbeats().get(now).beat()).as("a renewal changes the heartbeat")
        .isNotEqualTo(first.heartbeats().get(now).beat());

    restarted.announce("b", after, 1, lease, lease.multipliedBy(3), Duration.ZERO);
    assertThat(storeA.confirmations(receipt).pending()).as("confirmed once it applied version 1").isEmpty();
  }

  /**
   * A server crashed (its announcement stays, written with a clock ten minutes ahead) and came back under its
   * name: the new process's first announcement retires the crashed one's row, so an advance waits only for the
   * new process, not a whole lease for the one that is gone.
   */
  @Test
  void should_retire_the_announcement_of_a_crashed_process_when_it_comes_back_under_its_name() throws Exception {
    String ks = LocalCassandra.newKeyspace("retire");
    CassandraRangeStore storeA = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)));
    CassandraRangeStore crashed = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
    crashed.announceClock = () -> System.currentTimeMillis() + Duration.ofMinutes(10).toMillis();
    AdvanceReceipt receipt = new AdvanceReceipt(Map.of(DC2, 1L));
    Duration lease = Duration.ofSeconds(40);
    UUID before = UUID.randomUUID();
    crashed.announce("b", before, 0, lease, lease.multipliedBy(3), Duration.ZERO);
    UUID other = UUID.randomUUID();
    crashed.announce("other", other, 0, lease, lease.multipliedBy(3), Duration.ZERO);
    assertThat(storeA.confirmations(receipt).pending()).hasSize(2);
    CassandraRangeStore restarted = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
    UUID after = UUID.randomUUID();

    restarted.announce("b", after, 1, lease, lease.multipliedBy(3), Duration.ZERO);

    Confirmations read = storeA.confirmations(receipt);
    assertThat(processIn(read, before)).as("the crashed process's announcement, retired").isNull();
    assertThat(processIn(read, after)).as("the new process's").isNotNull();
    assertThat(read.pending()).as("only the other server, which has not applied version 1")
        .containsExactly(DC2 + "/" + FloorLogTable.rowKey("other", other));
  }

  /** The name under which {@code c} lists the announcement of process {@code incarnation}, or null. */
  private static String processIn(Confirmations c, UUID incarnation) {
    return c.heartbeats().entrySet().stream().filter(e -> e.getValue().beat().startsWith(incarnation + "@"))
        .map(Map.Entry::getKey).findFirst().orElse(null);
  }
}
