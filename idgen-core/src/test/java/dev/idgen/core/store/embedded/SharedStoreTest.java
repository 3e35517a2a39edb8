package dev.idgen.core.store.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.Allocator;
import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two allocators on one embedded store, as two servers share a Cassandra keyspace (two processes cannot share
 * an embedded directory: the file is locked for one): an advance on one returns only when the other has
 * dropped its cached IDs at or below the floor.
 */
class SharedStoreTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  @TempDir
  Path dir;

  @Test
  void should_make_an_advance_on_one_process_hold_on_the_other_before_it_returns() {
    try (EmbeddedRangeStore store = EmbeddedRangeStore.open(dir);
        Allocator a = Allocator.builder(store).serverName("a").minNodeBlock(1_000).build();
        Allocator b = Allocator.builder(store).serverName("b").minNodeBlock(1_000).build()) {
      a.create(new SequenceDefinition("shared", 1, Long.MAX_VALUE, 1, 10_000, 1_000_000));
      List<IdRange> cached = b.allocate("shared", 1, WAIT);
      assertThat(cached.get(0).first()).as("b caches IDs far below the floor to come").isLessThan(1_000);
      assertThat(b.describe("shared").serverReserve()).isPositive();

      a.advance("shared", 50_000);

      for (int i = 0; i < 20; i++) {
        assertThat(b.allocate("shared", 3, WAIT).get(0).first()).isGreaterThan(50_000);
      }
    }
  }
}
