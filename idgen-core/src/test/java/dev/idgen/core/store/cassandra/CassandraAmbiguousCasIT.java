package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.LocalCassandra.DC1;
import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.store.cassandra.CassandraRangeStore.CasExecutor;
import dev.idgen.core.store.cassandra.CassandraRangeStore.CasKind;
import dev.idgen.testing.CassandraExtension;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The duplicate windows of unknown compare-and-set outcomes, made on purpose through the store's
 * {@link CasExecutor} seam on the real cluster: a CAS that applied but is reported as a timeout while a
 * second store of the same datacenter writes the row before the read-back, and a CAS held back until
 * after the read-back and applied then ("late CAS"). Each test drains a small sequence to its end from
 * two stores and checks that no ID is handed out twice and that every ID is either handed out or counted
 * lost.
 */
@ExtendWith(CassandraExtension.class)
class CassandraAmbiguousCasIT {
  private static final long START = 1;
  private static final long SIZE = 1_500;

  /**
   * One keyspace for the class: each test drains a sequence of its own, through stores of its own (whose
   * counters {@link #lost} adds up).
   */
  private static String keyspace;
  private static final AtomicInteger tests = new AtomicInteger();
  private final List<CassandraRangeStore> stores = new ArrayList<>();
  private SequenceDefinition seq;
  private CassandraRangeStore a;
  private CassandraRangeStore b;

  @BeforeAll
  static void createKeyspace() {
    keyspace = LocalCassandra.newKeyspace("ambiguous");
    CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC1, true)).close();
  }

  @BeforeEach
  void setUp() {
    a = store(false);
    b = store(false);
    seq = new SequenceDefinition("s" + tests.incrementAndGet(), START, START + SIZE - 1, 1, 50, 500);
    a.create(seq);
  }

  @AfterEach
  void close() {
    stores.forEach(CassandraRangeStore::close);
  }

  private CassandraRangeStore store(boolean createSchema) {
    CassandraRangeStore s = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC1, createSchema));
    stores.add(s);
    return s;
  }

  /** Fires {@code fault} instead of the first CAS of {@code kind}; every other CAS runs as usual. */
  static CasExecutor once(CasKind kind, CasExecutor fault) {
    AtomicBoolean fired = new AtomicBoolean();
    return new CasExecutor() {
      @Override
      public ResultSet execute(CasKind k, BoundStatement st, Function<BoundStatement, ResultSet> session) {
        if (k == kind && fired.compareAndSet(false, true)) {
          return fault.execute(k, st, session);
        }
        return session.apply(st);
      }

      @Override
      public void afterReadBack(CasKind k) {
        fault.afterReadBack(k);
      }
    };
  }

  static DriverTimeoutException timeout() {
    return new DriverTimeoutException("injected: the CAS was sent, its answer never came");
  }

  @Test
  void should_not_append_a_block_twice_when_it_applied_and_another_store_wrote_the_pool_before_the_read_back() {
    List<IdRange> byB = new ArrayList<>();
    a.casExecutor = once(CasKind.POOL_APPEND, (k, st, session) -> {
      ResultSet unused = session.apply(st); // applied ...
      byB.add(b.reserve(seq, 0, 10)); // ... then B takes from the block before A reads the row back
      throw timeout();
    });

    List<IdRange> byA = new ArrayList<>(List.of(a.reserve(seq, 0, 10)));

    Drained all = drain(byA, byB);
    assertThat(all.duplicates).as("IDs handed out twice").isEmpty();
    CasStats pool = a.poolStats();
    assertThat(pool.resolvedAmbiguous()).as("the read-back saw B's op id").isEqualTo(1);
    assertThat(pool.recovered()).as("the record of appended blocks showed the append had applied").isEqualTo(1);
    assertThat(all.handedOut + lost()).isEqualTo(SIZE);
    assertThat(lost()).as("nothing needs to be lost here: the block was appended once").isZero();
  }

  @Test
  @Tag("full")
  void should_not_append_a_block_twice_when_a_late_cas_applies_after_the_read_back() {
    AtomicReference<Runnable> heldBack = new AtomicReference<>();
    a.casExecutor = once(CasKind.POOL_APPEND, new CasExecutor() {
      @Override
      public ResultSet execute(CasKind k, BoundStatement st, Function<BoundStatement, ResultSet> session) {
        heldBack.set(() -> {
          ResultSet unused = session.apply(st); // still queued somewhere when the driver gives up
        });
        throw timeout();
      }

      @Override
      public void afterReadBack(CasKind k) {
        Runnable late = heldBack.getAndSet(null);
        if (late != null) {
          late.run(); // arrives after the read-back, and applies: the row had not changed
        }
      }
    });

    List<IdRange> byA = new ArrayList<>(List.of(a.reserve(seq, 0, 10)));

    Drained all = drain(byA, new ArrayList<>());
    assertThat(all.duplicates).as("IDs handed out twice").isEmpty();
    CasStats pool = a.poolStats();
    assertThat(pool.resolvedNotApplied()).as("the read-back came before the late CAS").isEqualTo(1);
    assertThat(pool.recovered()).as("the next read found the block appended by the late CAS").isEqualTo(1);
    assertThat(all.handedOut + lost()).isEqualTo(SIZE);
  }

  @Test
  @Tag("full")
  void should_count_the_gap_of_a_reservation_that_applied_while_another_store_wrote_before_the_read_back() {
    a.reserve(seq, 0, 10); // the pool has a block now
    List<IdRange> byB = new ArrayList<>();
    a.casExecutor = once(CasKind.POOL_RESERVE, (k, st, session) -> {
      ResultSet unused = session.apply(st); // applied, but its answer is lost
      byB.add(b.reserve(seq, 0, 10));
      throw timeout();
    });
    List<IdRange> byA = new ArrayList<>(List.of(a.reserve(seq, 0, 7)));

    Drained all = drain(byA, byB);
    assertThat(all.duplicates).as("IDs handed out twice").isEmpty();
    assertThat(a.poolStats().resolvedAmbiguous()).isEqualTo(1);
    assertThat(a.poolStats().idsLost()).as("the 7 IDs the first attempt took are a counted gap").isEqualTo(7);
    assertThat(all.handedOut + 10 + lost()).as("every ID handed out or counted lost").isEqualTo(SIZE);
  }

  @Test
  void should_resolve_an_applied_reservation_whose_answer_was_lost() {
    a.reserve(seq, 0, 10);
    a.casExecutor = once(CasKind.POOL_RESERVE, (k, st, session) -> {
      ResultSet unused = session.apply(st); // applied, but its answer is lost
      throw timeout();
    });
    IdRange got = a.reserve(seq, 0, 5);

    assertThat(got.count()).isEqualTo(5);
    assertThat(a.poolStats().resolvedApplied()).as("the read-back found this attempt's op id").isEqualTo(1);
    Drained all = drain(new ArrayList<>(List.of(got)), new ArrayList<>());
    assertThat(all.duplicates).isEmpty();
    assertThat(all.handedOut + 10 + lost()).isEqualTo(SIZE);
    assertThat(lost()).isZero();
  }

  @Test
  @Tag("full")
  void should_put_ids_given_back_at_the_front_of_the_pool_once_even_when_the_answer_is_lost() {
    IdRange held = a.reserve(seq, 0, 40); // the server's reserve at a graceful stop
    a.casExecutor = once(CasKind.POOL_GIVE_BACK, (k, st, session) -> {
      ResultSet unused = session.apply(st);
      throw timeout(); // applied, but the answer never came
    });

    assertThat(a.giveBack(seq, 0, List.of(held))).isEqualTo(40);

    assertThat(a.poolStats().resolvedApplied()).isEqualTo(1);
    IdRange next = b.reserve(seq, 0, 1_000);
    assertThat(next.first()).as("the returned IDs are reserved first").isEqualTo(held.first());
    assertThat(next.count()).as("they join the rest of the pool's first block").isGreaterThanOrEqualTo(40);
    Drained all = drain(new ArrayList<>(List.of(next)), new ArrayList<>());
    assertThat(all.duplicates).isEmpty();
    assertThat(all.handedOut + lost()).isEqualTo(SIZE);
  }

  @Test
  @Tag("full")
  void should_count_a_give_back_as_lost_and_never_repeat_it_when_its_outcome_cannot_be_known() {
    IdRange held = a.reserve(seq, 0, 40);
    List<IdRange> byB = new ArrayList<>();
    a.casExecutor = once(CasKind.POOL_GIVE_BACK, (k, st, session) -> {
      ResultSet unused = session.apply(st);
      byB.add(b.reserve(seq, 0, 40)); // takes every returned ID before A reads the row back
      throw timeout();
    });

    assertThat(a.giveBack(seq, 0, List.of(held))).as("not known to be back: nothing claimed").isZero();

    assertThat(byB).singleElement().satisfies(r -> assertThat(r.first()).isEqualTo(held.first()));
    assertThat(a.poolStats().resolvedAmbiguous()).isEqualTo(1);
    assertThat(a.poolStats().idsLost()).as("counted lost (an upper bound: B had them)").isEqualTo(40);
    Drained all = drain(new ArrayList<>(), byB);
    assertThat(all.duplicates).as("the give-back was not repeated").isEmpty();
    assertThat(all.handedOut).as("every ID handed out once").isEqualTo(SIZE);
  }

  private long lost() {
    long n = 0;
    for (CassandraRangeStore s : stores) {
      n += s.poolStats().idsLost() + s.globalStats().idsLost();
    }
    return n;
  }

  private record Drained(long handedOut, Set<Long> duplicates) {}

  /** Reserves from both stores, alternately, until the sequence is used up; adds what was handed out. */
  private Drained drain(List<IdRange> byA, List<IdRange> byB) {
    a.casExecutor = CasExecutor.DIRECT;
    boolean aDone = false;
    boolean bDone = false;
    for (int i = 0; i < 10_000 && !(aDone && bDone); i++) {
      CassandraRangeStore s = i % 2 == 0 ? a : b;
      try {
        (s == a ? byA : byB).add(s.reserve(seq, 0, 53));
      } catch (SequenceExhaustedException e) {
        if (s == a) {
          aDone = true;
        } else {
          bDone = true;
        }
      }
    }
    assertThat(aDone && bDone).as("the sequence was used up").isTrue();
    Set<Long> seen = new HashSet<>();
    Set<Long> duplicates = new HashSet<>();
    long n = 0;
    for (List<IdRange> list : List.of(byA, byB)) {
      for (IdRange r : list) {
        for (long k = 0; k < r.count(); k++) {
          long id = r.get(k);
          assertThat(id).isBetween(seq.start(), seq.max());
          n++;
          if (!seen.add(id)) {
            duplicates.add(id);
          }
        }
      }
    }
    return new Drained(n, duplicates);
  }
}
