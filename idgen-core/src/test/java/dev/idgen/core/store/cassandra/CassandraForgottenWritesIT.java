package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.LocalCassandra.DC1;
import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.testing.CassandraExtension;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A store that forgets writes it acknowledged, as a Cassandra replica does when it crashes in
 * {@code commitlog_sync: periodic} with no other replica holding the write (the long chaos run's 2,258
 * duplicates): the rows are put back, behind the store's back, to what they held earlier, and the store that
 * saw them hold more must not hand out again what it handed out from them.
 *
 * <p>The rows are put back with compare-and-sets at their own serial consistency (the pool at LOCAL_SERIAL,
 * the global cursor at SERIAL), which keeps one serial scope per partition, as the real loss would look to
 * the next Paxos round: an older row, a newer ballot.
 */
@ExtendWith(CassandraExtension.class)
@Tag("full") // about 45 s: the full set (CI), to keep the test command within its 8 minutes
class CassandraForgottenWritesIT {
  private static final long SIZE = 2_000;

  private String keyspace;
  private final List<CassandraRangeStore> stores = new ArrayList<>();
  private CassandraRangeStore store;
  private CqlSession session;
  private SequenceDefinition seq;

  @BeforeEach
  void setUp() {
    keyspace = LocalCassandra.newKeyspace("forgotten");
    store = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC1, true));
    stores.add(store);
    seq = new SequenceDefinition("s", 1, SIZE, 1, 10, 100);
    store.create(seq);
    String[] hostPort = LocalCassandra.contactPoint(DC1).split(":");
    session = CqlSession.builder()
        .addContactPoint(new InetSocketAddress(hostPort[0], hostPort.length > 1 ? Integer.parseInt(hostPort[1]) : 9042))
        .withLocalDatacenter(DC1).withKeyspace(keyspace).build();
  }

  @AfterEach
  void close() {
    stores.forEach(CassandraRangeStore::close);
    if (session != null) {
      session.close();
    }
  }

  @Test
  void should_not_hand_out_again_what_a_pool_that_forgot_its_reservations_still_shows() {
    List<IdRange> handed = new ArrayList<>();
    handed.add(store.reserve(seq, 0, 10));
    Row before = pool();
    for (int i = 0; i < 3; i++) {
      handed.add(store.reserve(seq, 0, 10)); // acknowledged, then forgotten below
    }

    putBackPool(before);
    IdRange next = store.reserve(seq, 0, 10);

    assertThat(overlapping(next, handed)).as("%s against what was handed out before the loss %s", next, handed)
        .isEmpty();
    CasStats pool = store.poolStats();
    assertThat(pool.regressions()).as("the pool's taken went back: noticed once").isEqualTo(1);
    assertThat(pool.idsLost()).as("what the forgetful pool still showed is a counted gap")
        .isGreaterThanOrEqualTo(size(before.getList("blocks", Long.class)));
    handed.add(next);
    assertNoDuplicatesUntilExhausted(handed);
  }

  @Test
  void should_not_take_again_what_a_global_cursor_that_forgot_its_writes_still_shows() {
    List<IdRange> handed = handOutBeyondTheFirstDcBlockAndForget();

    List<IdRange> after = reserveAfterTheLoss(handed);

    assertThat(store.poolStats().regressions()).as("the pool went back").isEqualTo(1);
    assertThat(store.globalStats().regressions()).as("the global cursor went back").isEqualTo(1);
    handed.addAll(after);
    assertNoDuplicatesUntilExhausted(handed);
  }

  @Test
  void should_count_the_skip_of_a_global_take_that_a_later_read_found_applied() {
    List<IdRange> handed = handOutBeyondTheFirstDcBlockAndForget();
    // The take that skips the forgotten part: its answer is lost, the read-back shows the row unchanged
    // ("not applied"), and the statement applies after that; the next attempt loses, and the read after it
    // finds the first attempt's op id.
    AtomicReference<Runnable> heldBack = new AtomicReference<>();
    store.casExecutor = CassandraAmbiguousCasIT.once(CassandraRangeStore.CasKind.GLOBAL_TAKE,
        new CassandraRangeStore.CasExecutor() {
          @Override
          public ResultSet execute(CassandraRangeStore.CasKind k, BoundStatement st,
              Function<BoundStatement, ResultSet> session) {
            heldBack.set(() -> {
              ResultSet unused = session.apply(st);
            });
            throw CassandraAmbiguousCasIT.timeout();
          }

          @Override
          public void afterReadBack(CassandraRangeStore.CasKind k) {
            Runnable late = heldBack.getAndSet(null);
            if (late != null) {
              late.run();
            }
          }
        });

    reserveAfterTheLoss(handed);

    assertThat(store.globalStats().recovered()).as("the later read found the held-back take applied").isEqualTo(1);
    assertThat(store.globalStats().regressions()).as("its skip past the forgotten writes is counted").isEqualTo(1);
    assertThat(store.globalStats().idsLost()).isPositive();
  }

  /**
   * Hands out IDs from beyond the first DC block (the global cursor moved on), then puts the global cursor
   * and the pool back to before: without the guard those IDs would be taken from the cursor again.
   */
  private List<IdRange> handOutBeyondTheFirstDcBlockAndForget() {
    List<IdRange> handed = new ArrayList<>();
    handed.add(store.reserve(seq, 0, 10));
    Row poolBefore = pool();
    Row globalBefore = global();
    long firstBlockEnd = globalBefore.getLong("reserved"); // an index: IDs up to start + index - 1
    for (int i = 0; i < 500 && handed.stream().noneMatch(r -> r.last() >= seq.start() + firstBlockEnd); i++) {
      handed.add(store.reserve(seq, 0, 10));
    }
    assertThat(handed).as("IDs handed out beyond the first DC block").anyMatch(r -> r.last() >= seq.start() + firstBlockEnd);
    putBackGlobal(globalBefore);
    putBackPool(poolBefore);
    return handed;
  }

  /** Thirty reservations after the loss: each from blocks the cursor gave after it, none handed out before. */
  private List<IdRange> reserveAfterTheLoss(List<IdRange> handed) {
    List<IdRange> after = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      after.add(store.reserve(seq, 0, 10));
    }
    for (IdRange r : after) {
      assertThat(overlapping(r, handed)).as("%s against what was handed out before the loss", r).isEmpty();
    }
    return after;
  }

  private Row pool() {
    return session.execute(SimpleStatement.newInstance(
        "SELECT blocks, taken, appended, appended_below, op FROM dc_pools WHERE sequence = 's' AND stripe = 0"
            + " AND datacenter = ?", DC1).setConsistencyLevel(DefaultConsistencyLevel.LOCAL_SERIAL)).one();
  }

  private Row global() {
    return session.execute(SimpleStatement.newInstance(
        "SELECT reserved, op FROM global_cursors WHERE sequence = 's' AND stripe = 0")
        .setConsistencyLevel(DefaultConsistencyLevel.SERIAL)).one();
  }

  /** The pool row as it was in {@code old}, written as the next Paxos round on it (a newer op id). */
  private void putBackPool(Row old) {
    for (int attempt = 0; attempt < 20; attempt++) {
      UUID current = pool().getUuid("op");
      ResultSet rs = session.execute(SimpleStatement.newInstance("UPDATE dc_pools SET blocks = ?, taken = ?,"
              + " appended = ?, appended_below = ?, op = ? WHERE sequence = 's' AND stripe = 0 AND datacenter = ?"
              + " IF op = ?", old.getList("blocks", Long.class), old.getLong("taken"),
              old.getList("appended", Long.class), old.isNull("appended_below") ? null : old.getLong("appended_below"),
              UUID.randomUUID(), DC1, current)
          .setSerialConsistencyLevel(DefaultConsistencyLevel.LOCAL_SERIAL)
          .setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM));
      if (rs.wasApplied()) {
        return;
      }
    }
    throw new AssertionError("could not put the pool row back");
  }

  private void putBackGlobal(Row old) {
    for (int attempt = 0; attempt < 20; attempt++) {
      UUID current = global().getUuid("op");
      ResultSet rs = session.execute(SimpleStatement.newInstance("UPDATE global_cursors SET reserved = ?, op = ?"
              + " WHERE sequence = 's' AND stripe = 0 IF op = ?", old.getLong("reserved"), UUID.randomUUID(), current)
          .setSerialConsistencyLevel(DefaultConsistencyLevel.SERIAL)
          .setConsistencyLevel(DefaultConsistencyLevel.QUORUM));
      if (rs.wasApplied()) {
        return;
      }
    }
    throw new AssertionError("could not put the global cursor back");
  }

  /** IDs in a pool row's {@code blocks}, {@code [from, to)} index pairs. */
  private static long size(List<Long> blocks) {
    long n = 0;
    for (int i = 0; i + 1 < blocks.size(); i += 2) {
      n += blocks.get(i + 1) - blocks.get(i);
    }
    return n;
  }

  private static List<IdRange> overlapping(IdRange r, List<IdRange> others) {
    List<IdRange> out = new ArrayList<>();
    for (IdRange o : others) {
      if (r.first() <= o.last() && o.first() <= r.last()) {
        out.add(o);
      }
    }
    return out;
  }

  /** Takes the rest of the sequence and checks that no ID was handed out twice, in all. */
  private void assertNoDuplicatesUntilExhausted(List<IdRange> handed) {
    for (int i = 0; i < 1_000; i++) {
      try {
        handed.add(store.reserve(seq, 0, 37));
      } catch (SequenceExhaustedException e) {
        break;
      }
    }
    Set<Long> seen = new HashSet<>();
    for (IdRange r : handed) {
      for (long k = 0; k < r.count(); k++) {
        assertThat(seen.add(r.get(k))).as("ID %d handed out twice", r.get(k)).isTrue();
      }
    }
    assertThat(seen).as("some IDs were handed out").isNotEmpty();
  }
}
