package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Reserves sized by time, with default settings and a fake clock: the outage runway holds from the worst
 * moment, blocks follow the rate, and a fast sequence needs few store reservations.
 */
// Its allocators may log warnings of FloorSync: never while FloorSyncTest reads that log.
@ResourceLock(value = FloorSyncTest.LOG, mode = ResourceAccessMode.READ)
@Execution(ExecutionMode.CONCURRENT) // shares nothing static; beside the classes that wait on real time
class RunwaySizingTest {
  private static final Duration WAIT = Duration.ofSeconds(5);
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  private final AtomicLong now = new AtomicLong();
  private final AtomicBoolean down = new AtomicBoolean();
  private final InMemoryRangeStore store = new InMemoryRangeStore() {
    @Override
    protected void beforeReserve(SequenceDefinition d, int stripe, long size) {
      if (down.get()) {
        throw new StoreUnavailableException("store frozen for the test");
      }
    }
  };
  private Allocator allocator;

  @AfterEach
  void close() {
    if (allocator != null) {
      allocator.close();
    }
  }

  /** Defaults everywhere; refills run inline, so the test decides when time passes. */
  private Allocator defaults() {
    allocator = Allocator.builder(store).executor(Runnable::run).ticker(now::get).build();
    return allocator;
  }

  @Test
  void should_serve_the_whole_outage_runway_when_the_store_fails_at_the_worst_moment() {
    Allocator a = defaults();
    a.create(SequenceDefinition.withDefaults("paced"));
    Set<Long> seen = new HashSet<>();
    // Two minutes at 200 IDs/s, one ID every 5 ms.
    for (int i = 0; i < 200 * 120; i++) {
      now.addAndGet(5 * MS);
      assertThat(seen.add(a.allocate("paced", 1, WAIT).get(0).first())).isTrue();
    }
    long lowWater = a.sequenceStats().get(0).lowWater();
    assertThat(lowWater).as("5 minutes at 200 IDs/s").isBetween(59_000L, 61_000L);
    assertThat(a.sequenceStats().get(0).held()).as("never more than mark + step")
        .isLessThanOrEqualTo(lowWater + lowWater / 4 + 1);

    // The store stops answering; from now on every refill fails. The reserve was refilled the moment it
    // fell below the mark, so whatever the moment, the whole runway is still in memory.
    down.set(true);
    for (int i = 0; i < 200 * 295; i++) {
      now.addAndGet(5 * MS);
      assertThat(seen.add(a.allocate("paced", 1, WAIT).get(0).first())).isTrue();
    }
    // It does run out, after at most mark + step: the reserve is bounded, and nothing is handed out twice.
    StoreUnavailableException dry = null;
    for (int i = 0; i < 200 * 120 && dry == null; i++) {
      now.addAndGet(5 * MS);
      try {
        assertThat(seen.add(a.allocate("paced", 1, WAIT).get(0).first())).isTrue();
      } catch (StoreUnavailableException e) {
        dry = e;
      }
    }
    assertThat(dry).as("a bounded reserve runs dry within 6.25 minutes at the rate").isNotNull();

    down.set(false);
    now.addAndGet(TimeUnit.SECONDS.toNanos(10)); // past the refill back-off
    assertThat(seen.add(a.allocate("paced", 1, WAIT).get(0).first())).as("back at once").isTrue();
  }

  @Test
  void should_need_few_reservations_per_million_ids_at_millions_of_ids_per_second() {
    Allocator a = defaults();
    a.create(SequenceDefinition.withDefaults("fast"));
    // About 3 million IDs/s: 100 IDs every 33 µs, from a cold start.
    for (int i = 0; i < 10_000; i++) {
      now.addAndGet(33_000);
      a.allocate("fast", 100, WAIT);
    }
    int coldStart = store.reserveCalls.get();
    assertThat(coldStart).as("the first million IDs, from a cold start").isLessThanOrEqualTo(40);
    for (int i = 0; i < 50_000; i++) {
      now.addAndGet(33_000);
      a.allocate("fast", 100, WAIT);
    }
    assertThat(store.reserveCalls.get() - coldStart).as("the next 5 million: at most 20 per million")
        .isLessThanOrEqualTo(100);
    // At 3 million IDs/s the default cap (100,000,000) binds: mark = cap / 1.25.
    assertThat(a.sequenceStats().get(0).lowWater()).isEqualTo(80_000_000L);
  }

  @Test
  void should_shrink_the_reserve_when_the_rate_falls() {
    Allocator a = defaults();
    a.create(SequenceDefinition.withDefaults("calm"));
    for (int i = 0; i < 1_000 * 60; i++) { // a minute at 1,000 IDs/s
      now.addAndGet(MS);
      a.allocate("calm", 1, WAIT);
    }
    long busy = a.sequenceStats().get(0).lowWater();
    assertThat(busy).isBetween(290_000L, 310_000L);
    // Ten hours at 10 IDs/s: the mark follows the rate down at the first refill, once the reserve the busy
    // minute left has been used down to it.
    for (int i = 0; i < 10 * 36_000; i++) {
      now.addAndGet(100 * MS);
      a.allocate("calm", 1, WAIT);
    }
    assertThat(a.sequenceStats().get(0).lowWater()).as("follows the rate down").isBetween(2_900L, 3_100L);
    assertThat(a.sequenceStats().get(0).held()).isLessThanOrEqualTo(3_100L + 3_100L / 4 + 100);
  }

  @Test
  void should_give_a_stripe_its_own_runway() {
    Allocator a = defaults();
    a.create(new SequenceDefinition("striped", 1, Long.MAX_VALUE, 4, SequenceDefinition.DEFAULT_NODE_BLOCK_SIZE,
        SequenceDefinition.DEFAULT_DC_BLOCK_SIZE));
    for (int i = 0; i < 400 * 120; i++) { // 400 IDs/s over 4 stripes: 100 each
      now.addAndGet(TimeUnit.MICROSECONDS.toNanos(2_500));
      List<IdRange> got = a.allocate("striped", 1, WAIT);
      assertThat(got).hasSize(1);
    }
    assertThat(a.sequenceStats().get(0).lowWater()).as("4 stripes × 5 minutes × 100 IDs/s")
        .isBetween(116_000L, 124_000L);
  }
}
