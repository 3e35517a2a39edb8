package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A graceful stop gives back what the allocator holds; the next server continues where it stopped. */
class GiveBackTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  @Test
  void should_give_back_the_reserve_at_close_so_that_the_next_server_continues_without_a_gap() {
    InMemoryRangeStore store = new InMemoryRangeStore();
    Allocator first = Allocator.builder(store).minNodeBlock(1_000).build();
    first.create(new SequenceDefinition("s", 1, Long.MAX_VALUE, 3, 1_000, 1_000_000));
    Set<Long> seen = new HashSet<>();
    long last = 0;
    for (int i = 0; i < 30; i++) {
      for (IdRange r : first.allocate("s", 7, WAIT)) {
        for (long k = 0; k < r.count(); k++) {
          assertThat(seen.add(r.get(k))).isTrue();
          last = Math.max(last, r.get(k));
        }
      }
    }
    long held = first.stats().held();
    assertThat(held).as("the server holds a reserve").isPositive();

    first.close();

    assertThat(first.stats().returned()).isEqualTo(held);
    assertThat(first.stats().held()).isZero();
    assertThat(first.sequenceStats()).singleElement()
        .satisfies(s -> assertThat(s.abandoned()).as("a graceful stop abandons nothing").isZero());
    assertThat(store.givenBack).isEqualTo(held);

    Allocator second = Allocator.builder(store).minNodeBlock(1_000).build();
    try {
      // Every ID of the sequence up to the last one handed out, and what was given back, is handed out
      // exactly once between the two servers: nothing skipped.
      long next = 0;
      while (seen.size() < last + held) {
        List<IdRange> got = second.allocate("s", 5, WAIT);
        for (IdRange r : got) {
          for (long k = 0; k < r.count(); k++) {
            assertThat(seen.add(r.get(k))).as("no ID twice").isTrue();
            next = Math.max(next, r.get(k));
          }
        }
      }
      for (long id = 1; id <= last; id++) {
        assertThat(seen).as("no gap below the first server's last ID").contains(id);
      }
    } finally {
      second.close();
    }
  }

  @Test
  void should_count_a_reserve_the_store_does_not_take_back_as_abandoned() {
    InMemoryRangeStore store = new InMemoryRangeStore() {
      @Override
      public synchronized long giveBack(SequenceDefinition d, int stripe, List<IdRange> ranges) {
        throw new StoreUnavailableException("store down at shutdown");
      }
    };
    Allocator a = Allocator.builder(store).minNodeBlock(100).build();
    a.create(new SequenceDefinition("s", 1, Long.MAX_VALUE, 1, 1_000, 1_000_000));
    a.allocate("s", 1, WAIT);
    long held = a.stats().held();

    a.close();

    assertThat(a.stats().returned()).isZero();
    assertThat(a.sequenceStats()).singleElement().satisfies(s -> assertThat(s.abandoned()).isEqualTo(held));
  }
}
