package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.CassandraAmbiguousCasIT.once;
import static dev.idgen.core.store.cassandra.CassandraAmbiguousCasIT.timeout;
import static dev.idgen.core.store.cassandra.LocalCassandra.DC1;
import static dev.idgen.core.store.cassandra.LocalCassandra.DC2;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.cql.ResultSet;
import dev.idgen.core.ForwardingRangeStore;
import dev.idgen.core.IdRange;
import dev.idgen.core.RangeAboveMaxException;
import dev.idgen.core.RangeStore;
import dev.idgen.core.Reservation;
import dev.idgen.core.ReserveRangeContractTest;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.store.cassandra.CassandraRangeStore.CasExecutor;
import dev.idgen.core.store.cassandra.CassandraRangeStore.CasKind;
import dev.idgen.testing.CassandraExtension;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code ReserveRange} on the Cassandra store, on the real two-datacenter cluster: the shared
 * {@link ReserveRangeContractTest} (the suite the embedded store passes) from a server in dc1; reservations
 * made while servers of both datacenters take blocks, with no overlap; and unknown outcomes of the
 * reservation's compare-and-set on the global cursor, made on purpose through the store's {@link CasExecutor}
 * seam: one that applied but whose answer was lost (the range is returned), one that another server's write
 * makes ambiguous (the call fails UNAVAILABLE and the range is never handed to anyone).
 */
@ExtendWith(CassandraExtension.class)
class CassandraReserveRangeIT extends ReserveRangeContractTest {
  private static String keyspace;
  private static CassandraRangeStore shared;

  @BeforeAll
  static void connect() {
    keyspace = LocalCassandra.newKeyspace("reserve");
    shared = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC1, true));
  }

  @AfterAll
  static void disconnect() {
    if (shared != null) {
      shared.close();
    }
  }

  @Override
  protected RangeStore newStore() {
    return new ForwardingRangeStore(shared) {}; // close() does not close the shared store
  }

  @Test
  void should_never_overlap_a_reservation_with_blocks_taken_by_servers_of_both_datacenters() throws Exception {
    SequenceDefinition d = new SequenceDefinition(prefix + "dcs", 1, 1_000_000_000L, 1, 100, 2_000);
    shared.create(d);
    try (CassandraRangeStore dc1 = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC1, false));
        CassandraRangeStore dc2 = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC2, false))) {
      ExecutorService pool = Executors.newFixedThreadPool(3);
      try {
        List<Future<List<IdRange>>> takers = new ArrayList<>();
        for (CassandraRangeStore s : List.of(dc1, dc2)) {
          takers.add(pool.submit(() -> {
            List<IdRange> got = new ArrayList<>();
            for (int i = 0; i < 150; i++) {
              got.add(s.reserve(d, 0, 100));
            }
            return got;
          }));
        }
        Future<List<Reservation>> reserver = pool.submit(() -> {
          List<Reservation> got = new ArrayList<>();
          for (int i = 0; i < 12; i++) {
            try {
              got.add((i % 2 == 0 ? dc1 : dc2).reserveRange(d, 1_000 + i, "mixed-" + i, "it"));
            } catch (StoreUnavailableException e) {
              // Under this contention on a loaded machine a compare-and-set may end with an outcome that
              // cannot be settled: the call fails and its range is a counted gap, returned to no one.
            }
          }
          return got;
        });
        List<long[]> intervals = new ArrayList<>();
        for (Future<List<IdRange>> f : takers) {
          for (IdRange r : f.get(120, SECONDS)) {
            intervals.add(new long[] {r.first(), r.last()});
          }
        }
        List<Reservation> reservations = reserver.get(120, SECONDS);
        assertThat(reservations).as("reservations made among the servers' takes").isNotEmpty();
        for (Reservation r : reservations) {
          intervals.add(new long[] {r.first(), r.last()});
        }
        assertNoOverlap(intervals);
        if (reservations.size() == 12) {
          assertThat(dc2.reservations(d, Long.MIN_VALUE, 100)).as("listed, from either datacenter")
              .containsExactlyInAnyOrderElementsOf(reservations);
        } else { // one whose outcome was not settled may be listed or not
          assertThat(dc2.reservations(d, Long.MIN_VALUE, 100)).as("listed, from either datacenter")
              .containsAll(reservations);
        }
      } finally {
        pool.shutdownNow();
      }
    }
  }

  @Test
  void should_return_a_range_whose_compare_and_set_applied_but_whose_answer_was_lost() {
    try (Pair p = new Pair(prefix + "lost-answer")) {
      p.a.casExecutor = once(CasKind.GLOBAL_RESERVE, (k, st, session) -> {
        ResultSet unused = session.apply(st); // applied; the answer is lost
        throw timeout();
      });

      Reservation r = p.a.reserveRange(p.seq, 100, "lost-answer", "it");

      assertThat(p.a.globalStats().resolvedApplied()).isEqualTo(1);
      Drained all = p.drain();
      assertThat(all.duplicates).isEmpty();
      assertThat(all.ids).as("nothing of the reservation handed out")
          .noneMatch(id -> id >= r.first() && id <= r.last());
      assertThat(all.ids.size() + r.count() + p.lost()).isEqualTo(Pair.SIZE);
      assertThat(p.lost()).isZero();
    }
  }

  @Test
  void should_fail_unavailable_and_never_hand_out_the_range_when_the_outcome_is_ambiguous() {
    try (Pair p = new Pair(prefix + "ambiguous")) {
      long cursorBefore = p.seq.start(); // nothing reserved yet
      List<IdRange> byB = new ArrayList<>();
      p.a.casExecutor = once(CasKind.GLOBAL_RESERVE, (k, st, session) -> {
        ResultSet unused = session.apply(st); // applied ...
        byB.add(p.b.reserve(p.seq, 0, 10)); // ... then B takes a DC block: the cursor's op id changes
        throw timeout();
      });

      assertThatThrownBy(() -> p.a.reserveRange(p.seq, 100, "ambiguous", "it"))
          .isInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining("never handed to anyone");

      assertThat(p.a.globalStats().resolvedAmbiguous()).isEqualTo(1);
      assertThat(p.a.globalStats().idsLost()).as("the range is a counted gap").isEqualTo(100);
      assertThat(p.a.reservations(p.seq, Long.MIN_VALUE, 10)).as("nothing recorded").isEmpty();
      Drained all = p.drain(byB);
      assertThat(all.duplicates).isEmpty();
      assertThat(all.ids).as("the range the ambiguous attempt may have taken is handed out by nobody")
          .noneMatch(id -> id >= cursorBefore && id < cursorBefore + 100);
      assertThat(all.ids.size() + p.lost()).isEqualTo(Pair.SIZE);

      // Nothing was recorded for the request id: a retry is a new reservation (here refused: nothing is left).
      assertThatThrownBy(() -> p.a.reserveRange(p.seq, 100, "ambiguous", "it"))
          .isInstanceOf(RangeAboveMaxException.class);
    }
  }

  private static void assertNoOverlap(List<long[]> intervals) {
    List<long[]> sorted = new ArrayList<>(intervals);
    sorted.sort(Comparator.comparingLong(r -> r[0]));
    for (int i = 1; i < sorted.size(); i++) {
      assertThat(sorted.get(i)[0]).as("[%s, %s] overlaps [%s, %s]", sorted.get(i - 1)[0], sorted.get(i - 1)[1],
          sorted.get(i)[0], sorted.get(i)[1]).isGreaterThan(sorted.get(i - 1)[1]);
    }
  }

  private record Drained(List<Long> ids, Set<Long> duplicates) {}

  /**
   * Two stores of dc1 of their own (their counters are what {@link #lost} adds up) on the class's keyspace,
   * and a small sequence of the test's own to drain.
   */
  private static final class Pair implements AutoCloseable {
    static final long SIZE = 1_500;
    final CassandraRangeStore a;
    final CassandraRangeStore b;
    final SequenceDefinition seq;

    Pair(String name) {
      a = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC1, false));
      b = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC1, false));
      seq = new SequenceDefinition(name, 1, SIZE, 1, 50, 500);
      a.create(seq);
    }

    long lost() {
      return a.poolStats().idsLost() + a.globalStats().idsLost() + b.poolStats().idsLost() + b.globalStats().idsLost();
    }

    Drained drain() {
      return drain(new ArrayList<>());
    }

    /** Reserves from both stores, alternately, until the sequence is used up; adds {@code already}. */
    Drained drain(List<IdRange> already) {
      a.casExecutor = CasExecutor.DIRECT;
      List<IdRange> got = new ArrayList<>(already);
      boolean aDone = false;
      boolean bDone = false;
      for (int i = 0; i < 10_000 && !(aDone && bDone); i++) {
        CassandraRangeStore s = i % 2 == 0 ? a : b;
        try {
          got.add(s.reserve(seq, 0, 53));
        } catch (SequenceExhaustedException e) {
          if (s == a) {
            aDone = true;
          } else {
            bDone = true;
          }
        }
      }
      assertThat(aDone && bDone).as("the sequence was used up").isTrue();
      List<Long> ids = new ArrayList<>();
      Set<Long> seen = new HashSet<>();
      Set<Long> duplicates = new HashSet<>();
      for (IdRange r : got) {
        for (long k = 0; k < r.count(); k++) {
          long id = r.get(k);
          ids.add(id);
          if (!seen.add(id)) {
            duplicates.add(id);
          }
        }
      }
      Collections.sort(ids);
      return new Drained(ids, duplicates);
    }

    @Override
    public void close() {
      a.close();
      b.close();
    }
  }
}
