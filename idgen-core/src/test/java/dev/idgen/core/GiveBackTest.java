package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
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

  @Test
  void should_give_back_several_sequences_at_once_so_that_a_stop_does_not_take_a_round_trip_per_sequence() {
    // Each give-back waits (10 s at most) until another one is under way: one after another, none would meet.
    CyclicBarrier two = new CyclicBarrier(2);
    AtomicInteger met = new AtomicInteger();
    InMemoryRangeStore store = new InMemoryRangeStore() {
      @Override
      public long giveBack(SequenceDefinition d, int stripe, List<IdRange> ranges) {
        try {
          two.await(10, TimeUnit.SECONDS);
          met.incrementAndGet();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } catch (BrokenBarrierException | TimeoutException e) {
          // not met: counted by met staying low
        }
        return super.giveBack(d, stripe, ranges);
      }
    };
    Allocator a = Allocator.builder(store).minNodeBlock(100).build();
    for (String name : List.of("a", "b", "c", "d")) {
      a.create(new SequenceDefinition(name, 1, Long.MAX_VALUE, 1, 1_000, 1_000_000));
      a.allocate(name, 1, WAIT);
    }
    long held = a.stats().held();

    a.close();

    assertThat(met.get()).as("give-backs that ran beside another one").isEqualTo(4);
    assertThat(a.stats().returned()).isEqualTo(held);
    assertThat(store.givenBack).isEqualTo(held);
  }

  @Test
  void should_give_back_the_largest_reserves_first_and_count_the_rest_lost_once_the_deadline_has_passed() {
    // A store one give-back at a time, each taking a second of the fake ticker: 100 sequences would need 100 s.
    AtomicLong now = new AtomicLong();
    Map<String, Long> backBySequence = new ConcurrentHashMap<>();
    InMemoryRangeStore store = new InMemoryRangeStore() {
      @Override
      public synchronized long giveBack(SequenceDefinition d, int stripe, List<IdRange> ranges) {
        now.addAndGet(TimeUnit.SECONDS.toNanos(1));
        long n = super.giveBack(d, stripe, ranges);
        backBySequence.merge(d.name(), n, Long::sum);
        return n;
      }
    };
    Allocator a = Allocator.builder(store).ticker(now::get).minNodeBlock(1_000).unloadIdleAfter(Duration.ZERO)
        .giveBackDeadline(Duration.ofSeconds(10)).build();
    for (int i = 1; i <= 100; i++) {
      a.create(new SequenceDefinition("s" + i, 1, Long.MAX_VALUE, 1, 10_000, 1_000_000));
      a.allocate("s" + i, i, WAIT); // s1 holds the most, s100 the least
    }
    Map<String, Long> held = a.sequenceStats().stream()
        .collect(Collectors.toMap(st -> st.definition().name(), Allocator.SequenceStats::held));
    List<String> largestFirst = new ArrayList<>(held.keySet());
    largestFirst.sort(Comparator.comparing(held::get).reversed());
    assertThat(held.values()).as("distinct reserves, so that the order is defined").doesNotHaveDuplicates();
    long total = a.stats().held();

    a.close();

    // Sequences are taken largest first, none once the deadline has passed: what went back is a prefix of that
    // order, at most the 32 give-backs in flight plus the 10 that fit in 10 s; everything else is counted lost.
    int back = backBySequence.size();
    assertThat(back).as("sequences given back").isBetween(1, 32 + 10);
    assertThat(backBySequence.keySet()).containsExactlyInAnyOrderElementsOf(largestFirst.subList(0, back));
    long returned = backBySequence.values().stream().mapToLong(Long::longValue).sum();
    assertThat(a.stats().returned()).isEqualTo(returned);
    assertThat(a.stats().abandoned()).as("counted lost").isEqualTo(total - returned).isPositive();
    for (Allocator.SequenceStats st : a.sequenceStats()) {
      String name = st.definition().name();
      assertThat(st.abandoned()).as(name).isEqualTo(backBySequence.containsKey(name) ? 0 : held.get(name));
    }
  }
}
