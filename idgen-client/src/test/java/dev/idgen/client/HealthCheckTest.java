package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.IdGenGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * gRPC's client-side health checking, which the client's service config turns on: a server that
 * reports {@code NOT_SERVING} for {@code idgen.v1.IdGen} (as an idgen server does from the start of its
 * graceful stop, while it still answers calls) gets no new call; the other server takes them. Over
 * TCP on loopback, with two targets.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HealthCheckTest {
  private final FakeBackend backend = new FakeBackend().create("orders");
  private final FakeIdGenService first = new FakeIdGenService(backend);
  private final FakeIdGenService second = new FakeIdGenService(backend);
  private final HealthStatusManager firstHealth = new HealthStatusManager();
  private final HealthStatusManager secondHealth = new HealthStatusManager();
  private Server firstServer;
  private Server secondServer;

  @AfterEach
  void tearDown() throws InterruptedException {
    for (Server s : new Server[] {firstServer, secondServer}) {
      if (s != null) {
        s.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  private static Server start(FakeIdGenService service, HealthStatusManager health) throws IOException {
    health.setStatus(IdGenGrpc.SERVICE_NAME, ServingStatus.SERVING);
    return Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
        .addService(service).addService(health.getHealthService()).build().start();
  }

  @Test
  void should_send_no_new_call_to_a_server_that_reports_not_serving() throws Exception {
    firstServer = start(first, firstHealth);
    secondServer = start(second, secondHealth);
    Set<Long> seen = new HashSet<>();
    try (IdGenClient client = IdGenClient.builder()
        .target("127.0.0.1:" + firstServer.getPort())
        .target("127.0.0.1:" + secondServer.getPort())
        .usePlaintext()
        .minLeaseSize(5)
        .maxLeaseSize(5)
        .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(50))
        .waitDeadline(Duration.ofSeconds(20))
        .build()) {
      IdSource orders = client.sequence("orders");
      take(orders, 100, seen);
      assertThat(first.calls).hasValueGreaterThan(2);
      assertThat(second.calls).hasValueGreaterThan(2);

      // The first server begins a graceful stop: it still answers, but says it should not be called.
      firstHealth.setStatus(IdGenGrpc.SERVICE_NAME, ServingStatus.NOT_SERVING);
      // The health stream tells the channel within moments; until then a call may still go there.
      Await.until("ten leases in a row from the second server", () -> {
        int callsOnFirst = first.calls.get();
        int callsOnSecond = second.calls.get();
        take(orders, 50, seen);
        return first.calls.get() == callsOnFirst && second.calls.get() - callsOnSecond >= 10;
      });
      int callsOnFirst = first.calls.get();
      int callsOnSecond = second.calls.get();
      take(orders, 300, seen);

      assertThat(first.calls).as("no call to the server that reports NOT_SERVING").hasValue(callsOnFirst);
      assertThat(second.calls.get() - callsOnSecond).isGreaterThanOrEqualTo(55);

      firstHealth.setStatus(IdGenGrpc.SERVICE_NAME, ServingStatus.SERVING);
      int again = first.calls.get();
      Await.until("calls to the first server again once it serves", () -> {
        take(orders, 20, seen);
        return first.calls.get() > again;
      });
    }
  }

  private static void take(IdSource source, int n, Set<Long> seen) {
    for (int i = 0; i < n; i++) {
      long id = source.next();
      assertThat(seen.add(id)).as("ID %s handed out twice", id).isTrue();
    }
  }
}
