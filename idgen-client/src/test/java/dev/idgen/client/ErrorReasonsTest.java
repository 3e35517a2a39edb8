package dev.idgen.client;

import static dev.idgen.client.FakeIdGenService.error;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A source decides on the server's {@code ErrorInfo} reason, not on the status code: a sequence that is
 * exhausted ends the source, a lease above a server's per-call limit is asked again at that limit, and a
 * store that is down is retried; codes without details (gRPC, proxies, servers before 0.2) are judged
 * sensibly. One source against one in-process fake server, tasks run inline (as in {@link IdSourceTest}).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ErrorReasonsTest extends OneServerFixture<InlineScheduler> {
  ErrorReasonsTest() {
    super(t -> new InlineScheduler());
  }

  @Test
  void should_end_the_source_for_good_when_the_server_says_sequence_exhausted() {
    cluster.backend.create("small", 1, 1, 15);
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    IdSource small = client.sequence("small");

    long[] ids = new long[15];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = small.next();
    }
    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, small::next);
    int calls = server.service().calls.get();
    IdGenClientException again = catchThrowableOfType(IdGenClientException.class, small::next);

    assertThat(ids).containsExactly(LongStream.rangeClosed(1, 15).toArray());
    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    assertThat(e.status().orElseThrow().getCode()).isEqualTo(Status.Code.OUT_OF_RANGE);
    assertThat(again.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    assertThat(server.service().calls).as("no call once exhausted").hasValue(calls);
  }

  @Test
  void should_not_end_the_source_on_a_resource_exhausted_that_is_not_the_sequences() {
    // A proxy's rate limit, or gRPC's own limits: same code as 0.1's exhaustion, but it passes.
    server.service().failNext(2, Status.RESOURCE_EXHAUSTED.withDescription("rate limit exceeded"));
    client = builder().waitDeadline(Duration.ofSeconds(20)).build();
    IdSource orders = client.sequence("orders");

    assertThat(orders.next()).isEqualTo(1);
    assertThat(orders.next()).isEqualTo(2);
    assertThat(server.service().calls).hasValue(3);
  }

  @Test
  void should_end_the_source_on_an_old_servers_exhaustion_without_details() {
    cluster.backend.create("small", 1, 1, 5);
    server.service().legacyErrors(true);
    client = builder().minLeaseSize(10).maxLeaseSize(10).build();
    IdSource small = client.sequence("small");

    long[] ids = new long[5];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = small.next();
    }
    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, small::next);

    assertThat(ids).containsExactly(1, 2, 3, 4, 5);
    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    assertThat(e.status().orElseThrow().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
  }

  @Test
  void should_clamp_a_lease_to_the_limit_the_server_names_and_go_on() {
    server.service().maxIdsPerCall(40);
    // Leases of 100 from the first request on: every one is above the server's lowered limit.
    client = builder().minLeaseSize(100).maxLeaseSize(100).waitDeadline(Duration.ofSeconds(20)).build();
    IdSource orders = client.sequence("orders");

    long[] ids = orders.next(250);

    assertThat(ids).containsExactly(LongStream.rangeClosed(1, 250).toArray()); // nobody failed
    List<Long> asked = new ArrayList<>(server.service().requestedCounts);
    assertThat(asked.get(0)).isEqualTo(100); // refused, naming the limit 40
    assertThat(asked.subList(1, asked.size())).isNotEmpty().allMatch(c -> c <= 40);
    assertThat(asked).filteredOn(c -> c > 40).as("asked above the limit once only").hasSize(1);
    assertThat(orders.stats().failedCalls()).isEqualTo(1);
  }

  @Test
  void should_report_a_count_above_the_limit_of_an_old_server_as_rejected() {
    server.service().maxIdsPerCall(40).legacyErrors(true);
    client = builder().minLeaseSize(100).maxLeaseSize(100).waitDeadline(Duration.ofSeconds(60)).build();
    IdSource orders = client.sequence("orders");

    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, orders::next);

    // No limit to act on: as before 0.2, reported at once rather than retried.
    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.REJECTED);
    assertThat(e.status().orElseThrow().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
  }

  @Test
  void should_retry_a_store_that_is_unavailable_and_then_serve() {
    server.service().failNext(2, error(Status.Code.UNAVAILABLE, "STORE_UNAVAILABLE", "store down",
        "sequence", "orders"));
    client = builder().waitDeadline(Duration.ofSeconds(20)).build();
    IdSource orders = client.sequence("orders");

    assertThat(orders.next()).isEqualTo(1);
    assertThat(server.service().calls).hasValue(3);
    assertThat(orders.stats().failedCalls()).isEqualTo(2);
  }

  @Test
  void should_retry_a_call_whose_ranges_an_advance_overtook_before_they_were_sent() {
    server.service().failNext(1, error(Status.Code.UNAVAILABLE, "RANGES_WITHDRAWN",
        "sequence 'orders': an AdvanceSequence moved the floor", "sequence", "orders"));
    client = builder().waitDeadline(Duration.ofSeconds(20)).build();
    IdSource orders = client.sequence("orders");

    assertThat(orders.next()).isEqualTo(1);
    assertThat(server.service().calls).hasValue(2);
  }

  @Test
  void should_decide_on_the_reason_when_it_disagrees_with_the_code() {
    // A reason that says the sequence is done ends the source whatever the code; the code alone
    // (UNAVAILABLE) would have been retried until the wait deadline.
    server.service().failAlways(error(Status.Code.UNAVAILABLE, "SEQUENCE_EXHAUSTED", "done",
        "sequence", "orders"));
    client = builder().waitDeadline(Duration.ofSeconds(60)).build();
    IdSource orders = client.sequence("orders");

    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, orders::next);

    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    assertThat(server.service().calls).hasValue(1);
  }

  @Test
  void should_fall_back_to_the_code_for_a_reason_it_does_not_know() {
    server.service().failNext(1, error(Status.Code.UNAVAILABLE, "SOMETHING_NEW", "a future reason"));
    client = builder().waitDeadline(Duration.ofSeconds(20)).build();
    IdSource orders = client.sequence("orders");

    assertThat(orders.next()).isEqualTo(1);
    assertThat(server.service().calls).hasValue(2);
  }
}
