package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One source against one in-process fake server. The client's executor runs tasks inline and the
 * in-process transport is direct, so a lease request completes before the call that started it
 * returns: what the tests see is the source's own decisions (when to request, how much, what to
 * report), not thread timing.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class IdSourceTest extends OneServerFixture<InlineScheduler> {
  IdSourceTest() {
    super(t -> new InlineScheduler());
  }

  @Test
  void should_hand_out_the_leased_ids_in_order_from_one_thread() {
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    IdSource orders = client.sequence("orders");

    long[] ids = new long[25];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = orders.next();
    }

    assertThat(ids).containsExactly(LongStream.rangeClosed(1, 25).toArray());
    assertThat(server.service().requestedCounts).allMatch(c -> c == 10);
    assertThat(orders.stats().idsServed()).isEqualTo(25);
    assertThat(orders.stats().leases()).isEqualTo(server.service().calls.get());
  }

  @Test
  void should_return_the_same_source_for_the_same_name() {
    client = builder().build();

    assertThat(client.sequence("orders")).isSameAs(client.sequence("orders"));
    assertThat(client.sequence("orders").sequence()).isEqualTo("orders");
  }

  @Test
  void should_follow_the_stride_of_the_leased_ranges() {
    cluster.backend.create("striped", 100, 3, Long.MAX_VALUE);
    client = builder().minLeaseSize(4).maxLeaseSize(4).build();
    IdSource striped = client.sequence("striped");

    assertThat(striped.next(10)).containsExactly(100, 103, 106, 109, 112, 115, 118, 121, 124, 127);
  }

  @Test
  void should_serve_bulk_requests_across_leases_and_ranges() {
    server.service().splitInto(3);
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    IdSource orders = client.sequence("orders");

    long[] first = orders.next(35);
    long[] array = new long[30];
    orders.fill(array, 5, 20);

    assertThat(first).containsExactly(LongStream.rangeClosed(1, 35).toArray());
    assertThat(array).containsExactly(LongStream.concat(LongStream.concat(
        LongStream.generate(() -> 0).limit(5), LongStream.rangeClosed(36, 50)),
        LongStream.generate(() -> 0).limit(10)).toArray());
    assertThat(orders.next(0)).isEmpty();
    assertThatThrownBy(() -> orders.next(-1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> orders.fill(array, 20, 31)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(orders.stats().idsServed()).isEqualTo(50);
  }

  @Test
  void should_ask_for_at_least_what_a_waiting_bulk_caller_needs() throws Exception {
    server.service().hold();
    client = builder().minLeaseSize(10).maxLeaseSize(1000).build();
    IdSource orders = client.sequence("orders"); // asks for 10, held

    CompletableFuture<long[]> ids = CompletableFuture.supplyAsync(() -> orders.next(500));
    Await.until("the caller waits", () -> orders.stats().waits() == 1);
    server.service().release();

    assertThat(ids.get(10, TimeUnit.SECONDS)).containsExactly(LongStream.rangeClosed(1, 500).toArray());
    // Once the first 10 came, the next request asked for what the caller still needed (490, or its whole
    // 500 when the request left before the caller took the first 10), not for a lease sized by the rate
    // (40: four times the first). Then the source, empty, prefetched again.
    java.util.List<Long> asked = java.util.List.copyOf(server.service().requestedCounts);
    assertThat(asked.get(0)).isEqualTo(10L);
    assertThat(asked.get(1)).isBetween(490L, 500L);
  }

  @Test
  void should_never_make_a_caller_wait_in_a_steady_workload() {
    cluster.backend.create("invoices");
    client = builder().minLeaseSize(10).maxLeaseSize(5_000).leaseLifetime(Duration.ofSeconds(1)).build();
    IdSource orders = client.sequence("orders");
    IdSource invoices = client.sequence("invoices");
    // Warm-up: the first request of each source was made when it was created; the steady phase
    // below must not depend on it.
    runSteady(orders, invoices, 10);
    long waitsBefore = orders.stats().waits() + invoices.stats().waits();
    long leasesBefore = orders.stats().leases() + invoices.stats().leases();

    runSteady(orders, invoices, 5_000); // 20 IDs per ms each: 20,000/s, leases of up to 5,000

    IdSourceStats o = orders.stats();
    IdSourceStats i = invoices.stats();
    assertThat(o.waits() + i.waits()).isEqualTo(waitsBefore);
    assertThat(o.waitTime().plus(i.waitTime())).isEqualTo(Duration.ZERO);
    assertThat(o.leases() + i.leases() - leasesBefore).as("refills during the steady phase").isGreaterThan(20);
    assertThat(o.leaseSize()).isEqualTo(5_000);
    assertThat(o.idsServed()).isEqualTo(20L * 5_010);
  }

  @Test
  void should_never_make_a_caller_wait_in_a_steady_workload_across_threads() throws Exception {
    client = builder().minLeaseSize(10).maxLeaseSize(10_000).leaseLifetime(Duration.ofSeconds(1)).build();
    IdSource orders = client.sequence("orders");
    int threads = 4;
    int perPhase = 25; // 4 × 25 IDs per simulated millisecond: 100,000/s, so leases of 10,000 (the max)
    int warmUp = 300;
    int phases = 3_000;
    IdSourceStats[] afterWarmUp = new IdSourceStats[1];
    int[] phase = {0};
    // The barrier action runs while every thread is parked: a quiet moment to move time and to look.
    CyclicBarrier tick = new CyclicBarrier(threads, () -> {
      ticker.advance(Duration.ofMillis(1));
      if (++phase[0] == warmUp) {
        afterWarmUp[0] = orders.stats();
      }
    });
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<CompletableFuture<Void>> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      workers.add(CompletableFuture.runAsync(() -> {
        try {
          for (int p = 0; p < warmUp + phases; p++) {
            for (int k = 0; k < perPhase; k++) {
              orders.next();
            }
            tick.await();
          }
        } catch (Exception e) {
          throw new CompletionException(e);
        }
      }, pool));
    }
    try {
      CompletableFuture.allOf(workers.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }

    IdSourceStats end = orders.stats();
    assertThat(end.waits()).isEqualTo(afterWarmUp[0].waits());
    assertThat(end.leases() - afterWarmUp[0].leases()).as("refills during the steady phase").isGreaterThanOrEqualTo(25);
    assertThat(end.leaseSize()).isEqualTo(10_000);
    assertThat(end.idsServed()).isEqualTo((long) threads * perPhase * (warmUp + phases));
  }

  @Test
  void should_leave_no_caller_without_ids_while_a_request_takes_up_to_most_of_a_lease() {
    client = builder().minLeaseSize(100).maxLeaseSize(100).build();
    IdSource orders = client.sequence("orders"); // call 1, answered at once
    FakeIdGenService service = server.service().hold();
    // Each later call is answered once the caller has asked for 75 more IDs: a round trip of three
    // quarters of a lease, as when leases are capped at maxLeaseSize and the rate empties them fast.
    // Requesting when half of what arrived is left covers half a lease; this covers the whole of one.
    int roundTrip = 75;
    int answered = service.calls.get();
    int sentAt = -1;
    int empty = 0;
    int emptyAfterWarmUp = 0;
    long mostHeld = 0;
    for (int attempt = 0; attempt < 20_000; attempt++) {
      if (orders.tryNext().isEmpty()) {
        empty++;
        emptyAfterWarmUp += attempt >= 1_000 ? 1 : 0;
      }
      int calls = service.calls.get();
      if (calls > answered && sentAt < 0) {
        sentAt = attempt;
      }
      if (sentAt >= 0 && attempt - sentAt >= roundTrip) {
        answered = calls;
        sentAt = -1;
        service.answerHeld(); // its completion may request the next lease at once, held in turn
        if (service.calls.get() > answered) {
          sentAt = attempt;
        }
      }
      mostHeld = Math.max(mostHeld, orders.stats().idsHeld());
    }

    assertThat(emptyAfterWarmUp).as("tryNext calls that found nothing once the threshold settled").isZero();
    assertThat(mostHeld).as("IDs held at most: about two leases").isLessThanOrEqualTo(200);
    assertThat(orders.stats().idsServed()).isEqualTo(20_000 - empty);
  }

  private void runSteady(IdSource a, IdSource b, int millis) {
    for (int ms = 0; ms < millis; ms++) {
      for (int k = 0; k < 20; k++) {
        a.next();
        b.next();
      }
      ticker.advance(Duration.ofMillis(1));
    }
  }

  @Test
  void should_size_leases_to_the_consumption_rate_within_bounds() {
    client = builder().minLeaseSize(10).maxLeaseSize(10_000).leaseLifetime(Duration.ofSeconds(1)).build();
    IdSource orders = client.sequence("orders");

    consume(orders, 5, Duration.ofMillis(10), 400); // 500 IDs/s for 4 s
    assertThat(orders.stats().leaseSize()).isBetween(450L, 550L);
    assertThat(lastRequested()).isBetween(450L, 550L);

    consume(orders, 100, Duration.ofMillis(1), 2_000); // 100,000 IDs/s: capped at 10,000
    assertThat(orders.stats().leaseSize()).isEqualTo(10_000);
    assertThat(lastRequested()).isEqualTo(10_000);

    consume(orders, 1, Duration.ofMillis(100), 25_000); // 10 IDs/s: the leases held are used first
    assertThat(orders.stats().leaseSize()).isEqualTo(10);
    assertThat(lastRequested()).isEqualTo(10);
  }

  @Test
  void should_grow_leases_at_most_fourfold_per_request() {
    client = builder().minLeaseSize(10).maxLeaseSize(1_000_000).leaseLifetime(Duration.ofSeconds(1)).build();
    IdSource orders = client.sequence("orders");

    consume(orders, 1_000, Duration.ofMillis(1), 50); // a burst: 1,000,000 IDs/s

    List<Long> sizes = new ArrayList<>(server.service().requestedCounts);
    assertThat(sizes.get(0)).isEqualTo(10);
    for (int k = 1; k < sizes.size(); k++) {
      assertThat(sizes.get(k)).as("request %s after %s", k, sizes.get(k - 1)).isLessThanOrEqualTo(4 * sizes.get(k - 1));
    }
    assertThat(sizes).contains(40L, 160L, 640L);
  }

  private void consume(IdSource source, int ids, Duration every, int times) {
    for (int t = 0; t < times; t++) {
      for (int k = 0; k < ids; k++) {
        source.next();
      }
      ticker.advance(every);
    }
  }

  private long lastRequested() {
    List<Long> counts = new ArrayList<>(server.service().requestedCounts);
    return counts.get(counts.size() - 1);
  }

  @Test
  void should_count_a_caller_that_waits_for_a_lease() throws Exception {
    server.service().hold();
    client = builder().build();
    IdSource orders = client.sequence("orders");

    CompletableFuture<Long> id = CompletableFuture.supplyAsync(orders::next);
    Await.until("the caller waits", () -> orders.stats().waits() == 1);
    assertThat(id).isNotDone();
    server.service().release();

    assertThat(id.get(10, TimeUnit.SECONDS)).isEqualTo(1);
    IdSourceStats stats = orders.stats();
    assertThat(stats.waits()).isEqualTo(1);
    assertThat(stats.waitTime()).isPositive();
    assertThat(stats.idsServed()).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(names = {"UNAVAILABLE", "DEADLINE_EXCEEDED", "CANCELLED", "ABORTED", "RESOURCE_EXHAUSTED"})
  void should_retry_a_transient_status_and_then_serve(Status.Code code) {
    server.service().failNext(2, Status.fromCode(code).withDescription("no reserve, store down"));
    client = builder().waitDeadline(Duration.ofSeconds(20)).build();
    IdSource orders = client.sequence("orders");

    assertThat(orders.next()).isEqualTo(1);
    assertThat(server.service().calls).hasValue(3);
    assertThat(orders.stats().failedCalls()).isEqualTo(2);
  }

  @ParameterizedTest
  @EnumSource(names = {"NOT_FOUND", "PERMISSION_DENIED", "UNAUTHENTICATED", "INVALID_ARGUMENT", "INTERNAL"})
  void should_report_a_permanent_status_at_once_without_retrying(Status.Code code) {
    server.service().failAlways(Status.fromCode(code).withDescription("told you so"));
    // A long wait deadline: a retried failure would end as TIMED_OUT after it, not as REJECTED now.
    client = builder().waitDeadline(Duration.ofSeconds(60)).build();
    IdSource orders = client.sequence("orders"); // its first request fails

    IdGenClientException first = catchThrowableOfType(IdGenClientException.class, orders::next);
    int callsAfterFirst = server.service().calls.get();
    IdGenClientException second = catchThrowableOfType(IdGenClientException.class, orders::next);

    assertThat(first.reason()).isEqualTo(IdGenClientException.Reason.REJECTED);
    assertThat(first.sequence()).isEqualTo("orders");
    assertThat(first.status()).hasValueSatisfying(s -> assertThat(s.getCode()).isEqualTo(code));
    assertThat(first).hasMessageContaining("'orders'").hasMessageContaining(code.name())
        .hasMessageContaining("told you so");
    // The first caller got the answer to the request made at creation; the next one asked again, once.
    assertThat(callsAfterFirst).isEqualTo(1);
    assertThat(second.reason()).isEqualTo(IdGenClientException.Reason.REJECTED);
    assertThat(server.service().calls).hasValue(2);
  }

  @Test
  void should_recover_when_a_refused_sequence_is_created_later() {
    client = builder().build();
    IdSource later = client.sequence("later");
    assertThatThrownBy(later::next).isInstanceOfSatisfying(IdGenClientException.class,
        e -> assertThat(e.status().orElseThrow().getCode()).isEqualTo(Status.Code.NOT_FOUND));

    cluster.backend.create("later");

    assertThat(later.next()).isEqualTo(1);
  }

  @Test
  void should_serve_partial_ranges_before_reporting_exhaustion() {
    cluster.backend.create("small", 1, 1, 25);
    server.service().splitInto(2);
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    IdSource small = client.sequence("small");

    long[] ids = new long[25];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = small.next();
    }
    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, small::next);
    int calls = server.service().calls.get();
    IdGenClientException again = catchThrowableOfType(IdGenClientException.class, small::next);

    assertThat(ids).containsExactly(LongStream.rangeClosed(1, 25).toArray());
    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    assertThat(e.status().orElseThrow().getCode()).isEqualTo(Status.Code.OUT_OF_RANGE);
    assertThat(e).hasMessageContaining("'small'").hasMessageContaining("delivered 5 of the 10");
    assertThat(again.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    assertThat(server.service().calls).as("no call once exhausted").hasValue(calls);
    assertThat(calls).isEqualTo(3);
  }

  @Test
  void should_hand_out_the_partial_range_of_a_bulk_request_before_reporting_exhaustion() {
    cluster.backend.create("small", 1, 1, 7);
    client = builder().minLeaseSize(5).maxLeaseSize(5).build();
    IdSource small = client.sequence("small");
    long[] ids = new long[10];

    assertThatThrownBy(() -> small.fill(ids, 0, 10)).isInstanceOfSatisfying(IdGenClientException.class,
        e -> assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED));
    assertThat(ids).startsWith(1, 2, 3, 4, 5, 6, 7);
  }

  @Test
  void should_time_out_naming_the_sequence_and_the_deadline_when_the_server_hangs() {
    server.service().hang(true);
    client = builder().waitDeadline(Duration.ofMillis(300)).callDeadline(Duration.ofMillis(50)).build();
    IdSource orders = client.sequence("orders");

    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, orders::next);

    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.TIMED_OUT);
    assertThat(e.sequence()).isEqualTo("orders");
    assertThat(e).hasMessageContaining("'orders'").hasMessageContaining("300 ms")
        .hasMessageContaining("DEADLINE_EXCEEDED");
    assertThat(e.status().orElseThrow().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(orders.stats().waits()).isEqualTo(1);
    assertThat(orders.stats().waitTime()).isGreaterThanOrEqualTo(Duration.ofMillis(300));
    assertThat(server.service().cancellations).as("calls cancelled at their deadline").hasPositiveValue();
  }

  @Test
  void should_time_out_without_a_status_when_the_call_has_not_answered_yet() {
    server.service().hang(true);
    client = builder().waitDeadline(Duration.ofMillis(100)).callDeadline(Duration.ofSeconds(30)).build();
    IdSource orders = client.sequence("orders");

    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, orders::next);

    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.TIMED_OUT);
    assertThat(e.status()).isEmpty();
    assertThat(e).hasMessageContaining("'orders'").hasMessageContaining("100 ms")
        .hasMessageContaining("not answered");
  }

  @Test
  void should_report_interruption_and_keep_the_interrupt_status() throws Exception {
    server.service().hang(true);
    client = builder().waitDeadline(Duration.ofSeconds(60)).build();
    IdSource orders = client.sequence("orders");
    CompletableFuture<IdGenClientException> failure = new CompletableFuture<>();
    CompletableFuture<Boolean> interrupted = new CompletableFuture<>();
    Thread caller = new Thread(() -> {
      try {
        orders.next();
      } catch (IdGenClientException e) {
        failure.complete(e);
        interrupted.complete(Thread.currentThread().isInterrupted());
      }
    });
    caller.start();
    Await.until("the caller waits", () -> orders.stats().waits() == 1);

    caller.interrupt();

    assertThat(failure.get(10, TimeUnit.SECONDS).reason()).isEqualTo(IdGenClientException.Reason.INTERRUPTED);
    assertThat(interrupted.get(10, TimeUnit.SECONDS)).isTrue();
  }
}
