package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdSource;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The client stub over two real servers (over TCP, one shared store): when one begins its graceful stop
 * (health NOT_SERVING, calls still answered during the quiet period), the stub's gRPC health checking
 * stops sending it calls, and the other server serves them all; no caller sees an error.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClientFailoverOnStopTest {

  @Test
  void should_serve_the_stub_from_the_other_server_once_one_reports_not_serving() {
    InMemoryRangeStore store = new InMemoryRangeStore();
    try (TestServer stopping = TestServer.startNetty(Map.of(), store);
        TestServer staying = TestServer.startNetty(Map.of(), store);
        IdGenClient client = IdGenClient.builder()
            .target("127.0.0.1:" + stopping.port())
            .target("127.0.0.1:" + staying.port())
            .usePlaintext()
            .minLeaseSize(5)
            .maxLeaseSize(5)
            .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(50))
            .waitDeadline(Duration.ofSeconds(20))
            .build()) {
      stopping.create("orders");
      IdSource orders = client.sequence("orders");
      Set<Long> seen = new HashSet<>();
      take(orders, 100, seen);
      assertThat(served(stopping)).isPositive();
      assertThat(served(staying)).isPositive();

      stopping.server.beginShutdown(); // what SIGTERM does first

      until("ten leases in a row from the other server", () -> {
        long before = served(stopping);
        long other = served(staying);
        take(orders, 50, seen);
        return served(stopping) == before && served(staying) - other >= 40; // less what the stub held
      });
      long servedByStopping = served(stopping);
      long servedByStaying = served(staying);
      take(orders, 300, seen);

      assertThat(served(stopping)).as("no call to the stopping server").isEqualTo(servedByStopping);
      // The stub served some of the 300 from leases it already held (two of 5 IDs, about).
      assertThat(served(staying) - servedByStaying).isGreaterThanOrEqualTo(280);
    }
  }

  /** IDs the server's allocator handed out. */
  private static long served(TestServer server) {
    return server.allocator().stats().served();
  }

  private static void take(IdSource source, int n, Set<Long> seen) {
    for (int i = 0; i < n; i++) {
      long id = source.next();
      assertThat(seen.add(id)).as("ID %s handed out twice", id).isTrue();
    }
  }

  private static void until(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out waiting until " + what);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }
}
