package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idgen.api.v1.Ordering;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Leases that expire ({@code IdRange.valid_for}): one source against one in-process fake server that
 * stamps its ranges. Time is a {@link FakeTicker} and the client's executor a {@link ManualScheduler}:
 * requests complete inline, and an expiry task runs exactly when the test advances the ticker to its
 * time, on the test's thread.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaseExpiryTest extends OneServerFixture<ManualScheduler> {
  LeaseExpiryTest() {
    super(ManualScheduler::new);
  }

  /**
   * Calls get a deadline no test reaches: gRPC measures it on the real clock, and the retry of a call that ran
   * out of it is a task on the scheduler, which runs only when the test says (as in NonBlockingCallersTest).
   */
  @Override
  protected IdGenClientBuilder builder() {
    return super.builder().callDeadline(Duration.ofMinutes(10));
  }

  private LeasedIdSource orders() {
    return (LeasedIdSource) client.sequence("orders");
  }

  private static long[] ids(long from, long to) {
    return LongStream.rangeClosed(from, to).toArray();
  }

  @Test
  void should_drop_the_unused_ids_of_a_lease_when_it_expires_and_serve_a_new_lease() {
    server.service().validFor(Duration.ofSeconds(1));
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    LeasedIdSource orders = orders(); // call 1, sent at T: IDs 1..10, valid until T + 1 s

    assertThat(orders.next(3)).containsExactly(1, 2, 3);
    assertThat(orders.next()).isEqualTo(4);
    Lease first = orders.currentLease();
    scheduler.advance(Duration.ofMillis(999));
    assertThat(first.expired()).isFalse();
    assertThat(orders.next()).isEqualTo(5);

    scheduler.advance(Duration.ofMillis(1)); // T + 1 s: the expiry task runs

    assertThat(first.expired()).isTrue();
    assertThat(first.takenAtExpiry()).isEqualTo(5);
    assertThat(first.take(1)).as("a thread still holding the old lease gets no ID").isGreaterThanOrEqualTo(first.count);
    assertThat(server.service().calls).as("the next lease was requested at once").hasValue(2);
    IdSourceStats stats = orders.stats();
    assertThat(stats.idsExpired()).isEqualTo(5);
    assertThat(stats.idsHeld()).isEqualTo(10);
    assertThat(stats.idsServed()).isEqualTo(5);

    // 6..10 are never handed out: the next IDs come from the new lease.
    assertThat(orders.next()).isEqualTo(11);
    assertThat(orders.next(4)).containsExactly(12, 13, 14, 15);
    assertThat(orders.stats().idsServed()).isEqualTo(10);
    assertThat(orders.stats().idsExpired()).isEqualTo(5);
  }

  @Test
  void should_apply_the_expiry_to_bulk_requests() {
    server.service().validFor(Duration.ofSeconds(1));
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    LeasedIdSource orders = orders();
    assertThat(orders.next(4)).containsExactly(ids(1, 4));

    scheduler.advance(Duration.ofSeconds(1));
    long[] filled = new long[14];
    orders.fill(filled, 2, 14);

    assertThat(orders.next(0)).isEmpty();
    assertThat(filled).containsExactly(LongStream.concat(LongStream.of(0, 0), LongStream.rangeClosed(11, 22)).toArray());
    assertThat(orders.stats().idsExpired()).isEqualTo(6);
    assertThat(orders.stats().idsServed()).isEqualTo(16);
  }

  @Test
  void should_drop_a_queued_range_when_its_expiry_task_runs_before_it_became_current() {
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    LeasedIdSource orders = orders(); // call 1 without valid_for: 1..10, kept until used
    server.service().validFor(Duration.ofSeconds(1));
    for (long id = 1; id <= 5; id++) {
      assertThat(orders.next()).isEqualTo(id); // the 5th reaches the refill mark: call 2 queues 11..20
    }
    assertThat(server.service().calls).hasValue(2);

    scheduler.advance(Duration.ofSeconds(1)); // 11..20 dropped; with only 5 left, call 3 queues 21..30

    assertThat(orders.stats().idsExpired()).isEqualTo(10);
    assertThat(server.service().calls).hasValue(3);
    long[] next = new long[7];
    for (int k = 0; k < next.length; k++) {
      next[k] = orders.next();
    }
    assertThat(next).containsExactly(6, 7, 8, 9, 10, 21, 22);
    assertThat(orders.currentLease().expired()).isFalse();
  }

  @Test
  void should_drop_a_queued_range_that_expired_when_it_would_be_installed_even_before_its_task_ran() {
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    LeasedIdSource orders = orders(); // 1..10, no valid_for
    server.service().validFor(Duration.ofSeconds(1));
    assertThat(orders.next(5)).containsExactly(ids(1, 5)); // call 2 queues 11..20, valid for 1 s
    ticker.advance(Duration.ofSeconds(1)); // due, but its task has not run
    assertThat(scheduler.pending()).isEqualTo(1);

    long[] next = new long[7];
    for (int k = 0; k < next.length; k++) {
      next[k] = orders.next();
    }

    assertThat(next).containsExactly(6, 7, 8, 9, 10, 21, 22);
    assertThat(orders.stats().idsExpired()).isEqualTo(10);
    assertThat(server.service().calls).hasValue(3);
    assertThat(scheduler.runDue()).as("the late task finds its range gone").isEqualTo(1);
    assertThat(orders.stats().idsExpired()).isEqualTo(10);
    assertThat(server.service().calls).hasValue(3);
    assertThat(orders.next()).isEqualTo(23);
  }

  @ParameterizedTest
  @ValueSource(strings = {"unset", "zero"})
  void should_keep_a_lease_as_long_as_needed_when_valid_for_is_unset_or_zero(String validFor) {
    server.service().validFor(validFor.equals("zero") ? Duration.ZERO : null);
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    LeasedIdSource orders = orders();
    assertThat(orders.next(3)).containsExactly(1, 2, 3);

    scheduler.advance(Duration.ofDays(1));

    assertThat(scheduler.scheduled()).as("no expiry task").isZero();
    assertThat(orders.next(8)).containsExactly(ids(4, 11));
    assertThat(orders.stats().idsExpired()).isZero();
    assertThat(server.service().calls).hasValue(2);
  }

  @Test
  void should_count_every_id_dropped_by_expiry_and_renew_an_idle_lease() {
    server.service().validFor(Duration.ofSeconds(1));
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    LeasedIdSource orders = orders(); // 1..10, queued: nobody asked yet

    scheduler.advance(Duration.ofSeconds(1)); // 1..10 dropped from the queue; call 2: 11..20
    scheduler.advance(Duration.ofSeconds(1)); // 11..20 dropped; call 3: 21..30

    IdSourceStats stats = orders.stats();
    assertThat(stats.idsExpired()).isEqualTo(20);
    assertThat(stats.idsServed()).isZero();
    assertThat(stats.idsHeld()).isEqualTo(10);
    assertThat(stats.leases()).isEqualTo(3);
    assertThat(orders.next()).isEqualTo(21);
    assertThat(IdSourceStats.builder("s").idsServed(1).failedCalls(6).build().idsExpired())
        .as("a counter the builder was not given").isZero();
  }

  @Test
  void should_give_a_waiting_caller_the_next_lease_when_the_lease_expires_and_drop_a_range_that_arrives_expired()
      throws Exception {
    server.service().validFor(Duration.ofSeconds(1));
    client = builder().minLeaseSize(10).maxLeaseSize(10).waitDeadline(Duration.ofSeconds(30)).build();
    LeasedIdSource orders = orders(); // call 1, sent at T: 1..10
    assertThat(orders.next(4)).containsExactly(1, 2, 3, 4);
    server.service().hold();
    assertThat(orders.next()).isEqualTo(5); // the refill mark: call 2, sent at T, held by the server
    scheduler.advance(Duration.ofSeconds(1)); // 6..10 dropped; a request is already in flight

    CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(orders::next);
    Await.until("the caller waits", () -> orders.stats().waits() == 1);
    // Call 2 answers 11..20 now, expired on arrival (sent at T, valid 1 s): dropped; the waiting
    // caller asks again (call 3, sent at T + 1 s) and gets its first ID.
    server.service().release();

    assertThat(waiter.get(10, TimeUnit.SECONDS)).isEqualTo(21);
    assertThat(orders.stats().idsExpired()).isEqualTo(5 + 10);
    assertThat(server.service().calls).hasValue(3);
  }

  @Test
  void should_drop_the_ids_a_bulk_caller_took_if_their_lease_expired_while_it_waited_for_the_next_one()
      throws Exception {
    server.service().validFor(Duration.ofSeconds(1));
    client = builder().minLeaseSize(10).maxLeaseSize(10).waitDeadline(Duration.ofSeconds(30)).build();
    LeasedIdSource orders = orders(); // call 1, sent at T: 1..10, valid until T + 1 s
    assertThat(orders.next(4)).containsExactly(ids(1, 4));
    ticker.advance(Duration.ofMillis(900));
    server.service().hold();

    // Takes 5..10, the last of lease 1 (the refill mark: call 2, sent at T + 0.9 s, held), and waits.
    CompletableFuture<long[]> bulk = CompletableFuture.supplyAsync(() -> orders.next(8));
    Await.until("the caller waits", () -> orders.stats().waits() == 1);
    scheduler.advance(Duration.ofMillis(100)); // T + 1 s: lease 1 expires, 5..10 in the caller's hands
    server.service().release(); // 11..20, valid until T + 1.9 s

    assertThat(bulk.get(10, TimeUnit.SECONDS)).as("5..10 expired before the call returned: a gap")
        .containsExactly(ids(11, 18));
    IdSourceStats stats = orders.stats();
    assertThat(stats.idsExpired()).isEqualTo(6);
    assertThat(stats.idsServed()).isEqualTo(4 + 8);
    assertThat(stats.idsHeld()).as("19, 20 and the next lease, requested at lease 2's mark").isEqualTo(2 + 10);
    assertThat(orders.next()).isEqualTo(19);
  }

  @Test
  void should_drop_the_ids_a_bulk_caller_took_from_a_lease_that_expired_by_the_ticker_before_it_returned() {
    server.service().validFor(Duration.ofSeconds(1)).clock(ticker);
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    LeasedIdSource orders = orders(); // call 1, sent at T: 1..10, valid until T + 1 s
    ticker.advance(Duration.ofMillis(900));
    server.service().latencies(Duration.ofMillis(200));

    // 1..10; call 2 (sent at T + 0.9 s, answered at T + 1.1 s) 11..20; call 3 21..30. Lease 1 was replaced
    // before it expired (its task finds it gone): it is the ticker that says its IDs are not to be returned.
    long[] got = orders.next(25);

    assertThat(got).containsExactly(ids(11, 35));
    assertThat(scheduler.pending()).as("lease 1's task has not run").isPositive();
    IdSourceStats stats = orders.stats();
    assertThat(stats.idsExpired()).isEqualTo(10);
    assertThat(stats.idsServed()).isEqualTo(25);
    assertThat(stats.idsServed() + stats.idsExpired() + stats.idsHeld()).isEqualTo(cluster.backend.leasedIds("orders"));
  }

  @Test
  void should_not_leave_an_id_of_an_expired_lease_in_the_array_of_a_fill_that_fails() {
    server.service().validFor(Duration.ofSeconds(1)).clock(ticker);
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    LeasedIdSource orders = orders(); // call 1, sent at T: 1..10, valid until T + 1 s
    assertThat(orders.next(3)).containsExactly(1, 2, 3);
    ticker.advance(Duration.ofMillis(900));
    server.service().latencies(Duration.ofMillis(200))
        .failNext(1, Status.PERMISSION_DENIED.withDescription("no"));
    long[] array = new long[12];
    Arrays.fill(array, 42);

    // Takes 4..10; call 2 fails at T + 1.1 s, after lease 1 expired (by the ticker: its task has not run).
    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, () -> orders.fill(array, 1, 11));

    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.REJECTED);
    assertThat(array).as("-1 where an ID was taken and dropped; the rest untouched")
        .containsExactly(42, -1, -1, -1, -1, -1, -1, -1, 42, 42, 42, 42);
    assertThat(orders.stats().idsExpired()).isEqualTo(7);
    assertThat(orders.stats().idsServed()).isEqualTo(3);
  }

  @Test
  void should_clear_every_slot_it_vacated_when_a_fill_fails_after_it_dropped_expired_ids() {
    server.service().validFor(Duration.ofSeconds(1)).clock(ticker);
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    LeasedIdSource orders = orders(); // call 1, sent at T: 1..10, valid until T + 1 s
    ticker.advance(Duration.ofMillis(900));
    server.service().latencies(Duration.ofMillis(200), Duration.ofMillis(200))
        .failNext(2, 1_000, Status.PERMISSION_DENIED.withDescription("no").asRuntimeException());
    long[] array = new long[25];

    // 1..10; call 2 (answered at T + 1.1 s) 11..20; call 3 21..25, and 1..10, due by then, are dropped:
    // the kept IDs move to the front, out of slots 20..24. Then 26..30, and call 4 is refused.
    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, () -> orders.fill(array, 0, 25));

    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.REJECTED);
    assertThat(array).as("each ID valid and there once; -1 in every slot the call vacated")
        .containsExactly(LongStream.concat(LongStream.rangeClosed(11, 30), LongStream.of(-1, -1, -1, -1, -1)).toArray());
    IdSourceStats stats = orders.stats();
    assertThat(stats.idsServed()).as("the 20 IDs left in the array").isEqualTo(20);
    assertThat(stats.idsExpired()).isEqualTo(10);
    assertThat(stats.idsServed() + stats.idsExpired() + stats.idsHeld()).isEqualTo(cluster.backend.leasedIds("orders"));
  }

  @Test
  void should_clear_every_slot_it_wrote_when_a_fill_that_found_the_sequence_strict_fails() throws Exception {
    server.service().validFor(Duration.ofSeconds(1));
    client = builder().minLeaseSize(10).maxLeaseSize(10).waitDeadline(Duration.ofSeconds(30)).build();
    LeasedIdSource orders = orders(); // call 1, sent at T: 1..10, valid until T + 1 s
    ticker.advance(Duration.ofMillis(900));
    server.service().hold();
    long[] array = new long[15];
    Arrays.fill(array, 42);

    // Takes 1..10 and waits for call 2 (sent at T + 0.9 s, held).
    CompletableFuture<Void> fill = CompletableFuture.runAsync(() -> orders.fill(array, 0, 15));
    Await.until("call 2 is held", () -> server.service().heldCalls() == 1);
    ticker.advance(Duration.ofMillis(200)); // lease 1 is due by the ticker
    // 11..20: the caller takes 11..15, drops 1..10, moves 11..15 to the front and asks for more (call 3).
    server.service().answerHeld();
    Await.until("call 3 is held", () -> server.service().calls.get() == 3 && server.service().heldCalls() == 1);
    // Call 3 says the sequence is strict: the caller drops what it holds and makes a strict request, refused.
    server.service().failAlways(Status.PERMISSION_DENIED.withDescription("no")).ordering(Ordering.ORDERING_STRICT);
    server.service().answerHeld();

    ExecutionException e = catchThrowableOfType(ExecutionException.class, () -> fill.get(10, TimeUnit.SECONDS));
    assertThat(((IdGenClientException) e.getCause()).reason()).isEqualTo(IdGenClientException.Reason.REJECTED);
    assertThat(array).as("no ID it dropped is left, wherever it had written it").containsOnly(-1);
    IdSourceStats stats = orders.stats();
    assertThat(stats.idsServed()).isZero();
    assertThat(stats.idsServed() + stats.idsExpired() + stats.idsHeld()).isEqualTo(cluster.backend.leasedIds("orders"));
  }

  @Test
  void should_never_count_down_the_ids_served_when_a_bulk_caller_drops_the_ids_it_took() throws Exception {
    server.service().validFor(Duration.ofSeconds(1));
    client = builder().minLeaseSize(10).maxLeaseSize(10).waitDeadline(Duration.ofSeconds(30)).build();
    LeasedIdSource orders = orders(); // call 1, sent at T: 1..10, valid until T + 1 s
    assertThat(orders.next(4)).containsExactly(ids(1, 4));
    ticker.advance(Duration.ofMillis(900));
    server.service().hold();

    // Takes 5..10 (the refill mark: call 2, held) and waits with them.
    CompletableFuture<long[]> bulk = CompletableFuture.supplyAsync(() -> orders.next(8));
    Await.until("the caller waits", () -> orders.stats().waits() == 1);
    long servedWhileItWaits = orders.stats().idsServed();
    scheduler.advance(Duration.ofMillis(100)); // T + 1 s: lease 1 expires, 5..10 in the caller's hands
    server.service().failHeld(Status.PERMISSION_DENIED.withDescription("no"));

    ExecutionException e = catchThrowableOfType(ExecutionException.class, () -> bulk.get(10, TimeUnit.SECONDS));
    assertThat(((IdGenClientException) e.getCause()).reason()).isEqualTo(IdGenClientException.Reason.REJECTED);
    IdSourceStats stats = orders.stats();
    assertThat(stats.idsServed()).as("a counter: never less than it was").isGreaterThanOrEqualTo(servedWhileItWaits);
    assertThat(stats.idsServed()).as("5..10 were dropped, never handed out").isEqualTo(4);
    assertThat(stats.idsExpired()).isEqualTo(6);
  }

  @Test
  void should_never_hand_out_an_id_of_an_expired_lease_to_threads_racing_with_the_expiry() throws Exception {
    int threads = 3;
    int cap = 1_000_000; // IDs per thread; half before the expiry, so the first lease cannot reach its refill mark
    long leaseSize = 8_000_000;
    server.service().validFor(Duration.ofSeconds(1));
    client = builder().minLeaseSize(leaseSize).maxLeaseSize(leaseSize).waitDeadline(Duration.ofSeconds(30)).build();
    LeasedIdSource orders = orders(); // call 1, sent at T: 1..8,000,000, valid until T + 1 s
    assertThat(orders.next()).isEqualTo(1);
    Lease first = orders.currentLease();

    long[][] got = new long[threads][cap];
    int[] count = new int[threads];
    int[] firstAfterExpiry = new int[threads];
    AtomicIntegerArray progress = new AtomicIntegerArray(threads);
    AtomicIntegerArray progressAfter = new AtomicIntegerArray(threads);
    ExpiryFlag expiry = new ExpiryFlag();
    CyclicBarrier start = new CyclicBarrier(threads + 1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int me = t;
      workers.add(pool.submit(() -> {
        long[] mine = got[me];
        int n = 0;
        boolean after = false;
        start.await();
        while (n < cap && !expiry.stop) {
          if (!after) {
            if (expiry.done) {
              after = true;
              firstAfterExpiry[me] = n;
            } else if (n >= cap / 2) {
              Thread.onSpinWait(); // enough before the expiry: wait for it without taking
              continue;
            }
          }
          mine[n++] = orders.next();
          if ((n & 127) == 0) {
            progress.set(me, n);
            if (after) {
              progressAfter.set(me, n - firstAfterExpiry[me]);
            }
          }
        }
        count[me] = n;
        if (!after) {
          firstAfterExpiry[me] = n;
        }
        return null;
      }));
    }
    start.await();
    Await.until("every thread took IDs", () -> minOf(progress, threads) >= 10_000);

    scheduler.advance(Duration.ofSeconds(1)); // the expiry task runs here, while the threads take IDs
    expiry.done = true;
    Await.until("every thread took IDs after the expiry", () -> minOf(progressAfter, threads) >= 10_000);
    expiry.stop = true;
    for (Future<?> w : workers) {
      w.get(30, TimeUnit.SECONDS);
    }
    pool.shutdown();

    assertThat(first.expired()).isTrue();
    long takenAtExpiry = first.takenAtExpiry();
    assertThat(takenAtExpiry).as("IDs of the first lease were left when it expired").isLessThan(first.count);
    assertThat(cluster.backend.leased("orders").get(0)).isEqualTo(new FakeBackend.Leased(1, leaseSize, 1));
    int total = 1;
    for (int n : count) {
      total += n;
    }
    long[] all = new long[total];
    all[0] = 1; // taken by the test thread
    int pos = 1;
    FakeBackend.Leased firstRange = new FakeBackend.Leased(first.first, first.count, first.stride);
    long ofFirstLease = 1;
    for (int t = 0; t < threads; t++) {
      for (int k = 0; k < count[t]; k++) {
        long id = got[t][k];
        all[pos++] = id;
        if (firstRange.contains(id)) {
          ofFirstLease++;
          assertThat(k).as("thread %s got %s, of the expired lease, after the expiry", t, id)
              .isLessThan(firstAfterExpiry[t]);
          assertThat((id - first.first) / first.stride).as("index of %s in the expired lease", id)
              .isLessThan(takenAtExpiry);
        }
      }
    }
    Arrays.sort(all);
    List<FakeBackend.Leased> leased = cluster.backend.leased("orders");
    for (int i = 0; i < all.length; i++) {
      if (i > 0 && all[i] == all[i - 1]) {
        throw new AssertionError("ID " + all[i] + " handed out twice");
      }
      if (!FakeBackend.contains(leased, all[i])) {
        throw new AssertionError("ID " + all[i] + " was never leased by a server");
      }
    }
    // Every index taken before the expiry was an ID handed out (distinct, all below takenAtExpiry).
    assertThat(ofFirstLease).isEqualTo(takenAtExpiry);
    IdSourceStats stats = orders.stats();
    assertThat(stats.idsExpired()).isEqualTo(leaseSize - takenAtExpiry);
    assertThat(stats.idsServed()).isEqualTo(total);
  }

  /** Set by the test thread once the expiry task has run, then to stop the threads. */
  private static final class ExpiryFlag {
    volatile boolean done;
    volatile boolean stop;
  }

  private static int minOf(AtomicIntegerArray a, int n) {
    int min = Integer.MAX_VALUE;
    for (int i = 0; i < n; i++) {
      min = Math.min(min, a.get(i));
    }
    return min;
  }

  @ParameterizedTest(name = "valid_for {0} ms, lease lifetime 5 s, 1,000 IDs/s: leases of about {1}")
  @CsvSource({
      "2000, 1000", // capped: a lease must last at most valid_for / 2 = 1 s
      "10000, 5000", // the servers' default: valid_for / 2 = the lease lifetime, no cap
      "60000, 5000",
      "-1, 5000", // unset: no cap
  })
  void should_size_leases_to_be_used_up_within_valid_for(long validForMillis, long expected) {
    server.service().validFor(validForMillis < 0 ? null : Duration.ofMillis(validForMillis));
    client = builder().minLeaseSize(10).maxLeaseSize(1_000_000).leaseLifetime(Duration.ofSeconds(5)).build();
    LeasedIdSource orders = orders();

    consume(orders, 10, Duration.ofMillis(10), 3_000); // 1,000 IDs/s for 30 s

    assertThat(orders.stats().leaseSize()).isBetween(expected * 9 / 10, expected * 11 / 10);
    assertThat(lastRequested()).isBetween(expected * 9 / 10, expected * 11 / 10);
    if (validForMillis == 2000) {
      // At a steady rate a capped lease is used up about as it expires: the jitter of the measured
      // rate drops a few IDs (uncapped, leases of 5,000 would wait 5 s in the queue and all expire).
      IdSourceStats before = orders.stats();
      consume(orders, 10, Duration.ofMillis(10), 1_000);
      IdSourceStats after = orders.stats();
      assertThat(after.idsExpired() - before.idsExpired())
          .isLessThan((after.idsServed() - before.idsServed()) / 100);
      assertThat(after.waits()).isEqualTo(before.waits());
      // The floor stays minLeaseSize, even where rate × valid_for / 2 is less (1 ID/s: 1).
      consume(orders, 1, Duration.ofSeconds(1), 60);
      assertThat(orders.stats().leaseSize()).isEqualTo(10);
      assertThat(lastRequested()).isEqualTo(10);
    }
  }

  private void consume(IdSource source, int ids, Duration every, int times) {
    for (int t = 0; t < times; t++) {
      for (int k = 0; k < ids; k++) {
        source.next();
      }
      scheduler.advance(every);
    }
  }

  private long lastRequested() {
    List<Long> counts = new ArrayList<>(server.service().requestedCounts);
    return counts.get(counts.size() - 1);
  }
}
