package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdGenClientException;
import dev.idgen.client.IdSource;
import dev.idgen.server.config.ServerSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client stub against the real server (real allocator, embedded store), in-process. */
class ClientAgainstServerTest {
  @TempDir
  Path dir;

  @Test
  void should_serve_unique_ids_to_many_threads_of_two_clients() throws Exception {
    try (TestServer server = TestServer.startEmbedded(dir);
        IdGenClient a = IdGenClient.builder().channel(server.channel).name("a").build();
        IdGenClient b = IdGenClient.builder().channel(server.channel).name("b").build()) {
      server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("orders").build());
      server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("striped").setStripes(3).build());

      Set<Long> seenOrders = ConcurrentHashMap.newKeySet();
      Set<Long> seenStriped = ConcurrentHashMap.newKeySet();
      AtomicLong duplicates = new AtomicLong();
      ExecutorService threads = Executors.newFixedThreadPool(6);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < 6; t++) {
        IdGenClient client = t % 2 == 0 ? a : b;
        boolean striped = t % 3 == 0;
        futures.add(threads.submit(() -> {
          IdSource source = client.sequence(striped ? "striped" : "orders");
          for (int i = 0; i < 20_000; i++) {
            long id = i % 100 == 0 ? source.next(5)[4] : source.next();
            if (!(striped ? seenStriped : seenOrders).add(id)) {
              duplicates.incrementAndGet();
            }
          }
          return null;
        }));
      }
      for (Future<?> f : futures) {
        f.get(2, TimeUnit.MINUTES);
      }
      threads.shutdown();
      assertThat(duplicates.get()).isZero();
      assertThat(seenOrders.size() + seenStriped.size()).isEqualTo(6 * 20_000);
      assertThat(seenOrders).allSatisfy(id -> assertThat(id).isPositive());
    }
  }

  @Test
  void should_hand_out_nothing_at_or_below_a_floor_after_the_advance_returned_though_it_held_a_lease() {
    try (TestServer server = TestServer.start(Map.of(ServerSettings.CLIENT_LEASE_LIFETIME, "1s"));
        IdGenClient client = IdGenClient.builder().channel(server.channel).minLeaseSize(1_000).build()) {
      server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("legacy").build());
      IdSource source = client.sequence("legacy");
      assertThat(source.next()).as("the stub now holds a lease of IDs far below the floor").isLessThan(1_000);

      server.admin().advanceSequence(AdvanceSequenceRequest.newBuilder().setName("legacy").setFloor(100_000).build());

      for (int i = 0; i < 3_000; i++) {
        assertThat(source.next()).isGreaterThan(100_000);
      }
      assertThat(source.stats().idsExpired()).as("the lease's unused IDs were dropped").isGreaterThan(0);
    }
  }

  @Test
  void should_surface_the_servers_not_found_to_the_caller() throws Exception {
    try (TestServer server = TestServer.startEmbedded(dir);
        IdGenClient client = IdGenClient.builder().channel(server.channel)
            .waitDeadline(Duration.ofSeconds(5)).build()) {
      IdSource typo = client.sequence("ordres");
      assertThatThrownBy(typo::next).isInstanceOf(IdGenClientException.class)
          .hasMessageContaining("ordres").hasMessageContaining("NOT_FOUND");
    }
  }
}
