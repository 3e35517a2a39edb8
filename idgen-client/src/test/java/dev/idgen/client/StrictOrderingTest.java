package dev.idgen.client;

import static dev.idgen.client.FakeIdGenService.error;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idgen.api.v1.Ordering;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Sequences whose servers stamp their ranges {@code ORDERING_STRICT}: the source learns it from its first
 * response, drops what it holds, and from then on makes one {@code Allocate} per caller request, for the
 * caller's count, and keeps nothing (no cache, no prefetch); sequences stamped per-server (or not at all,
 * by older servers) are cached as before. One in-process fake server (its backend hands out increasing
 * IDs, as one strict owner does), tasks run inline (as in {@link IdSourceTest}), so a call completes
 * before the caller's method returns.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StrictOrderingTest extends OneServerFixture<InlineScheduler> {
  StrictOrderingTest() {
    super(t -> new InlineScheduler());
  }

  @Override
  protected IdGenClientBuilder builder() {
    return super.builder().minLeaseSize(10).maxLeaseSize(1000).waitDeadline(Duration.ofSeconds(10));
  }

  /** Calls the server answered so far, and the counts they asked for. */
  private int calls() {
    return server.service().calls.get();
  }

  private List<Long> requestedCounts() {
    return new ArrayList<>(server.service().requestedCounts);
  }

  @Test
  void should_learn_the_ordering_from_the_first_response_and_drop_its_ids() {
    server.service().ordering(Ordering.ORDERING_STRICT);
    client = builder().build();
    IdSource orders = client.sequence("orders"); // the source's first request: 10 IDs nobody asked for

    IdSourceStats learned = orders.stats();
    long id = orders.next();

    assertThat(learned.strictOrdering()).isTrue();
    assertThat(learned.idsHeld()).as("nothing kept").isZero();
    assertThat(learned.idsExpired()).as("the first lease's IDs: a gap").isEqualTo(10);
    assertThat(learned.leaseSize()).isZero();
    assertThat(id).as("above every ID leased before the caller asked").isEqualTo(11);
    assertThat(requestedCounts()).containsExactly(10L, 1L);
    assertThat(orders.stats().idsServed()).isEqualTo(1);
  }

  @Test
  void should_make_one_call_per_caller_request_for_its_count_and_answer_none_from_a_cache()
      throws Exception {
    server.service().ordering(Ordering.ORDERING_STRICT).validFor(Duration.ofSeconds(10));
    client = builder().build();
    IdSource orders = client.sequence("orders");
    orders.next(); // the ordering is known from here on
    int callsBefore = calls();
    List<Long> handedOut = new ArrayList<>();

    for (int i = 0; i < 5; i++) {
      handedOut.add(orders.next());
      ticker.advance(Duration.ofSeconds(1)); // time passes: a leasing source would have refilled by now
    }
    for (long id : orders.next(3)) {
      handedOut.add(id);
    }
    long[] array = new long[10];
    orders.fill(array, 2, 6);
    Arrays.stream(array, 2, 6).forEach(handedOut::add);
    handedOut.add(orders.nextAsync().get(10, TimeUnit.SECONDS));
    handedOut.add(orders.nextAsync().get(10, TimeUnit.SECONDS));
    assertThat(orders.next(0)).isEmpty();

    // 5 next(), next(3), fill of 4, 2 nextAsync(): 9 requests, 9 calls, each for exactly the count.
    assertThat(calls() - callsBefore).isEqualTo(9);
    List<Long> counts = requestedCounts();
    assertThat(counts.subList(counts.size() - 9, counts.size())).containsExactly(1L, 1L, 1L, 1L, 1L, 3L, 4L, 1L, 1L);
    assertThat(handedOut).as("each ID above every ID handed out before").isSorted().doesNotHaveDuplicates()
        .hasSize(5 + 3 + 4 + 2);
    assertThat(array).startsWith(0, 0).endsWith(0, 0, 0, 0);
    IdSourceStats stats = orders.stats();
    assertThat(stats.idsHeld()).isZero();
    assertThat(stats.idsServed()).isEqualTo(1 + 14);
    assertThat(stats.leases()).as("every call but the first (dropped) delivered").isEqualTo(calls() - 1);
    assertThat(stats.waits()).as("every request waited on its call").isEqualTo(1 + 9);
    assertThat(server.service().calls).as("no call in the background afterwards").hasValue(callsBefore + 9);
  }

  @Test
  void should_hand_out_ids_above_those_of_every_call_that_completed_before_whichever_client_made_it() {
    server.service().ordering(Ordering.ORDERING_STRICT);
    client = builder().build();
    try (IdGenClient other = builder().build()) {
      IdSource mine = client.sequence("orders");
      IdSource theirs = other.sequence("orders");

      long a1 = mine.next();
      long b1 = theirs.next();
      long a2 = mine.next();
      long b2 = theirs.next();

      assertThat(new long[] {a1, b1, a2, b2}).isSorted().doesNotHaveDuplicates();
    }
  }

  @ParameterizedTest
  @EnumSource(value = Ordering.class, names = {"ORDERING_PER_SERVER", "ORDERING_UNSPECIFIED"})
  void should_still_cache_leases_of_a_per_server_sequence(Ordering ordering) {
    // ORDERING_UNSPECIFIED: what a server before 0.2 sends (the field unset), per-server by definition.
    server.service().ordering(ordering);
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    try (IdGenClient other = builder().minLeaseSize(10).maxLeaseSize(10).build()) {
      IdSource mine = client.sequence("orders"); // leases 1..10
      IdSource theirs = other.sequence("orders"); // leases 11..20

      long a1 = mine.next();
      long b1 = theirs.next();
      long a2 = mine.next();

      assertThat(a1).isEqualTo(1);
      assertThat(b1).isEqualTo(11);
      assertThat(a2).as("from the cache: below an ID handed out before").isEqualTo(2);
      long[] more = mine.next(7);
      assertThat(more).containsExactly(LongStream.rangeClosed(3, 9).toArray());
      assertThat(mine.stats().strictOrdering()).isFalse();
      assertThat(mine.stats().leases()).as("served from its leases").isLessThanOrEqualTo(2);
    }
  }

  @Test
  void try_next_should_return_empty_without_a_call_since_a_strict_source_holds_nothing() {
    server.service().ordering(Ordering.ORDERING_STRICT);
    client = builder().build();
    IdSource orders = client.sequence("orders");
    int calls = calls();

    assertThat(orders.tryNext()).isEmpty();
    assertThat(orders.tryNext()).isEmpty();

    assertThat(server.service().calls).hasValue(calls);
    assertThat(orders.stats().waits()).isZero();
  }

  @Test
  void should_retry_owner_unavailable_and_then_serve() {
    server.service().ordering(Ordering.ORDERING_STRICT);
    client = builder().build();
    IdSource orders = client.sequence("orders");
    orders.next();
    // The owner died: calls fail until its lease ran out and another server took over.
    server.service().failNext(2, error(Status.Code.UNAVAILABLE, "OWNER_UNAVAILABLE", Duration.ofMillis(3),
        "sequence 'orders' is strict, and its owner cannot be reached", "sequence", "orders"));
    int calls = calls();
    long failed = orders.stats().failedCalls();

    long id = orders.next();

    assertThat(id).isEqualTo(12);
    assertThat(server.service().calls).hasValue(calls + 3);
    assertThat(orders.stats().failedCalls()).isEqualTo(failed + 2);
    assertThat(requestedCounts().subList(2, 5)).as("each retry asks for the caller's count").containsOnly(1L);
  }

  @Test
  void should_retry_owner_unavailable_while_it_learns_the_ordering() {
    server.service().ordering(Ordering.ORDERING_STRICT)
        .failNext(1, error(Status.Code.UNAVAILABLE, "OWNER_UNAVAILABLE", Duration.ofMillis(3), "take-over"));
    client = builder().build();
    IdSource orders = client.sequence("orders"); // fails, then retried in the background

    long id = orders.next();

    assertThat(id).isGreaterThan(10);
    assertThat(orders.stats().strictOrdering()).isTrue();
  }

  @Test
  void should_serve_callers_that_waited_for_the_first_response_with_calls_of_their_own() throws Exception {
    server.service().ordering(Ordering.ORDERING_STRICT).hold();
    client = builder().build();
    IdSource orders = client.sequence("orders"); // the first request, held
    ExecutorService callers = Executors.newSingleThreadExecutor();
    try {
      Future<Long> blocked = callers.submit(() -> orders.next());
      CompletableFuture<Long> async = orders.nextAsync();
      Await.until("both callers wait", () -> orders.stats().waits() == 2);

      server.service().release(); // 1..10, stamped strict: nobody asked for them before the call was sent

      // Each asked after the first request was sent: neither may get one of its IDs.
      assertThat(blocked.get(10, TimeUnit.SECONDS)).isGreaterThan(10);
      assertThat(async.get(10, TimeUnit.SECONDS)).isGreaterThan(10);
      assertThat(server.service().calls).hasValue(3);
      assertThat(orders.stats().idsExpired()).isEqualTo(10);
      assertThat(orders.stats().waits()).as("each caller's wait counted once").isEqualTo(2);
    } finally {
      callers.shutdownNow();
    }
  }

  @Test
  void should_drop_the_cached_ids_a_bulk_caller_waited_with_when_the_source_learns_the_ordering() throws Exception {
    client = builder().maxLeaseSize(10).build();
    IdSource orders = client.sequence("orders"); // 1..10 from a server that does not stamp the ordering
    assertThat(orders.next(4)).containsExactly(1, 2, 3, 4);
    server.service().ordering(Ordering.ORDERING_STRICT).hold(); // an upgraded server answers from now on

    // Takes 5..10 (the refill mark: call 2, held), and waits for 2 more.
    CompletableFuture<long[]> bulk = CompletableFuture.supplyAsync(() -> orders.next(8));
    Await.until("the caller waits", () -> orders.stats().waits() == 1);
    server.service().release(); // 11..20, stamped strict: dropped, and so are 5..10

    // Leased before the caller asked: not above every ID allocated before it did. A call of its own.
    assertThat(bulk.get(10, TimeUnit.SECONDS)).containsExactly(LongStream.rangeClosed(21, 28).toArray());
    assertThat(requestedCounts()).containsExactly(10L, 10L, 8L);
    IdSourceStats stats = orders.stats();
    assertThat(stats.idsExpired()).isEqualTo(6 + 10);
    assertThat(stats.idsServed()).isEqualTo(4 + 8);
  }

  @Test
  void should_split_a_batch_above_the_servers_limit_into_calls_one_after_the_other() {
    server.service().ordering(Ordering.ORDERING_STRICT).maxIdsPerCall(40);
    client = builder().build();
    IdSource orders = client.sequence("orders");
    orders.next(); // 11
    int before = requestedCounts().size();

    long[] ids = orders.next(100);

    assertThat(ids).containsExactly(LongStream.rangeClosed(12, 111).toArray());
    List<Long> counts = requestedCounts();
    assertThat(counts.subList(before, counts.size())).containsExactly(100L, 40L, 40L, 20L); // 100: refused
    assertThat(orders.next(50)).as("never above the limit again").hasSize(50);
    assertThat(requestedCounts().subList(counts.size(), requestedCounts().size())).containsExactly(40L, 10L);
  }

  @Test
  void should_write_the_ids_that_came_and_then_report_the_sequence_exhausted_for_good() {
    cluster.backend.create("small", 1, 1, 15);
    server.service().ordering(Ordering.ORDERING_STRICT);
    client = builder().build();
    IdSource small = client.sequence("small"); // 1..10, dropped
    long[] array = new long[8];

    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, () -> small.fill(array, 0, 8));
    int calls = calls();
    IdGenClientException again = catchThrowableOfType(IdGenClientException.class, small::next);

    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    assertThat(array).containsExactly(11, 12, 13, 14, 15, 0, 0, 0);
    assertThat(again.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    assertThat(server.service().calls).as("no call once exhausted").hasValue(calls);
  }

  @Test
  void should_report_a_refusal_to_the_caller_that_asked() {
    server.service().ordering(Ordering.ORDERING_STRICT);
    client = builder().build();
    IdSource orders = client.sequence("orders");
    server.service().failNext(1, Status.PERMISSION_DENIED.withDescription("no"));

    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, orders::next);
    long id = orders.next();

    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.REJECTED);
    assertThat(e.status().orElseThrow().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(id).isEqualTo(11);
  }

  @Test
  void should_time_out_a_caller_and_cancel_its_call() {
    server.service().ordering(Ordering.ORDERING_STRICT);
    client = builder().waitDeadline(Duration.ofMillis(200)).callDeadline(Duration.ofMinutes(1)).build();
    IdSource orders = client.sequence("orders");
    server.service().hang(true);

    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, orders::next);

    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.TIMED_OUT);
    Await.until("the call is cancelled", () -> server.service().cancellations.get() == 1);
    assertThat(orders.stats().waitTime()).isGreaterThanOrEqualTo(Duration.ofMillis(200));
  }

  @Test
  void should_cancel_the_call_of_a_cancelled_future_and_fail_waiting_callers_on_close() throws Exception {
    server.service().ordering(Ordering.ORDERING_STRICT);
    client = builder().callDeadline(Duration.ofMinutes(1)).build();
    IdSource orders = client.sequence("orders");
    server.service().hang(true);
    CompletableFuture<Long> cancelled = orders.nextAsync();
    CompletableFuture<Long> waiting = orders.nextAsync();
    ExecutorService callers = Executors.newSingleThreadExecutor();
    try {
      Future<Long> blocked = callers.submit(() -> orders.next());
      Await.until("three calls wait", () -> server.service().calls.get() == 4);

      cancelled.cancel(false);
      Await.until("its call is cancelled", () -> server.service().cancellations.get() == 1);
      client.close();

      assertThat(catchThrowableOfType(Exception.class, () -> waiting.get(10, TimeUnit.SECONDS)))
          .cause().isInstanceOfSatisfying(IdGenClientException.class,
              c -> assertThat(c.reason()).isEqualTo(IdGenClientException.Reason.CLOSED));
      assertThat(catchThrowableOfType(Exception.class, () -> blocked.get(10, TimeUnit.SECONDS)))
          .cause().isInstanceOfSatisfying(IdGenClientException.class,
              c -> assertThat(c.reason()).isEqualTo(IdGenClientException.Reason.CLOSED));
      Await.until("every call is cancelled", () -> server.service().cancellations.get() == 3);
    } finally {
      callers.shutdownNow();
    }
  }

  @Test
  void should_make_one_call_per_request_from_many_threads() throws Exception {
    server.service().ordering(Ordering.ORDERING_STRICT);
    client = builder().build();
    IdSource orders = client.sequence("orders");
    int threads = 4;
    int perThread = 200;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<long[]>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        results.add(pool.submit(() -> {
          long[] ids = new long[perThread];
          for (int i = 0; i < perThread; i++) {
            ids[i] = i % 2 == 0 ? orders.next() : orders.nextAsync().get(10, TimeUnit.SECONDS);
          }
          return ids;
        }));
      }
      Set<Long> all = new HashSet<>();
      for (Future<long[]> f : results) {
        long[] ids = f.get(20, TimeUnit.SECONDS);
        assertThat(ids).as("one thread's IDs, each asked after the one before came").isSorted();
        Arrays.stream(ids).forEach(all::add);
      }
      assertThat(all).hasSize(threads * perThread);
      assertThat(server.service().calls).hasValue(1 + threads * perThread);
      assertThat(orders.stats().idsServed()).isEqualTo((long) threads * perThread);
    } finally {
      pool.shutdownNow();
    }
  }
}
