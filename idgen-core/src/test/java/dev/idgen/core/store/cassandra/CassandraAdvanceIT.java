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
import dev.idgen.testing.CassandraExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * AdvanceSequence on the real two-datacenter cluster: it returns only when every live server has
 * dropped its cached IDs at or below the floor, however late a server's floor poll is; and it works
 * where a datacenter of the cluster holds no replica of the keyspace.
 */
@ExtendWith(CassandraExtension.class)
class CassandraAdvanceIT {
  private static final Duration WAIT = Duration.ofSeconds(10);

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

  private static long min(List<IdRange> ranges) {
    return ranges.stream().mapToLong(IdRange::first).min().orElseThrow();
  }

  @Test
  void should_not_return_from_an_advance_before_a_server_with_a_stalled_floor_poll_dropped_its_cached_ids()
      throws Exception {
    String ks = LocalCassandra.newKeyspace("advance");
    CassandraRangeStore storeA = closeLater(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC1, true)));
    CassandraRangeStore storeB = closeLater(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
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
    Allocator a = closeLater(Allocator.builder(storeA).serverName("a").minNodeBlock(1_000).build());
    Allocator b = closeLater(Allocator.builder(slowB).serverName("b").minNodeBlock(1_000).build());
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
    CassandraRangeStore store = closeLater(CassandraRangeStore.connect(dc1Only));
    Allocator a = closeLater(Allocator.builder(store).minNodeBlock(100).build());
    a.create(new SequenceDefinition("local", 1, Long.MAX_VALUE, 2, 1_000, 10_000));
    a.allocate("local", 10, WAIT);

    a.advance("local", 500_000);

    assertThat(min(a.allocate("local", 10, WAIT))).isGreaterThan(500_000);
    assertThat(a.describe("local").state().datacenterReserves())
        .allSatisfy(r -> assertThat(r.datacenter()).isEqualTo(DC1));
  }
}
