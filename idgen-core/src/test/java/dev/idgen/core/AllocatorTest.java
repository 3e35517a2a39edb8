package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;

// Its allocators may log warnings of FloorSync: never while FloorSyncTest reads that log.
@ResourceLock(value = FloorSyncTest.LOG, mode = ResourceAccessMode.READ)
@Execution(ExecutionMode.CONCURRENT) // shares nothing static; beside the classes that wait on real time
class AllocatorTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final InMemoryRangeStore store = new InMemoryRangeStore();
  private final List<Allocator> allocators = new ArrayList<>();

  @AfterEach
  void closeAll() {
    allocators.forEach(Allocator::close);
  }

  private Allocator allocator(AllocatorBuilder b) {
    Allocator a = b.build();
    allocators.add(a);
    return a;
  }

  private static SequenceDefinition seq(String name, long start, long max, int stripes, long nodeBlock) {
    return new SequenceDefinition(name, start, max, stripes, nodeBlock, Math.max(nodeBlock, 1_000_000));
  }

  private static List<Long> ids(List<IdRange> ranges) {
    List<Long> ids = new ArrayList<>();
    for (IdRange r : ranges) {
      for (long i = 0; i < r.count(); i++) {
        ids.add(r.get(i));
      }
    }
    return ids;
  }

  @Test
  void should_never_hand_out_a_duplicate_across_threads_and_allocators() throws Exception {
    // Two allocators over one store stand for two servers; small blocks force many refills.
    Allocator a = allocator(Allocator.builder(store).minNodeBlock(10));
    Allocator b = allocator(Allocator.builder(store).minNodeBlock(10));
    a.create(seq("orders", 1, Long.MAX_VALUE, 1, 500));
    a.create(seq("striped", 100, Long.MAX_VALUE, 4, 300));

    Set<Long> seenOrders = ConcurrentHashMap.newKeySet();
    Set<Long> seenStriped = ConcurrentHashMap.newKeySet();
    AtomicLong duplicates = new AtomicLong();
    AtomicLong handedOut = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      Allocator alloc = t % 2 == 0 ? a : b;
      futures.add(pool.submit(() -> {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        for (int i = 0; i < 2_000; i++) {
          boolean striped = rnd.nextBoolean();
          long count = rnd.nextLong(1, 60);
          List<IdRange> ranges = alloc.allocate(striped ? "striped" : "orders", count, WAIT);
          List<Long> got = ids(ranges);
          assertThat(got).hasSize((int) count);
          for (long id : got) {
            if (!(striped ? seenStriped : seenOrders).add(id)) {
              duplicates.incrementAndGet();
            }
          }
          handedOut.addAndGet(count);
        }
        return null;
      }));
    }
    for (Future<?> f : futures) {
      f.get(60, TimeUnit.SECONDS);
    }
    pool.shutdown();
    assertThat(duplicates.get()).isZero();
    assertThat((long) seenOrders.size() + seenStriped.size()).isEqualTo(handedOut.get());
    assertThat(seenStriped).allSatisfy(id -> assertThat(id).isGreaterThanOrEqualTo(100));
    assertThat(store.reserveCalls.get()).as("small blocks must have refilled many times").isGreaterThan(50);
  }

  @Test
  void should_report_per_sequence_stats_telling_advanced_from_abandoned_ids() {
    Allocator a = allocator(Allocator.builder(store).minNodeBlock(10).executor(Runnable::run));
    a.create(seq("s", 1, Long.MAX_VALUE, 1, 10));
    assertThat(a.isLoaded("s")).isFalse();
    a.allocate("s", 3, WAIT);
    Allocator.SequenceStats afterAllocate = a.sequenceStats().get(0);
    a.advance("s", 5); // drops the held IDs 4 and 5
    Allocator.SequenceStats afterAdvance = a.sequenceStats().get(0);
    long heldBeforeClose = afterAdvance.held();
    a.close();
    Allocator.SequenceStats afterClose = a.sequenceStats().get(0);

    assertThat(a.isLoaded("s")).isTrue();
    assertThat(afterAllocate.served()).isEqualTo(3);
    assertThat(afterAllocate.reservations()).isPositive();
    assertThat(afterAdvance.droppedByAdvance()).isEqualTo(2);
    assertThat(afterAdvance.abandoned()).isZero();
    assertThat(heldBeforeClose).isPositive();
    assertThat(afterClose.abandoned()).as("given back to the store, not abandoned").isZero();
    assertThat(a.stats().returned()).isEqualTo(heldBeforeClose);
    assertThat(afterClose.droppedByAdvance()).isEqualTo(2);
    assertThat(afterClose.held()).isZero();
  }

  @Test
  void should_hand_out_stripe_k_as_start_plus_k_plus_i_times_stripes() {
    Allocator a = allocator(Allocator.builder(store));
    a.create(seq("s", 10, Long.MAX_VALUE, 3, 1_000));
    Set<Long> residues = new HashSet<>();
    for (int i = 0; i < 30; i++) {
      for (IdRange r : a.allocate("s", 5, WAIT)) {
        assertThat(r.stride()).isEqualTo(3);
        residues.add((long) Math.floorMod(r.first() - 10, 3));
        for (long id : ids(List.of(r))) {
          assertThat(id).isGreaterThanOrEqualTo(10);
          assertThat(Math.floorMod(id - 10, 3)).isEqualTo(Math.floorMod(r.first() - 10, 3));
        }
      }
    }
    assertThat(residues).as("calls rotate over every stripe").containsExactlyInAnyOrder(0L, 1L, 2L);
    // The very first IDs of each stripe are start + k.
    InMemoryRangeStore fresh = new InMemoryRangeStore();
    Allocator b = allocator(Allocator.builder(fresh));
    b.create(seq("t", 10, Long.MAX_VALUE, 3, 1_000));
    List<Long> firsts = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      firsts.add(b.allocate("t", 1, WAIT).get(0).first());
    }
    assertThat(firsts).containsExactlyInAnyOrder(10L, 11L, 12L);
  }

  @Test
  void should_exhaust_at_max_delivering_every_remaining_id_once_and_never_above_max() {
    Allocator a = allocator(Allocator.builder(store).minNodeBlock(8));
    long max = 2_147_483_647L;
    a.create(seq("int32", max - 99, max, 4, 16));
    Set<Long> seen = new HashSet<>();
    SequenceExhaustedException last = null;
    for (int i = 0; i < 100 && last == null; i++) {
      try {
        for (long id : ids(a.allocate("int32", 7, WAIT))) {
          assertThat(seen.add(id)).isTrue();
        }
      } catch (SequenceExhaustedException e) {
        last = e;
        for (long id : ids(e.delivered())) {
          assertThat(seen.add(id)).isTrue();
        }
      }
    }
    assertThat(last).isNotNull();
    assertThat(last.getMessage()).contains("int32").contains(String.valueOf(max));
    assertThat(seen).hasSize(100).allSatisfy(id -> assertThat(id).isBetween(max - 99, max));
    assertThatThrownBy(() -> a.allocate("int32", 1, WAIT))
        .isInstanceOf(SequenceExhaustedException.class)
        .satisfies(e -> assertThat(((SequenceExhaustedException) e).delivered()).isEmpty());
  }

  @Test
  void should_deliver_the_last_ids_that_a_refill_in_flight_took_when_a_large_request_finds_the_end()
      throws Exception {
    // The race: a large request starts the pool's refill, which takes the last 100 IDs before the
    // request's own direct reservation finds the space empty, and publishes them only after the request
    // has looked at the pool again. The call must wait for that refill and deliver its IDs, not report the
    // sequence exhausted with nothing delivered while the pool is about to hold them.
    ConcurrentLinkedQueue<Runnable> held = new ConcurrentLinkedQueue<>();
    CountDownLatch refillReserved = new CountDownLatch(1);
    AtomicReference<Thread> callerThread = new AtomicReference<>();
    AtomicReference<Future<Throwable>> call = new AtomicReference<>();
    InMemoryRangeStore store = new InMemoryRangeStore() {
      @Override
      public IdRange reserve(SequenceDefinition d, int stripe, long size) {
        try {
          if (Thread.currentThread().getName().startsWith("idgen-direct-reserve-")) { // the large request
            new Thread(held.poll(), "refill").start();
            assertThat(refillReserved.await(10, TimeUnit.SECONDS)).isTrue();
            return super.reserve(d, stripe, size); // the space is empty now
          }
          IdRange r = super.reserve(d, stripe, size); // the refill: the last IDs
          refillReserved.countDown();
          // Publish only once the caller has finished or waits for this refill.
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
          while (System.nanoTime() < until && (call.get() == null || !call.get().isDone())
              && callerThread.get().getState() != Thread.State.TIMED_WAITING) {
            Thread.sleep(1);
          }
          return r;
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
      }
    };
    Allocator a = allocator(Allocator.builder(store).executor(held::add).minNodeBlock(100));
    long max = 2_147_483_647L;
    a.create(seq("last100", max - 99, max, 1, 10_000));
    ExecutorService caller = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "caller");
      callerThread.set(t);
      return t;
    });
    try {
      call.set(caller.submit(() -> {
        try {
          a.allocate("last100", 1_000, WAIT);
          return null;
        } catch (Throwable e) {
          return e;
        }
      }));
      Throwable outcome = call.get().get(20, TimeUnit.SECONDS);
      assertThat(refillReserved.getCount()).as("the refill reserved during the large request").isZero();
      assertThat(outcome).isInstanceOf(SequenceExhaustedException.class);
      List<Long> delivered = ids(((SequenceExhaustedException) outcome).delivered());
      assertThat(delivered).hasSize(100).doesNotHaveDuplicates()
          .allSatisfy(id -> assertThat(id).isBetween(max - 99, max));
    } finally {
      caller.shutdownNow();
    }
  }

  @Test
  void should_serve_from_memory_without_waiting_or_else_decline_and_take_nothing() {
    List<Runnable> refills = new ArrayList<>();
    Allocator a = allocator(Allocator.builder(store).executor(refills::add).minNodeBlock(100));
    a.create(seq("fast", 1, Long.MAX_VALUE, 1, 100));

    assertThat(a.tryAllocate("fast", 1)).as("not loaded yet: the blocking path loads it").isNull();
    assertThat(a.tryAllocate("nope", 1)).isNull();
    Set<Long> seen = new HashSet<>(ids(a.allocate("fast", 100, WAIT))); // a whole block, reserved directly
    assertThat(a.tryAllocate("fast", 1)).as("nothing in memory: it would wait").isNull();
    assertThat(refills).as("one refill in flight, never two").hasSize(1);
    refills.remove(0).run();

    long servedBefore = a.stats().served();
    assertThat(a.tryAllocate("fast", 101)).as("more than the reserve holds").isNull();
    assertThat(a.stats().served()).as("a declined call takes nothing").isEqualTo(servedBefore);
    assertThat(a.tryAllocate("fast", 0)).isNull();
    assertThat(a.tryAllocate("fast", Long.MAX_VALUE)).isNull();

    List<IdRange> got = a.tryAllocate("fast", 40);
    assertThat(got).isNotNull();
    assertThat(ids(got)).hasSize(40).allSatisfy(id -> assertThat(seen.add(id)).isTrue());
    assertThat(a.stats().served()).isEqualTo(servedBefore + 40);

    refills.forEach(Runnable::run); // else close() waits its 15 s for a refill this executor never runs
    a.close();
    assertThat(a.tryAllocate("fast", 1)).isNull();
  }

  @Test
  void should_not_overflow_at_long_max() {
    Allocator a = allocator(Allocator.builder(store));
    a.create(seq("big", Long.MAX_VALUE - 9, Long.MAX_VALUE, 3, 1_000));
    Set<Long> seen = new HashSet<>();
    assertThatThrownBy(() -> {
      while (true) {
        seen.addAll(ids(a.allocate("big", 1, WAIT)));
      }
    }).isInstanceOf(SequenceExhaustedException.class);
    assertThat(seen).hasSize(10).allSatisfy(id -> assertThat(id).isGreaterThanOrEqualTo(Long.MAX_VALUE - 9));
  }

  @Test
  void should_drop_cached_ids_at_or_below_an_advanced_floor() {
    Allocator a = allocator(Allocator.builder(store).minNodeBlock(1_000));
    a.create(seq("adv", 1, Long.MAX_VALUE, 2, 1_000));
    a.allocate("adv", 10, WAIT);
    a.allocate("adv", 10, WAIT);
    assertThat(a.describe("adv").serverReserve()).as("both stripes hold cached IDs").isGreaterThan(0);

    a.advance("adv", 500);
    for (int i = 0; i < 50; i++) {
      assertThat(ids(a.allocate("adv", 3, WAIT))).allSatisfy(id -> assertThat(id).isGreaterThan(500));
    }
    assertThat(a.stats().dropped()).isGreaterThan(0);

    long before = ids(a.allocate("adv", 1, WAIT)).get(0);
    a.advance("adv", 3); // backwards: nothing changes, nothing is re-issued
    assertThat(ids(a.allocate("adv", 1, WAIT)).get(0)).isGreaterThan(500).isNotEqualTo(before);

    assertThatThrownBy(() -> a.advance("adv", Long.MAX_VALUE))
        .isInstanceOfSatisfying(FloorAtMaxException.class, e -> assertThat(e.floor()).isEqualTo(Long.MAX_VALUE))
        .hasMessageContaining("adv")
        .hasMessageContaining(String.valueOf(Long.MAX_VALUE));
  }

  @Test
  void should_keep_the_floor_when_a_refill_in_flight_returns_ids_below_it() throws Exception {
    CountDownLatch reserved = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean gate = new AtomicBoolean();
    InMemoryRangeStore slow = new InMemoryRangeStore() {
      @Override
      public IdRange reserve(SequenceDefinition d, int stripe, long size) {
        IdRange r = super.reserve(d, stripe, size);
        if (gate.get()) {
          reserved.countDown();
          try {
            release.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
        }
        return r;
      }
    };
    // Refills are held until the test releases them, so that the stalled refill is the first one.
    ConcurrentLinkedQueue<Runnable> held = new ConcurrentLinkedQueue<>();
    AtomicBoolean autoRun = new AtomicBoolean();
    Executor executor = task -> {
      if (autoRun.get()) {
        new Thread(task, "test-refill").start();
      } else {
        held.add(task);
      }
    };
    Allocator a = allocator(Allocator.builder(slow).executor(executor).minNodeBlock(100));
    a.create(seq("race", 1, Long.MAX_VALUE, 1, 100));
    a.allocate("race", 100, WAIT); // a whole block, reserved directly; the pool's first refill is held
    assertThat(held).hasSize(1);
    gate.set(true);
    autoRun.set(true);
    new Thread(held.poll(), "stalled-refill").start(); // reserves, then stalls before publishing
    assertThat(reserved.await(10, TimeUnit.SECONDS)).isTrue();
    ExecutorService caller = Executors.newSingleThreadExecutor();
    Future<List<IdRange>> waiting = caller.submit(() -> a.allocate("race", 60, WAIT)); // pool empty: waits
    a.advance("race", 10_000); // the stalled refill's range lies below this floor
    release.countDown();
    assertThat(ids(waiting.get(10, TimeUnit.SECONDS))).allSatisfy(id -> assertThat(id).isGreaterThan(10_000));
    assertThat(a.stats().dropped()).as("the stalled refill's range was dropped").isGreaterThanOrEqualTo(100);
    caller.shutdown();
  }

  @Test
  void should_start_a_refill_as_soon_as_the_reserve_falls_below_its_low_water_mark() {
    ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    // Every clock read is a second later and the runway is 1 ms: each refill measures a rate whose
    // runway is below min-node-block, so the mark stays at the minimum and the refill point shows.
    AtomicLong clock = new AtomicLong();
    Allocator a = allocator(Allocator.builder(store).executor(tasks::add)
        .ticker(() -> clock.addAndGet(TimeUnit.SECONDS.toNanos(1))).outageRunway(Duration.ofMillis(1))
        .minNodeBlock(100).refillStep(0.25));
    a.create(seq("pre", 1, Long.MAX_VALUE, 1, 1_000));
    // No rate measured yet: the low-water mark is min-node-block (100), and a refill from empty brings
    // it plus a step of at least min-node-block: 200. A call that large reserves directly.
    a.allocate("pre", 200, WAIT);
    assertThat(tasks).as("the pool's first refill is queued").hasSize(1);
    tasks.poll().run();
    assertThat(a.describe("pre").serverReserve()).isEqualTo(200);

    a.allocate("pre", 100, WAIT);
    assertThat(tasks).as("100 left: at the mark, not below it").isEmpty();
    a.allocate("pre", 1, WAIT);
    assertThat(tasks).as("below the mark: one refill requested").hasSize(1);
    assertThat(a.describe("pre").serverReserve()).as("while a whole mark's worth is nearly left").isEqualTo(99);
    a.allocate("pre", 1, WAIT);
    assertThat(tasks).as("at most one refill in flight").hasSize(1);

    int callsBefore = store.reserveCalls.get();
    tasks.poll().run();
    assertThat(store.reserveCalls.get()).isEqualTo(callsBefore + 1);
    // Sized when it started: back up to the mark (100 - 99) plus a step (100).
    assertThat(store.requestedSizes.get(store.requestedSizes.size() - 1)).isEqualTo(101);
    assertThat(a.describe("pre").serverReserve()).isEqualTo(98 + 101);
  }

  @Test
  void should_size_the_reserve_to_the_outage_runway_at_the_consumption_rate_within_the_cap() {
    AtomicLong now = new AtomicLong();
    // Refills run inline on the caller's thread, so the test decides exactly when time passes.
    Allocator a = allocator(Allocator.builder(store).executor(Runnable::run).ticker(now::get)
        .minNodeBlock(10).outageRunway(Duration.ofSeconds(10)));
    a.create(seq("rate", 1, Long.MAX_VALUE, 1, 5_000));
    a.allocate("rate", 10, WAIT);
    // 100 IDs per second for a while: a 10 s runway is 1,000 IDs, and a refill adds a quarter of it.
    for (int s = 0; s < 30; s++) {
      now.addAndGet(TimeUnit.SECONDS.toNanos(1));
      a.allocate("rate", 100, WAIT);
    }
    Allocator.SequenceStats stats = a.sequenceStats().get(0);
    assertThat(stats.lowWater()).isEqualTo(1_000);
    assertThat(stats.held()).as("never below the mark by more than one call, never above mark + step")
        .isBetween(900L, 1_250L);
    // Far faster than the cap allows: the reserve stops at node_block_size.
    for (int s = 0; s < 10; s++) {
      now.addAndGet(TimeUnit.MILLISECONDS.toNanos(200));
      a.allocate("rate", 900, WAIT);
    }
    assertThat(store.requestedSizes).allSatisfy(size -> assertThat(size).isLessThanOrEqualTo(5_000));
    assertThat(a.sequenceStats().get(0).lowWater()).isEqualTo(4_000); // 5,000 / 1.25
    assertThat(a.describe("rate").serverReserve()).isLessThanOrEqualTo(5_000).isGreaterThan(3_000);
  }

  @Test
  void should_fail_unavailable_handing_out_nothing_and_recover_when_the_store_returns() {
    AtomicBoolean down = new AtomicBoolean();
    InMemoryRangeStore flaky = new InMemoryRangeStore() {
      @Override
      protected void beforeReserve(SequenceDefinition d, int stripe, long size) {
        if (down.get()) {
          throw new StoreUnavailableException("store down for the test");
        }
      }
    };
    Allocator a = allocator(Allocator.builder(flaky).minNodeBlock(100));
    a.create(seq("f", 1, Long.MAX_VALUE, 1, 100));
    Set<Long> seen = new HashSet<>(ids(a.allocate("f", 100, WAIT)));
    down.set(true);
    // Whatever is cached gets used up; then the call fails, and what it took goes back.
    List<Long> got = new ArrayList<>();
    StoreUnavailableException failure = null;
    for (int i = 0; i < 1_000 && failure == null; i++) {
      try {
        got.addAll(ids(a.allocate("f", 30, Duration.ofSeconds(2))));
      } catch (StoreUnavailableException e) {
        failure = e;
      }
    }
    assertThat(failure).isNotNull();
    assertThat(failure.getMessage()).contains("'f'");
    long held = a.describe("f").serverReserve();
    for (long id : got) {
      assertThat(seen.add(id)).isTrue();
    }
    down.set(false);
    List<Long> after = ids(a.allocate("f", 30, WAIT));
    assertThat(after).allSatisfy(id -> assertThat(seen).doesNotContain(id));
    if (held > 0) {
      // The failed call's partial take was given back and is served first, not lost.
      assertThat(after.get(0)).isEqualTo(got.get(got.size() - 1) + 1);
    }
  }

  @Test
  void should_reject_bad_requests_with_a_precise_message() {
    Allocator a = allocator(Allocator.builder(store).maxIdsPerCall(1_000));
    a.create(seq("ok", 1, 100, 1, 10));
    assertThatThrownBy(() -> a.allocate("ok", 0, WAIT)).isInstanceOfSatisfying(InvalidRequestException.class,
        e -> assertThat(e.field()).isEqualTo("count")).hasMessageContaining("1 to 1000");
    assertThatThrownBy(() -> a.allocate("ok", -5, WAIT)).isInstanceOf(InvalidRequestException.class);
    assertThatThrownBy(() -> a.allocate("ok", 0, WAIT)).isInstanceOfSatisfying(InvalidRequestException.class,
        e -> assertThat(e.limit()).isEmpty()); // below 1: no limit to clamp to
    assertThatThrownBy(() -> a.allocate("ok", 1_001, WAIT)).isInstanceOfSatisfying(InvalidRequestException.class,
        e -> assertThat(e.limit()).hasValue(1_000)).hasMessageContaining("per-call limit");
    assertThatThrownBy(() -> a.allocate("", 1, WAIT)).isInstanceOfSatisfying(InvalidRequestException.class,
        e -> assertThat(e.field()).isEqualTo("name"));
    assertThatThrownBy(() -> a.allocate("bad\u0000name", 1, WAIT)).isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("\\u0000");
    assertThatThrownBy(() -> a.allocate("x".repeat(65), 1, WAIT)).isInstanceOf(InvalidRequestException.class);
    assertThatThrownBy(() -> a.allocate("ünïcode", 1, WAIT)).isInstanceOf(InvalidRequestException.class);
    assertThatThrownBy(() -> a.allocate("missing", 1, WAIT)).isInstanceOf(SequenceNotFoundException.class)
        .hasMessageContaining("missing");
    assertThatThrownBy(() -> a.create(seq("ok", 1, 100, 1, 10)))
        .isInstanceOf(SequenceAlreadyExistsException.class);
  }

  @Test
  void should_fail_waiting_callers_and_abandon_the_reserve_on_close() {
    Allocator a = Allocator.builder(store).build();
    a.create(seq("c", 1, Long.MAX_VALUE, 1, 1_000));
    a.allocate("c", 5, WAIT);
    a.close();
    assertThatThrownBy(() -> a.allocate("c", 1, WAIT)).isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("closed");
    assertThat(a.stats().held()).isZero();
  }
}
