package dev.idgen.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idgen.client.IdGenClientException;
import dev.idgen.client.IdSource;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The in-memory source keeps {@link IdSource}'s contracts, with IDs a test can predict. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class InMemoryIdSourceTest {

  @Test
  void should_hand_out_ids_in_order_from_first_through_every_method() throws Exception {
    InMemoryIdSource orders = InMemoryIdSource.startingAt("orders", 100);

    long a = orders.next();
    long b = orders.tryNext().orElseThrow();
    long c = orders.nextAsync().get(1, TimeUnit.SECONDS);
    long[] bulk = orders.next(3);
    long[] filled = new long[5];
    orders.fill(filled, 1, 4);

    assertThat(orders.sequence()).isEqualTo("orders");
    assertThat(new long[] {a, b, c}).containsExactly(100, 101, 102);
    assertThat(bulk).containsExactly(103, 104, 105);
    assertThat(filled).containsExactly(0, 106, 107, 108, 0);
    assertThat(orders.next(0)).isEmpty();
    assertThat(orders.stats().idsServed()).isEqualTo(9);
    assertThat(orders.stats().waits()).isZero();
  }

  @Test
  void should_check_the_bounds_of_bulk_calls_as_the_real_source_does() {
    IdSource orders = InMemoryIdSource.startingAt("orders", 1);
    long[] ids = new long[3];

    assertThatThrownBy(() -> orders.next(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("count: -1 (expected: >= 0)");
    assertThatThrownBy(() -> orders.fill(ids, 2, 4)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> orders.fill(ids, -1, 1)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> orders.fill(ids, 2, 1)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> orders.fill(null, 0, 0)).isInstanceOf(NullPointerException.class);
    assertThat(ids).containsOnly(0);
    assertThat(orders.next()).as("nothing was taken by the refused calls").isEqualTo(1);
  }

  @Test
  void should_refuse_a_malformed_name_or_range_saying_what_was_expected() {
    assertThatThrownBy(() -> InMemoryIdSource.startingAt("bad name", 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'bad name'")
        .hasMessageContaining("[A-Za-z0-9._-]");
    assertThatThrownBy(() -> InMemoryIdSource.startingAt("orders", -1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("first: -1 (expected: >= 0, IDs are never negative)");
    assertThatThrownBy(() -> InMemoryIdSource.between("orders", 10, 9))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("max: 9 (expected: >= first, 10)");
  }

  @Test
  void should_fail_every_call_with_exhausted_after_max() throws Exception {
    InMemoryIdSource small = InMemoryIdSource.between("small", 1, 3);
    assertThat(small.next(3)).containsExactly(1, 2, 3);

    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, small::next);
    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    assertThat(e.sequence()).isEqualTo("small");
    assertThat(e.status().orElseThrow().getCode()).isEqualTo(Status.Code.OUT_OF_RANGE);
    assertThat(e).hasMessage("sequence 'small': the sequence is exhausted: every ID from 1 to its max 3 was handed out");
    assertThat(catchThrowableOfType(IdGenClientException.class, small::tryNext).reason())
        .isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    CompletableFuture<Long> future = small.nextAsync();
    assertThat(future).isCompletedExceptionally();
    assertThatThrownBy(future::get).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(IdGenClientException.class);
    assertThat(catchThrowableOfType(IdGenClientException.class, () -> small.next(0)))
        .as("zero IDs need none").isNull();
  }

  @Test
  void should_hand_out_what_is_left_to_a_bulk_call_that_runs_past_max_then_fail() {
    InMemoryIdSource small = InMemoryIdSource.between("small", 1, 5);
    assertThat(small.next(2)).containsExactly(1, 2);
    long[] ids = {-7, -7, -7, -7, -7, -7};

    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, () -> small.fill(ids, 1, 6));

    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    assertThat(ids).as("the IDs left are valid, the rest untouched").containsExactly(-7, 3, 4, 5, -7, -7);
    assertThat(small.stats().idsServed()).isEqualTo(5);
    assertThat(catchThrowableOfType(IdGenClientException.class, () -> small.next(1)).reason())
        .isEqualTo(IdGenClientException.Reason.EXHAUSTED);
  }

  @Test
  void should_hand_out_long_max_value_once_when_max_is_the_largest_long() {
    InMemoryIdSource top = InMemoryIdSource.startingAt("top", Long.MAX_VALUE - 1);

    assertThat(top.next(2)).containsExactly(Long.MAX_VALUE - 1, Long.MAX_VALUE);
    assertThat(catchThrowableOfType(IdGenClientException.class, top::next).reason())
        .isEqualTo(IdGenClientException.Reason.EXHAUSTED);
  }

  @Test
  void should_fail_with_closed_after_close() {
    InMemoryIdSource orders = InMemoryIdSource.startingAt("orders", 1);
    orders.next();
    orders.close();
    orders.close();

    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, orders::next);
    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.CLOSED);
    assertThat(e.status()).isEmpty();
    assertThat(orders.nextAsync()).isCompletedExceptionally();
    assertThat(catchThrowableOfType(IdGenClientException.class, () -> orders.fill(new long[1], 0, 1)).reason())
        .isEqualTo(IdGenClientException.Reason.CLOSED);
  }

  @Test
  void should_give_concurrent_callers_distinct_ids_with_none_skipped() throws Exception {
    int threads = 8;
    int perThread = 20_000;
    InMemoryIdSource orders = InMemoryIdSource.startingAt("orders", 1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<long[]>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        boolean bulk = t % 2 == 0;
        results.add(pool.submit(() -> {
          long[] ids = new long[perThread];
          for (int i = 0; i < perThread; i += bulk ? 10 : 1) {
            if (bulk) {
              orders.fill(ids, i, i + 10);
            } else {
              ids[i] = orders.next();
            }
          }
          return ids;
        }));
      }
      long[] all = new long[threads * perThread];
      for (int t = 0; t < threads; t++) {
        long[] ids = results.get(t).get(20, TimeUnit.SECONDS);
        assertThat(ids).as("one thread sees them increase").isSorted();
        System.arraycopy(ids, 0, all, t * perThread, perThread);
      }
      Arrays.sort(all);
      assertThat(all).as("each ID once, none skipped")
          .isEqualTo(LongStream.rangeClosed(1, (long) threads * perThread).toArray());
      assertThat(orders.stats().idsServed()).isEqualTo((long) threads * perThread);
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void should_describe_its_range_and_next_id() {
    InMemoryIdSource small = InMemoryIdSource.between("small", 5, 6);
    assertThat(small).hasToString("InMemoryIdSource{sequence=small, first=5, max=6, next=5}");
    small.next(2);
    assertThat(small).hasToString("InMemoryIdSource{sequence=small, first=5, max=6, next=none}");
  }
}
