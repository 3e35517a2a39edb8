package dev.idgen.core;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link RangeStore} promises of {@link RangeStore#reserveRange} and
 * {@link RangeStore#reservations}, as tests that rely on the interface only: the embedded store's test
 * extends this class, and so does the Cassandra store's integration test (on the real two-datacenter
 * cluster). Sequence names start with a prefix unique to each test, so a store may share one backend.
 */
public abstract class ReserveRangeContractTest {

  /** A store for one test, closed by this class after the test. */
  protected abstract RangeStore newStore();

  protected RangeStore store;
  protected String prefix;

  @BeforeEach
  public void openStore() {
    store = newStore();
    prefix = "r" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1) + "-";
  }

  @AfterEach
  public void closeStore() {
    if (store != null) {
      store.close();
    }
  }

  protected SequenceDefinition created(String name, long start, long max, int stripes) {
    SequenceDefinition d = new SequenceDefinition(prefix + name, start, max, stripes, 100, 1000);
    store.create(d);
    return d;
  }

  @Test
  public void should_reserve_a_contiguous_range_above_everything_reserved_before_and_never_reserve_it_again() {
    SequenceDefinition d = created("import", 1, 1_000_000, 1);
    IdRange before = store.reserve(d, 0, 50);

    Reservation r = store.reserveRange(d, 10_000, "req-1", "alice");

    assertThat(r.first()).isGreaterThan(before.last());
    assertThat(r.count()).isEqualTo(10_000);
    assertThat(r.last()).isEqualTo(r.first() + 9_999);
    assertThat(r.replayed()).isFalse();
    assertThat(r.requestId()).isEqualTo("req-1");
    assertThat(r.reservedBy()).isEqualTo("alice");
    // Everything reserved afterwards, however much, lies outside the range.
    long reservedAfter = 0;
    while (reservedAfter < 30_000) {
      IdRange next = store.reserve(d, 0, 1_000);
      assertThat(next.last() < r.first() || next.first() > r.last())
          .as("%s overlaps the reservation %s..%s", next, r.first(), r.last()).isTrue();
      reservedAfter += next.count();
    }
  }

  @Test
  public void should_return_the_same_range_to_a_retry_with_the_same_request_id_and_take_nothing_more() {
    SequenceDefinition d = created("retry", 1, 1_000_000, 1);
    Reservation first = store.reserveRange(d, 500, "same-id", "alice");

    Reservation retry = store.reserveRange(d, 500, "same-id", "bob");

    assertThat(retry.replayed()).isTrue();
    assertThat(retry.asStored()).isEqualTo(first);
    assertThat(retry.reservedBy()).as("the record, not the retry's caller").isEqualTo("alice");
    Reservation next = store.reserveRange(d, 10, "other-id", "alice");
    assertThat(next.first()).as("the retry took nothing: the next range follows the first")
        .isEqualTo(first.last() + 1);
  }

  @Test
  public void should_refuse_a_request_id_reused_with_another_count() {
    SequenceDefinition d = created("reused", 1, 1_000_000, 1);
    Reservation first = store.reserveRange(d, 500, "id-1", "alice");

    assertThatThrownBy(() -> store.reserveRange(d, 501, "id-1", "alice"))
        .isInstanceOfSatisfying(ReservationRefusedException.class, e -> {
          assertThat(e.why()).isEqualTo(ReservationRefusedException.Why.REQUEST_ID_REUSED);
          assertThat(e.metadata()).containsEntry("reserved", "500").containsEntry("first", Long.toString(first.first()));
        })
        .hasMessageContaining("already reserved 500 IDs").hasMessageContaining("not 501");
  }

  @Test
  public void should_give_concurrent_calls_with_one_request_id_one_range() throws Exception {
    SequenceDefinition d = created("race", 1, 1_000_000_000L, 1);
    int threads = 4;
    CyclicBarrier start = new CyclicBarrier(threads);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Reservation>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        futures.add(pool.submit(() -> {
          start.await(10, SECONDS);
          return store.reserveRange(d, 1_000, "raced", "t");
        }));
      }
      List<Reservation> got = new ArrayList<>();
      for (Future<Reservation> f : futures) {
        got.add(f.get(60, SECONDS).asStored());
      }
      assertThat(got).as("one range for every caller").containsOnly(got.get(0));
    } finally {
      pool.shutdownNow();
    }
    assertThat(store.reservations(d, Long.MIN_VALUE, 10)).hasSize(1);
  }

  @Test
  public void should_list_reservations_in_id_order_page_by_page() {
    SequenceDefinition d = created("listed", 1, 1_000_000, 1);
    List<Reservation> made = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      made.add(store.reserveRange(d, 10 + i, "id-" + i, "ops-" + i));
    }

    List<Reservation> page1 = store.reservations(d, Long.MIN_VALUE, 2);
    List<Reservation> page2 = store.reservations(d, page1.get(1).first(), 2);
    List<Reservation> page3 = store.reservations(d, page2.get(1).first(), 2);

    List<Reservation> all = new ArrayList<>(page1);
    all.addAll(page2);
    all.addAll(page3);
    assertThat(all).containsExactlyElementsOf(made);
    assertThat(store.reservations(d, made.get(4).first(), 2)).isEmpty();
    SequenceDefinition other = created("empty", 1, 1_000_000, 1);
    assertThat(store.reservations(other, Long.MIN_VALUE, 10)).as("per sequence").isEmpty();
  }

  @Test
  public void should_refuse_more_than_is_left_below_max_saying_how_many_are_left_and_then_reserve_up_to_max() {
    SequenceDefinition d = created("bounded", 1, 10_000, 1);
    IdRange held = store.reserve(d, 0, 100); // the tiers hold some: they are not left for a reservation

    // What is left above every tier (on Cassandra the datacenter's pool holds more than this server took).
    long left = store.state(d).remaining();
    assertThat(left).isLessThanOrEqualTo(10_000 - held.last());
    assertThatThrownBy(() -> store.reserveRange(d, left + 1, "too-many", "alice"))
        .isInstanceOfSatisfying(RangeAboveMaxException.class, e -> {
          assertThat(e.remaining()).isEqualTo(left);
          assertThat(e.requested()).isEqualTo(left + 1);
          assertThat(e.max()).isEqualTo(10_000);
        });
    assertThat(store.reservations(d, Long.MIN_VALUE, 10)).as("nothing was reserved").isEmpty();

    Reservation all = store.reserveRange(d, left, "exactly", "alice");
    assertThat(all.last()).isEqualTo(10_000);
    assertThatThrownBy(() -> store.reserveRange(d, 1, "one-more", "alice"))
        .isInstanceOfSatisfying(RangeAboveMaxException.class, e -> assertThat(e.remaining()).isZero());
    // What the tiers held below the range is still theirs to hand out; then the sequence is used up.
    boolean exhausted = false;
    for (int i = 0; i < 1_000 && !exhausted; i++) {
      try {
        IdRange next = store.reserve(d, 0, 100);
        assertThat(next.last()).as("%s: below the reservation", next).isLessThan(all.first());
      } catch (SequenceExhaustedException e) {
        exhausted = true;
      }
    }
    assertThat(exhausted).as("the reservation took the rest").isTrue();
  }

  @Test
  public void should_refuse_a_striped_sequence() {
    SequenceDefinition d = created("striped", 1, 1_000_000, 4);

    assertThatThrownBy(() -> store.reserveRange(d, 10, "s", "alice"))
        .isInstanceOfSatisfying(ReservationRefusedException.class,
            e -> assertThat(e.why()).isEqualTo(ReservationRefusedException.Why.STRIPED))
        .hasMessageContaining("4 stripes");
  }

  @Test
  public void should_reserve_above_an_advanced_floor() {
    SequenceDefinition d = created("floored", 1, 1_000_000, 1);
    store.advance(d, 50_000);

    Reservation r = store.reserveRange(d, 10, "f", "alice");

    assertThat(r.first()).isEqualTo(50_001);
  }
}
