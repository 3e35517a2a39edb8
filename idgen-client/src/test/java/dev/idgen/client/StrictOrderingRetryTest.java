package dev.idgen.client;

import static dev.idgen.client.FakeIdGenService.error;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.Ordering;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A strict sequence's owner take-over as the stub sees it: {@code UNAVAILABLE} with the reason
 * {@code OWNER_UNAVAILABLE} and a {@code RetryInfo} delay, retried like any other unavailable reason
 * (the delay honoured up to the largest back-off) until the caller's wait deadline. The executor is a
 * {@link ManualScheduler} on a fake ticker: calls complete inline, and retries and deadlines happen
 * exactly when the test moves time.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StrictOrderingRetryTest extends OneServerFixture<ManualScheduler> {
  StrictOrderingRetryTest() {
    super(ManualScheduler::new);
  }

  private static io.grpc.StatusRuntimeException ownerUnavailable(Duration retryDelay) {
    return error(Status.Code.UNAVAILABLE, "OWNER_UNAVAILABLE", retryDelay,
        "sequence 'orders' is strict, and its owner cannot be reached", "sequence", "orders");
  }

  @Test
  void should_retry_owner_unavailable_after_the_servers_retry_delay() throws Exception {
    server.service().ordering(Ordering.ORDERING_STRICT);
    client = builder().retryBackoff(Duration.ofMillis(1), Duration.ofSeconds(2))
        .waitDeadline(Duration.ofSeconds(5)).build();
    IdSource orders = client.sequence("orders"); // strict from here on
    server.service().failNext(2, ownerUnavailable(Duration.ofMillis(300)));

    CompletableFuture<Long> id = orders.nextAsync(); // call 2: fails, a retry in 300 ms
    scheduler.advance(Duration.ofMillis(299));
    int beforeTheDelay = server.service().calls.get();
    scheduler.advance(Duration.ofMillis(1)); // call 3: fails again
    int atTheDelay = server.service().calls.get();
    scheduler.advance(Duration.ofMillis(300)); // call 4

    assertThat(beforeTheDelay).isEqualTo(2);
    assertThat(atTheDelay).isEqualTo(3);
    assertThat(id).isCompletedWithValue(11L);
    assertThat(server.service().calls).hasValue(4);
    assertThat(server.service().requestedCounts).containsExactly(10L, 1L, 1L, 1L);
    assertThat(orders.stats().failedCalls()).isEqualTo(2);
  }

  @Test
  void should_fail_timed_out_with_the_owners_status_when_the_take_over_outlasts_the_wait_deadline() {
    server.service().ordering(Ordering.ORDERING_STRICT);
    client = builder().retryBackoff(Duration.ofMillis(1), Duration.ofSeconds(2))
        .waitDeadline(Duration.ofSeconds(5)).build();
    IdSource orders = client.sequence("orders");
    // The default owner lease of 10 s: a take-over may take 12.5 s, longer than this caller waits.
    server.service().failAlways(ownerUnavailable(Duration.ofMillis(12_500)));

    CompletableFuture<Long> id = orders.nextAsync();
    scheduler.advance(Duration.ofSeconds(2)); // retries no later than the largest back-off
    scheduler.advance(Duration.ofSeconds(2));
    scheduler.advance(Duration.ofSeconds(1)); // the wait deadline

    assertThat(server.service().calls).as("the first request, then 0 s, 2 s, 4 s").hasValue(4);
    ExecutionException e = org.assertj.core.api.Assertions.catchThrowableOfType(ExecutionException.class,
        () -> id.get(1, TimeUnit.SECONDS));
    assertThat(e.getCause()).isInstanceOfSatisfying(IdGenClientException.class, c -> {
      assertThat(c.reason()).isEqualTo(IdGenClientException.Reason.TIMED_OUT);
      assertThat(c.status().orElseThrow().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(c.getMessage()).contains("its owner cannot be reached");
    });
    assertThat(scheduler.pending()).as("no retry left behind").isZero();
  }

  @Test
  void should_ask_again_for_the_ids_of_a_split_request_whose_first_range_expired_before_the_last_arrived() {
    server.service().ordering(Ordering.ORDERING_STRICT).validFor(Duration.ofSeconds(1)).clock(ticker);
    client = builder().maxLeaseSize(10).build();
    IdSource orders = client.sequence("orders"); // 1..10, dropped: strict from here on
    // next(25) is three calls, of 10, 10 and 5; the first two take 600 ms each.
    server.service().latencies(Duration.ofMillis(600), Duration.ofMillis(600));

    // Call 2, sent at T: 11..20, valid until T + 1 s; call 3, sent at T + 0.6 s: 21..30; call 4 at
    // T + 1.2 s: 31..35. 11..20 expired meanwhile: dropped, and asked for again (call 5: 36..45).
    long[] ids = orders.next(25);

    assertThat(ids).containsExactly(LongStream.rangeClosed(21, 45).toArray());
    assertThat(server.service().requestedCounts).containsExactly(10L, 10L, 10L, 5L, 10L);
    assertThat(orders.stats().idsExpired()).isEqualTo(10 + 10);
    assertThat(orders.stats().idsServed()).isEqualTo(25);
  }

  @Test
  void should_ask_again_for_the_ids_that_expired_while_a_request_was_retried_through_a_take_over()
      throws Exception {
    server.service().ordering(Ordering.ORDERING_STRICT).validFor(Duration.ofSeconds(1));
    client = builder().maxLeaseSize(10).retryBackoff(Duration.ofMillis(1), Duration.ofSeconds(2))
        .waitDeadline(Duration.ofSeconds(30)).build();
    IdSource orders = client.sequence("orders"); // 1..10, dropped
    server.service().failNext(1, 1, ownerUnavailable(Duration.ofSeconds(2)));

    // next(20) is two calls of 10. Call 2: 11..20, valid until T + 1 s; call 3 fails OWNER_UNAVAILABLE
    // (a take-over): a retry in 2 s.
    CompletableFuture<long[]> ids = CompletableFuture.supplyAsync(() -> orders.next(20));
    Await.until("the retry is scheduled", () -> scheduler.pending() == 1);
    assertThat(server.service().calls).hasValue(3);
    scheduler.advance(Duration.ofSeconds(2)); // call 4: 21..30; 11..20 expired meanwhile: call 5, 31..40

    assertThat(ids.get(10, TimeUnit.SECONDS)).containsExactly(LongStream.rangeClosed(21, 40).toArray());
    assertThat(server.service().calls).hasValue(5);
    assertThat(orders.stats().idsExpired()).isEqualTo(10 + 10);
  }

  @Test
  void should_back_off_when_every_range_of_a_strict_call_expired_on_arrival() {
    server.service().ordering(Ordering.ORDERING_STRICT).validFor(Duration.ofSeconds(1)).clock(ticker);
    client = builder().waitDeadline(Duration.ofSeconds(30)).build();
    IdSource orders = client.sequence("orders"); // 1..10, dropped
    // The next three calls take 2 s each: their ranges arrive expired.
    server.service().latencies(Duration.ofSeconds(2), Duration.ofSeconds(2), Duration.ofSeconds(2));

    CompletableFuture<Long> id = orders.nextAsync();
    int callsAtOnce = server.service().calls.get();
    scheduler.advance(Duration.ofMillis(5)); // the back-off is 0.5 to 1 ms, then 1 to 2 ms, 2 to 4 ms
    int callsAfterOneBackOff = server.service().calls.get();
    scheduler.advance(Duration.ofMillis(5));
    scheduler.advance(Duration.ofMillis(5));

    assertThat(callsAtOnce).as("no call again at once").isEqualTo(2);
    assertThat(callsAfterOneBackOff).isEqualTo(3);
    assertThat(id).isCompletedWithValue(14L); // 11, 12 and 13 arrived expired
    assertThat(server.service().calls).hasValue(5);
    assertThat(orders.stats().idsExpired()).isEqualTo(10 + 3);
  }

  @Test
  void should_retry_owner_unavailable_on_the_first_request_before_the_ordering_is_known() {
    server.service().ordering(Ordering.ORDERING_STRICT).failNext(1, ownerUnavailable(Duration.ofMillis(300)));
    client = builder().retryBackoff(Duration.ofMillis(1), Duration.ofSeconds(2)).build();
    IdSource orders = client.sequence("orders"); // fails: a retry in 300 ms

    scheduler.advance(Duration.ofMillis(299));
    assertThat(orders.stats().strictOrdering()).isFalse();
    scheduler.advance(Duration.ofMillis(1));

    assertThat(orders.stats().strictOrdering()).isTrue();
    assertThat(orders.stats().idsHeld()).isZero();
    assertThat(server.service().calls).hasValue(2);
  }
}
