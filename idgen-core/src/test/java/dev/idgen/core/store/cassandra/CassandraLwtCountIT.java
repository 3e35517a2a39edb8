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
 * Counts the lightweight transactions each tier performs per million IDs at the default block sizes
 * (node 10,000, DC 1,000,000), for BENCHMARKS.md. Run alone with
 * {@code ./mvnw -pl idgen-core -am verify -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=CassandraLwtCountIT}.
 */
@ExtendWith(CassandraExtension.class)
class CassandraLwtCountIT {

  @Test
  void should_cost_few_lwts_per_million_ids_at_the_default_block_sizes() {
    String keyspace = LocalCassandra.newKeyspace("lwt");
    try (CassandraRangeStore store = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC1, true));
        Allocator allocator = Allocator.builder(store).build()) {
      SequenceDefinition d = allocator.create(SequenceDefinition.withDefaults("lwt"));
      CasStats globalBefore = store.globalStats(); // the create itself
      long ids = 3_000_000;
      for (long n = 0; n < ids; n += 100) {
        allocator.allocate(d.name(), 100, Duration.ofSeconds(30));
      }
      CasStats global = store.globalStats();
      CasStats pool = store.poolStats();
      double globalPerMillion = (global.attempts() - globalBefore.attempts()) * 1e6 / ids;
      double poolPerMillion = pool.attempts() * 1e6 / ids;
      System.out.printf("LWTs per million IDs (node block %d, DC block %d, 100 IDs per call, %d IDs):"
          + " global %.1f, dc pool %.1f; global=%s pool=%s%n", d.nodeBlockSize(), d.dcBlockSize(), ids,
          globalPerMillion, poolPerMillion, global, pool);
      // The design's arithmetic: one DC block per million IDs, and top-ups of about half a node block
      // (each a CAS, plus the append of each DC block); a little slack for the warm-up's small blocks.
      assertThat(globalPerMillion).isLessThanOrEqualTo(2.0);
      assertThat(poolPerMillion).isLessThanOrEqualTo(1e6 / (d.nodeBlockSize() / 2.0) * 1.3);
    }
  }
}
