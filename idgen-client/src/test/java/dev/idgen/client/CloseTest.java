package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CloseTest {
  private final FakeCluster cluster = new FakeCluster();
  private FakeCluster.FakeServer server;

  @BeforeEach
  void setUp() {
    cluster.backend.create("orders");
    server = cluster.server();
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  private static List<Thread> threadsNamed(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith(prefix) && t.isAlive())
        .collect(Collectors.toList());
  }

  @Test
  void should_cancel_calls_fail_waiting_callers_and_end_its_threads() throws Exception {
    server.service().hang(true);
    // A long call deadline: the server must see the call cancelled by close(), not by its deadline.
    IdGenClient client = IdGenClient.builder().name("close-test").channel(server.channel())
        .callDeadline(Duration.ofMinutes(5)).waitDeadline(Duration.ofMinutes(5)).build();
    IdSource orders = client.sequence("orders"); // its first request hangs
    CompletableFuture<Long> waiting = CompletableFuture.supplyAsync(orders::next);
    Await.until("the request is in flight", () -> server.service().calls.get() == 1);
    Await.until("the caller waits", () -> orders.stats().waits() == 1);
    assertThat(threadsNamed("idgen-client-close-test-")).as("the client's thread").isNotEmpty();

    client.close();

    assertThat(threadsNamed("idgen-client-close-test-")).isEmpty();
    assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(IdGenClientException.class)
        .cause().satisfies(e -> {
          IdGenClientException ex = (IdGenClientException) e;
          assertThat(ex.reason()).isEqualTo(IdGenClientException.Reason.CLOSED);
          assertThat(ex.sequence()).isEqualTo("orders");
        });
    Await.until("the server sees the call cancelled", () -> server.service().cancellations.get() == 1);
  }

  @Test
  void should_refuse_work_after_close() {
    IdGenClient client = IdGenClient.builder().channel(server.channel()).build();
    IdSource orders = client.sequence("orders");
    orders.next();

    client.close();
    client.close(); // idempotent

    assertThatThrownBy(orders::next).isInstanceOfSatisfying(IdGenClientException.class,
        e -> assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.CLOSED));
    assertThatThrownBy(() -> orders.next(3)).isInstanceOf(IdGenClientException.class);
    assertThatThrownBy(() -> client.sequence("orders")).isInstanceOf(IllegalStateException.class);
    assertThat(orders.stats().idsHeld()).isZero();
    assertThat(client.toString()).contains("closed");
  }

  @Test
  void should_expire_the_current_lease_so_that_a_thread_that_read_it_before_takes_nothing_more() {
    IdGenClient client = IdGenClient.builder().channel(server.channel()).minLeaseSize(10).maxLeaseSize(10).build();
    LeasedIdSource orders = (LeasedIdSource) client.sequence("orders");
    assertThat(orders.next()).isEqualTo(1);
    Lease held = orders.currentLease(); // as a thread inside next() may hold it while close() runs

    client.close();

    assertThat(held.take(1)).as("an index past the end: no ID").isGreaterThanOrEqualTo(held.count);
    assertThat(held.expired()).isTrue();
    assertThat(orders.stats().idsServed()).isEqualTo(1);
  }

  @Test
  void should_leave_the_given_executor_and_channels_to_the_application() {
    ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    try {
      IdGenClient client = IdGenClient.builder().channel(server.channel()).executor(executor).build();
      client.sequence("orders").next();

      client.close();

      assertThat(executor.isShutdown()).isFalse();
      assertThat(server.channel().isShutdown()).isFalse();
    } finally {
      executor.shutdownNow();
    }
  }
}
