package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idgen.api.v1.Ordering;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link IdSource#tryNext()} and {@link IdSource#nextAsync()}: served from memory when the source holds
 * IDs, never blocking when it does not, and failing as {@code next()} would. The executor is a
 * {@link ManualScheduler} on a fake ticker and the in-process server direct, so a lease request runs to
 * its end inside the call that starts it (unless the test holds it) and deadlines pass when the test
 * says. A future is thus complete, or not, when the call that may complete it returns, and no test on the
 * scheduler waits for one.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NonBlockingCallersTest extends OneServerFixture<ManualScheduler> {
  NonBlockingCallersTest() {
    super(ManualScheduler::new);
  }

  /**
   * Longer than any test: gRPC measures a call's deadline on the real clock, not on the ticker, and the
   * retry of a call that ran out of it is a task on the scheduler, which runs only when the test says. With
   * the 1 s default, a call held through a slow second (the first test of a JVM loads classes) fails, the
   * server's answer is lost, and the future waits for a retry that the test never runs (see the test of
   * that case below).
   */
  private static final Duration CALL_DEADLINE = Duration.ofMinutes(10);

  @Override
  protected IdGenClientBuilder builder() {
    return super.builder().minLeaseSize(10).maxLeaseSize(10).waitDeadline(Duration.ofSeconds(2))
        .callDeadline(CALL_DEADLINE);
  }

  @Test
  void try_next_should_return_empty_while_the_lease_is_on_its_way_and_ids_once_it_arrived() {
    server.service().hold();
    client = builder().build();
    IdSource orders = client.sequence("orders"); // the first lease request, held

    assertThat(orders.tryNext()).isEmpty();
    assertThat(orders.tryNext()).isEmpty();
    assertThat(server.service().calls).as("no second request while one is in flight").hasValue(1);
    assertThat(orders.stats().waits()).as("tryNext never waits").isZero();

    server.service().release();

    assertThat(orders.tryNext()).hasValue(1);
    assertThat(orders.tryNext()).hasValue(2);
    assertThat(orders.next()).isEqualTo(3);
  }

  @Test
  void try_next_should_request_a_lease_when_the_source_holds_nothing_and_none_is_on_its_way() {
    client = builder().build();
    IdSource late = client.sequence("late"); // NOT_FOUND: no request in flight afterwards
    assertThat(catchThrowableOfType(IdGenClientException.class, late::tryNext).reason())
        .isEqualTo(IdGenClientException.Reason.REJECTED);
    cluster.backend.create("late");
    int calls = server.service().calls.get();

    assertThat(late.tryNext()).as("nothing held: it requests, and returns without waiting").isEmpty();

    assertThat(server.service().calls.get()).isEqualTo(calls + 1);
    assertThat(late.tryNext()).hasValue(1);
  }

  @Test
  void try_next_should_report_a_refused_request_once_and_an_exhausted_sequence_for_good() {
    client = builder().build();
    IdSource unknown = client.sequence("unknown"); // NOT_FOUND, while nobody waits

    IdGenClientException refused = catchThrowableOfType(IdGenClientException.class, unknown::tryNext);
    assertThat(refused.reason()).isEqualTo(IdGenClientException.Reason.REJECTED);
    assertThat(refused.status().orElseThrow().getCode()).isEqualTo(Status.Code.NOT_FOUND);

    cluster.backend.create("small", 1, 1, 5);
    IdSource small = client.sequence("small");
    assertThat(small.next(5)).containsExactly(1, 2, 3, 4, 5);
    for (int i = 0; i < 2; i++) {
      IdGenClientException exhausted = catchThrowableOfType(IdGenClientException.class, small::tryNext);
      assertThat(exhausted.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    }
  }

  @Test
  void try_next_should_keep_refilling_when_a_smaller_lease_follows_a_larger_one() {
    client = builder().maxLeaseSize(1000).build();
    IdSource orders = client.sequence("orders");
    // 100 IDs per ms: leases grow fourfold per request, to 640.
    for (int ms = 0; ms < 20; ms++) {
      for (int k = 0; k < 100; k++) {
        assertThat(orders.tryNext()).as("fast, ms %s", ms).isPresent();
      }
      scheduler.advance(Duration.ofMillis(1));
    }
    int callsWhenFast = server.service().calls.get();

    // 10 IDs per second: the next lease is small, and arrives while the current one holds more than it.
    // Installing it decides the next request from inside tryNext (what is left is at the mark at once),
    // which must be launched: a request decided and never sent would leave the source empty for good.
    int empty = 0;
    for (int t = 0; t < 3_000; t++) {
      if (orders.tryNext().isEmpty()) {
        empty++;
      }
      scheduler.advance(Duration.ofMillis(100));
    }

    assertThat(callsWhenFast).isGreaterThanOrEqualTo(5);
    assertThat(empty).as("tryNext calls that found nothing (leases are requested ahead)").isZero();
    assertThat(server.service().calls.get() - callsWhenFast).as("leases while slow").isGreaterThanOrEqualTo(10);
    assertThat(orders.stats().idsHeld()).isPositive();
  }

  @Test
  void next_async_should_be_complete_at_once_when_the_source_holds_ids() {
    client = builder().build();
    IdSource orders = client.sequence("orders");

    CompletableFuture<Long> first = orders.nextAsync();
    CompletableFuture<Long> second = orders.nextAsync();

    assertThat(first).isCompletedWithValue(1L);
    assertThat(second).isCompletedWithValue(2L);
    assertThat(orders.stats().waits()).isZero();
  }

  @Test
  void next_async_should_complete_the_waiting_callers_in_order_when_the_lease_arrives() {
    server.service().hold();
    client = builder().build();
    IdSource orders = client.sequence("orders");

    List<CompletableFuture<Long>> futures = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      futures.add(orders.nextAsync());
    }
    CompletableFuture<Long> cancelled = orders.nextAsync();
    CompletableFuture<Long> last = orders.nextAsync();
    assertThat(futures).allMatch(f -> !f.isDone());
    assertThat(cancelled.cancel(false)).isTrue();

    server.service().release();

    assertThat(futures.get(0)).isCompletedWithValue(1L);
    assertThat(futures.get(1)).isCompletedWithValue(2L);
    assertThat(futures.get(2)).isCompletedWithValue(3L);
    assertThat(last).as("a cancelled caller takes no ID").isCompletedWithValue(4L);
    assertThat(orders.next()).isEqualTo(5);
    IdSourceStats stats = orders.stats();
    assertThat(stats.waits()).isEqualTo(5);
    assertThat(stats.idsServed()).isEqualTo(5);
  }

  @Test
  void next_async_should_give_back_the_id_of_a_future_cancelled_after_its_id_was_taken() {
    server.service().hold();
    client = builder().build();
    IdSource orders = client.sequence("orders"); // the first lease request, held
    CompletableFuture<Long> first = orders.nextAsync();
    CompletableFuture<Long> second = orders.nextAsync();
    // The seam: both are served in one pass, and the first's dependent stage runs as it completes,
    // after the source took 2 for the second and before it completes the second.
    CompletableFuture<Boolean> cancelled = first.thenApply(id -> second.cancel(false));

    server.service().release(); // 1..10

    assertThat(first).isCompletedWithValue(1L);
    assertThat(cancelled).isCompletedWithValue(true);
    assertThat(second).isCancelled();
    assertThat(orders.stats().idsServed()).as("2 was not handed out").isEqualTo(1);
    assertThat(orders.next(9)).as("2 is back, after the lease it came from").containsExactly(3, 4, 5, 6, 7, 8, 9, 10, 2);
    IdSourceStats stats = orders.stats();
    assertThat(stats.idsServed()).isEqualTo(10);
    assertThat(stats.idsExpired()).isZero();
    assertThat(stats.idsServed() + stats.idsHeld()).isEqualTo(cluster.backend.leasedIds("orders"));
  }

  @Test
  void next_async_should_drop_and_count_the_id_of_a_cancelled_future_whose_lease_expired_meanwhile() {
    server.service().validFor(Duration.ofSeconds(1)).hold();
    client = builder().build();
    IdSource orders = client.sequence("orders"); // the first lease request, held
    CompletableFuture<Long> first = orders.nextAsync();
    CompletableFuture<Long> second = orders.nextAsync();
    // As above, and the lease's valid_for runs out (by the ticker) before the second is completed.
    CompletableFuture<Boolean> cancelled = first.thenApply(id -> {
      ticker.advance(Duration.ofSeconds(1));
      return second.cancel(false);
    });

    server.service().release(); // 1..10, valid for 1 s

    assertThat(first).isCompletedWithValue(1L);
    assertThat(cancelled).isCompletedWithValue(true);
    assertThat(orders.stats().idsExpired()).as("2 is not given back after its lease: a counted gap").isEqualTo(1);
    scheduler.runDue(); // the lease's expiry task: 3..10 dropped, the next lease requested
    assertThat(orders.next()).isEqualTo(11);
    IdSourceStats stats = orders.stats();
    assertThat(stats.idsServed()).isEqualTo(2);
    assertThat(stats.idsExpired()).isEqualTo(9);
    assertThat(stats.idsServed() + stats.idsExpired() + stats.idsHeld()).isEqualTo(cluster.backend.leasedIds("orders"));
  }

  @Test
  void next_async_of_a_strict_sequence_should_count_the_id_of_a_future_cancelled_after_its_id_arrived() {
    server.service().ordering(Ordering.ORDERING_STRICT);
    client = builder().build();
    IdSource orders = client.sequence("orders"); // 1..10, stamped strict: dropped
    assertThat(orders.stats().strictOrdering()).isTrue();
    server.service().holdCompletions();

    CompletableFuture<Long> future = orders.nextAsync(); // its own call: 11 arrives, the call stays open
    assertThat(server.service().heldCompletions()).isEqualTo(1);
    assertThat(future).isNotDone();
    assertThat(future.cancel(false)).isTrue();

    IdSourceStats stats = orders.stats();
    assertThat(stats.idsServed()).as("11 was not handed out").isZero();
    assertThat(stats.idsExpired()).as("1..10, and 11, which nobody took").isEqualTo(11);
    assertThat(stats.idsServed() + stats.idsExpired() + stats.idsHeld()).isEqualTo(cluster.backend.leasedIds("orders"));
  }

  @Test
  void next_async_should_fail_with_timed_out_after_the_wait_deadline() {
    server.service().hang(true);
    client = builder().build(); // the call outlasts the wait: CALL_DEADLINE
    IdSource orders = client.sequence("orders");

    CompletableFuture<Long> future = orders.nextAsync();
    scheduler.advance(Duration.ofMillis(1999));
    assertThat(future).isNotDone();
    scheduler.advance(Duration.ofMillis(1));

    assertThat(reason(future)).isEqualTo(IdGenClientException.Reason.TIMED_OUT);
  }

  @Test
  void next_async_should_be_completed_by_the_retry_of_a_call_that_ran_out_of_its_deadline() {
    server.service().hold();
    client = builder().build();
    IdSource unknown = client.sequence("unknown"); // the first lease request, held
    CompletableFuture<Long> refused = unknown.nextAsync();
    // What the client sees when a held call's deadline passes: the attempt failed, retryably.
    server.service().failHeld(Status.DEADLINE_EXCEEDED);
    server.service().release();
    assertThat(refused).as("its retry is a task on the scheduler, due in 1 to 5 ms").isNotDone();
    assertThat(server.service().calls).hasValue(1);

    scheduler.advance(Duration.ofMillis(5)); // the retry: NOT_FOUND

    assertThat(server.service().calls).hasValue(2);
    assertThat(reason(refused)).isEqualTo(IdGenClientException.Reason.REJECTED);
  }

  @Test
  void next_async_should_fail_as_next_would_when_refused_exhausted_or_closed() {
    client = builder().build();
    server.service().hold();
    IdSource unknown = client.sequence("unknown");
    CompletableFuture<Long> refused = unknown.nextAsync();
    assertThat(refused).isNotDone();
    server.service().release(); // NOT_FOUND
    assertThat(reason(refused)).isEqualTo(IdGenClientException.Reason.REJECTED);

    cluster.backend.create("small", 1, 1, 3);
    IdSource small = client.sequence("small");
    assertThat(small.next(3)).containsExactly(1, 2, 3);
    assertThat(reason(small.nextAsync())).isEqualTo(IdGenClientException.Reason.EXHAUSTED);

    server.service().hang(true);
    cluster.backend.create("other");
    CompletableFuture<Long> waiting = client.sequence("other").nextAsync();
    assertThat(waiting).isNotDone();
    client.close();
    assertThat(reason(waiting)).isEqualTo(IdGenClientException.Reason.CLOSED);
    assertThat(reason(small.nextAsync())).isEqualTo(IdGenClientException.Reason.CLOSED);
  }

  @Test
  void next_async_from_many_threads_should_hand_out_every_id_once() throws Exception {
    scheduler.shutdownNow();
    // The client's own executor thread completes the futures, concurrently with the callers.
    client = IdGenClient.builder().channel(server.channel()).minLeaseSize(5).maxLeaseSize(20).build();
    IdSource orders = client.sequence("orders");
    Set<Long> seen = ConcurrentHashMap.newKeySet();
    ExecutorService threads = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        done.add(threads.submit(() -> {
          List<CompletableFuture<Long>> mine = new ArrayList<>();
          for (int i = 0; i < 5_000; i++) {
            mine.add(orders.nextAsync());
            if (mine.size() == 50) {
              mine.forEach(f -> assertThat(seen.add(f.join())).isTrue());
              mine.clear();
            }
          }
          mine.forEach(f -> assertThat(seen.add(f.join())).isTrue());
        }));
      }
      for (Future<?> f : done) {
        f.get(20, TimeUnit.SECONDS);
      }
    } finally {
      threads.shutdownNow();
    }
    assertThat(seen).hasSize(20_000);
    // An ID counts as served once its future took it: just after complete() returned, on the client's
    // thread, which may be a moment after the caller saw the future complete.
    Await.until("every ID handed out is counted", () -> orders.stats().idsServed() >= 20_000);
    assertThat(orders.stats().idsServed()).isEqualTo(20_000);
  }

  /**
   * The reason the future failed with. It is not waited for: on this class's scheduler and direct server,
   * it failed before the call that fails it returned, or it is a bug.
   */
  private static IdGenClientException.Reason reason(CompletableFuture<Long> future) {
    assertThat(future).as("failed by now").isCompletedExceptionally();
    ExecutionException e = catchThrowableOfType(ExecutionException.class, future::get);
    assertThat(e.getCause()).isInstanceOf(IdGenClientException.class);
    return ((IdGenClientException) e.getCause()).reason();
  }
}
