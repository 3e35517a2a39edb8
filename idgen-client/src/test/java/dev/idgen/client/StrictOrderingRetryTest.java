package dev.idgen.client;

import static dev.idgen.client.FakeIdGenService.error;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.Ordering;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
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
