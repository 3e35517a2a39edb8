package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.LocalCassandra.DC1;
import static dev.idgen.core.store.cassandra.LocalCassandra.DC2;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.Allocator;
import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.testing.CassandraExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Several allocators — each with its own Cassandra session, as separate servers would have — in both
 * datacenters of the real cluster, allocating concurrently.
 */
@ExtendWith(CassandraExtension.class)
class CassandraAllocatorIT {
  private static final Duration WAIT = Duration.ofSeconds(30);

  private String keyspace;
  private final List<CassandraRangeStore> stores = new ArrayList<>();
  private final List<Allocator> allocators = new ArrayList<>();

  @BeforeEach
  void schema() {
    keyspace = LocalCassandra.newKeyspace("alloc");
    CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC1, true)).close();
  }

  @AfterEach
  void close() {
    allocators.forEach(Allocator::close);
    stores.forEach(CassandraRangeStore::close);
  }

  private Allocator server(String dc) {
    CassandraRangeStore store = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, dc, false));
    stores.add(store);
    Allocator a = Allocator.builder(store).minNodeBlock(20).build();
    allocators.add(a);
    return a;
  }

  @Test
  @Tag("full")
  void should_never_hand_out_a_duplicate_across_servers_in_both_datacenters() throws Exception {
    List<Allocator> servers = List.of(server(DC1), server(DC1), server(DC2), server(DC2));
    // Small blocks in both tiers, so that both tiers refill many times while servers race.
    SequenceDefinition dense = servers.get(0).create(new SequenceDefinition("dense", 1, 2_000_000, 1, 200, 2_000));
    SequenceDefinition striped = servers.get(0).create(new SequenceDefinition("striped", 5, 2_000_000, 3, 150, 1_500));

    Set<Long> seenDense = ConcurrentHashMap.newKeySet();
    Set<Long> seenStriped = ConcurrentHashMap.newKeySet();
    AtomicLong duplicates = new AtomicLong();
    AtomicLong handedOut = new AtomicLong();
    ExecutorService threads = Executors.newFixedThreadPool(12);
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < 12; t++) {
      Allocator server = servers.get(t % servers.size());
      int seed = t;
      futures.add(threads.submit(() -> {
        Random random = new Random(seed);
        for (int i = 0; i < 400; i++) {
          boolean isStriped = random.nextBoolean();
          SequenceDefinition d = isStriped ? striped : dense;
          long count = 1 + random.nextInt(40);
          List<IdRange> ranges = server.allocate(d.name(), count, WAIT);
          long got = 0;
          for (IdRange r : ranges) {
            assertThat(r.stride()).isEqualTo(d.stripes());
            got += r.count();
            for (long k = 0; k < r.count(); k++) {
              long id = r.get(k);
              assertThat(id).isBetween(d.start(), d.max());
              assertThat(Math.floorMod(id - d.start(), d.stripes()))
                  .isEqualTo((int) Math.floorMod(r.first() - d.start(), d.stripes()));
              if (!(isStriped ? seenStriped : seenDense).add(id)) {
                duplicates.incrementAndGet();
              }
            }
          }
          assertThat(got).isEqualTo(count);
          handedOut.addAndGet(count);
        }
        return null;
      }));
    }
    for (Future<?> f : futures) {
      f.get(5, TimeUnit.MINUTES);
    }
    threads.shutdown();

    assertThat(duplicates.get()).isZero();
    assertThat((long) seenDense.size() + seenStriped.size()).isEqualTo(handedOut.get());
    long globalCas = stores.stream().mapToLong(s -> s.globalStats().applied()).sum();
    long poolCas = stores.stream().mapToLong(s -> s.poolStats().applied()).sum();
    assertThat(globalCas).as("DC blocks were taken from the global cursor many times").isGreaterThan(10);
    assertThat(poolCas).as("node blocks were taken from the DC pools many times").isGreaterThan(globalCas);
  }

  @Test
  void should_drop_cached_ids_on_every_server_when_one_server_advances() {
    Allocator dc1 = server(DC1);
    Allocator dc2 = server(DC2);
    dc1.create(new SequenceDefinition("legacy", 1, Long.MAX_VALUE, 2, 1_000, 10_000));
    // Both servers now hold cached node blocks (in memory) below the floor to come.
    dc1.allocate("legacy", 5, WAIT);
    dc2.allocate("legacy", 5, WAIT);
    dc2.allocate("legacy", 5, WAIT);
    assertThat(dc2.describe("legacy").serverReserve()).isGreaterThan(0);

    dc1.advance("legacy", 1_000_000);

    for (Allocator a : List.of(dc1, dc2)) {
      for (int i = 0; i < 20; i++) {
        for (IdRange r : a.allocate("legacy", 7, WAIT)) {
          assertThat(r.first()).isGreaterThan(1_000_000);
        }
      }
    }
  }
}
