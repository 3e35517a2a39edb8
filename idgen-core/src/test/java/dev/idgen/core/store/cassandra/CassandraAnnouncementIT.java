package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.LocalCassandra.DC1;
import static dev.idgen.core.store.cassandra.LocalCassandra.DC2;
import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.Confirmations;
import dev.idgen.testing.CassandraExtension;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The servers' announcements on the real two-datacenter cluster, which an advance reads to know whom it waits
 * for: each renewal changes the heartbeat and the row is kept three leases; a restarted server is seen even
 * when its earlier process announced with a clock ahead; and a process that comes back under its name retires
 * the row of the one that crashed. (Split from {@link CassandraAdvanceIT}, so that the two run side by side:
 * each test here has a keyspace of its own, whose servers table it reads whole.)
 */
@ExtendWith(CassandraExtension.class)
class CassandraAnnouncementIT {
  @AutoClose
  private final Closer closer = new Closer();

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
