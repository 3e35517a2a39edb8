package dev.idgen.server.metrics;

import static dev.idgen.server.TestServer.sample;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.Ordering;
import dev.idgen.server.InMemoryRangeStore;
import dev.idgen.server.TestServer;
import dev.idgen.server.config.ServerSettings;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code idgen_strict_owner} and {@code idgen_strict_owner_epoch} say which of the servers sharing a store
 * owns a strict sequence: the server that served it first holds the lease (1), the one that forwards to it
 * does not (0); when the owner stops, the other takes the sequence over with the next epoch.
 */
class StrictOwnerGaugeTest {
  private static final String OWNER = "idgen_strict_owner{sequence=\"orders\"}";
  private static final String EPOCH = "idgen_strict_owner_epoch{sequence=\"orders\"}";

  @Test
  void should_show_the_owner_with_1_and_its_epoch_and_follow_a_take_over() {
    InMemoryRangeStore store = new InMemoryRangeStore();
    try (TestServer b = TestServer.startNetty(Map.of(ServerSettings.SERVER_NAME, "b"), store)) {
      long epoch;
      try (TestServer a = TestServer.startNetty(Map.of(ServerSettings.SERVER_NAME, "a"), store)) {
        a.admin().createSequence(CreateSequenceRequest.newBuilder().setName("orders")
            .setOrdering(Ordering.ORDERING_STRICT).build());
        a.allocate("orders", 5);
        b.allocate("orders", 5); // forwarded to a, which owns the sequence

        assertThat(sample(scrape(a), OWNER)).isEqualTo(1);
        assertThat(sample(scrape(b), OWNER)).isEqualTo(0);
        epoch = (long) sample(scrape(a), EPOCH);
        assertThat(epoch).isPositive();
        assertThat(sample(scrape(b), EPOCH)).isEqualTo(0);
      }
      // a stopped gracefully and released its lease: b's next call takes the sequence at once.
      b.allocate("orders", 5);

      assertThat(sample(scrape(b), OWNER)).isEqualTo(1);
      assertThat((long) sample(scrape(b), EPOCH)).isGreaterThan(epoch);
    }
  }

  /** The registry after a refresh of the server's gauges (the periodic task's work, done now). */
  private static String scrape(TestServer server) {
    server.injector.getInstance(SequenceMonitor.class).refresh();
    return server.injector.getInstance(PrometheusMeterRegistry.class).scrape();
  }
}
