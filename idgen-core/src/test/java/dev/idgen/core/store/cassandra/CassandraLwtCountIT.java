package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.LocalCassandra.DC1;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.Allocator;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.testing.CassandraExtension;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Counts the lightweight transactions each tier performs per million IDs with default settings (reserves
 * sized by time), from a cold start, for BENCHMARKS.md. Run alone with
 * {@code ./mvnw -pl idgen-core -am verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=CassandraLwtCountIT}.
 */
@ExtendWith(CassandraExtension.class)
class CassandraLwtCountIT {

  @Test
  void should_cost_few_lwts_per_million_ids_with_default_settings() {
    String keyspace = LocalCassandra.newKeyspace("lwt");
    try (CassandraRangeStore store = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC1, true));
        Allocator allocator = Allocator.builder(store).build()) {
      SequenceDefinition d = allocator.create(SequenceDefinition.withDefaults("lwt"));
      CasStats globalBefore = store.globalStats(); // the create itself
      long startNanos = System.nanoTime();
      long ids = 5_000_000;
      for (long n = 0; n < ids; n += 100) {
        allocator.allocate(d.name(), 100, Duration.ofSeconds(30));
      }
      CasStats global = store.globalStats();
      CasStats pool = store.poolStats();
      double globalPerMillion = (global.attempts() - globalBefore.attempts()) * 1e6 / ids;
      double poolPerMillion = pool.attempts() * 1e6 / ids;
      long nanos = System.nanoTime() - startNanos;
      System.out.printf("LWTs per million IDs (defaults, 100 IDs per call, %d IDs from a cold start at %.2fM IDs/s):"
          + " global %.2f, dc pool %.2f; global=%s pool=%s%n", ids, ids * 1e3 / nanos,
          globalPerMillion, poolPerMillion, global, pool);
      // Reserves sized by time: after a few refills while the cold sequence's reserve grows, a server needs
      // one pool compare-and-set per 75 s of its traffic, and the datacenter one global one per 6 h.
      assertThat(globalPerMillion).isLessThanOrEqualTo(5.0);
      assertThat(poolPerMillion).isLessThanOrEqualTo(20.0);
    }
  }
}
