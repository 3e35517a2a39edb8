package dev.idgen.client;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the tests of one source share: one in-process fake server with the sequence "orders", a fake
 * ticker, the client's scheduler (inline, or run by hand), and the client under test, closed after each test.
 *
 * @param <S> the scheduler's type, so that a test can drive a {@link ManualScheduler}
 */
abstract class OneServerFixture<S extends ScheduledExecutorService> {
  protected final FakeCluster cluster = new FakeCluster();
  protected final FakeTicker ticker = new FakeTicker();
  protected final S scheduler;
  protected FakeCluster.FakeServer server;
  protected IdGenClient client;

  OneServerFixture(Function<FakeTicker, S> scheduler) {
    this.scheduler = scheduler.apply(ticker);
  }

  @BeforeEach
  void startServer() {
    server = cluster.server();
    cluster.backend.create("orders");
  }

  @AfterEach
  void closeAll() {
    if (client != null) {
      client.close();
    }
    scheduler.shutdownNow();
    cluster.close();
  }

  /** A client over the server's channel, on the scheduler and the ticker, retrying after 1 to 5 ms. */
  protected IdGenClientBuilder builder() {
    return IdGenClient.builder()
        .channel(server.channel())
        .executor(scheduler)
        .ticker(ticker)
        .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(5));
  }
}
