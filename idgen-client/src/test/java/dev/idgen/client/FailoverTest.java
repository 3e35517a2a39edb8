package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** One client over two in-process servers of one cluster, one of which stops, hangs or has no reserve. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FailoverTest {
  private final FakeCluster cluster = new FakeCluster();
  private FakeCluster.FakeServer a;
  private FakeCluster.FakeServer b;
  private IdGenClient client;

  @BeforeEach
  void setUp() {
    cluster.backend.create("orders");
    a = cluster.server();
    b = cluster.server();
  }

  @AfterEach
  void tearDown() {
    if (client != null) {
      client.close();
    }
    cluster.close();
  }

  private IdGenClientBuilder builder() {
    return IdGenClient.builder()
        .channel(a.channel())
        .channel(b.channel())
        .minLeaseSize(5)
        .maxLeaseSize(5)
        .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(20))
        .waitDeadline(Duration.ofSeconds(20));
  }

  @Test
  void should_spread_lease_requests_over_the_servers() {
    client = builder().build();
    IdSource orders = client.sequence("orders");

    take(orders, 100, new HashSet<>());

    assertThat(a.service().calls).hasValueGreaterThan(5);
    assertThat(b.service().calls).hasValueGreaterThan(5);
  }

  @Test
  void should_fail_over_to_the_other_server_when_one_stops() {
    client = builder().build();
    IdSource orders = client.sequence("orders");
    Set<Long> seen = new HashSet<>();
    take(orders, 50, seen);
    int callsOnB = b.service().calls.get();

    a.stop();
    take(orders, 500, seen);

    assertThat(seen).hasSize(550);
    assertThat(b.service().calls.get() - callsOnB).as("leases from b after a stopped").isGreaterThanOrEqualTo(95);
    assertThat(orders.stats().failedCalls()).as("attempts on the stopped server").isPositive();
  }

  @Test
  void should_fail_over_when_a_server_hangs() {
    a.service().hang(true);
    client = builder().callDeadline(Duration.ofMillis(50)).build();
    IdSource orders = client.sequence("orders");
    Set<Long> seen = new HashSet<>();

    take(orders, 100, seen);

    assertThat(seen).hasSize(100);
    assertThat(a.service().calls).hasPositiveValue();
    assertThat(orders.stats().failedCalls()).isPositive();
  }

  @Test
  void should_fail_over_when_a_server_has_no_reserve() {
    a.service().failAlways(Status.UNAVAILABLE.withDescription("no reserve left and the store is unreachable"));
    client = builder().build();
    IdSource orders = client.sequence("orders");
    Set<Long> seen = new HashSet<>();

    take(orders, 100, seen);

    assertThat(seen).hasSize(100);
    assertThat(a.service().calls).hasPositiveValue();
    assertThat(orders.stats().failedCalls()).isEqualTo(a.service().calls.get());
  }

  @Test
  void should_keep_retrying_until_a_server_is_back() throws Exception {
    a.service().failAlways(Status.UNAVAILABLE);
    b.service().failAlways(Status.UNAVAILABLE);
    client = builder().build();
    IdSource orders = client.sequence("orders");
    Await.until("several failed attempts", () -> orders.stats().failedCalls() >= 4);

    b.service().failAlways((Status) null);

    assertThat(orders.next()).isEqualTo(1);
  }

  private static void take(IdSource source, int n, Set<Long> seen) {
    for (int i = 0; i < n; i++) {
      long id = source.next();
      assertThat(seen.add(id)).as("ID %s handed out twice", id).isTrue();
    }
  }
}
