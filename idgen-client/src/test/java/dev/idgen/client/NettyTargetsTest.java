package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Targets the client connects to itself, over TCP on loopback (the tests' classpath has
 * grpc-netty-shaded): a {@code host:port} target and a {@code dns:///} target, one of whose servers
 * stops.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NettyTargetsTest {
  private final FakeBackend backend = new FakeBackend().create("orders");
  private final FakeIdGenService first = new FakeIdGenService(backend);
  private final FakeIdGenService second = new FakeIdGenService(backend);
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

  private static Server start(FakeIdGenService service) throws IOException {
    return Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).addService(service).build().start();
  }

  @Test
  void should_serve_from_host_port_and_dns_targets_and_fail_over_when_one_stops() throws Exception {
    firstServer = start(first);
    secondServer = start(second);
    Set<Long> seen = new HashSet<>();
    try (IdGenClient client = IdGenClient.builder()
        .target("127.0.0.1:" + firstServer.getPort())
        .target("dns:///localhost:" + secondServer.getPort())
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

      firstServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      int callsOnSecond = second.calls.get();
      take(orders, 200, seen);

      assertThat(second.calls.get() - callsOnSecond).isGreaterThanOrEqualTo(35);
      assertThat(seen).hasSize(300);
    }
  }

  private static void take(IdSource source, int n, Set<Long> seen) {
    for (int i = 0; i < n; i++) {
      long id = source.next();
      assertThat(seen.add(id)).as("ID %s handed out twice", id).isTrue();
    }
  }
}
