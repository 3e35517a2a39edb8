package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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

/** Sequences not used for a while leave the allocator, their reserve given back: nothing lost, nothing twice. */
// Its allocators may log warnings of FloorSync: never while FloorSyncTest reads that log.
@ResourceLock(value = FloorSyncTest.LOG, mode = ResourceAccessMode.READ)
@Execution(ExecutionMode.CONCURRENT) // waits on real time; shares nothing static
class IdleUnloadTest {
  private static final Duration WAIT = Duration.ofSeconds(5);
  private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);

  private final AtomicLong now = new AtomicLong();
  private final InMemoryRangeStore store = new InMemoryRangeStore();
  private Allocator allocator;

  @AfterEach
  void close() {
    if (allocator != null) {
      allocator.close();
    }
  }

  private Allocator allocator(Duration idle) {
    allocator = Allocator.builder(store).executor(Runnable::run).ticker(now::get).unloadIdleAfter(idle).build();
    return allocator;
  }

  private static List<Long> ids(List<IdRange> ranges) {
    List<Long> out = new ArrayList<>();
    for (IdRange r : ranges) {
      for (long k = 0; k < r.count(); k++) {
        out.add(r.get(k));
      }
    }
    return out;
  }

  @Test
  void should_unload_an_idle_sequence_give_its_reserve_back_and_serve_it_again_from_there() {
    Allocator a = allocator(Duration.ofMinutes(10));
    a.create(SequenceDefinition.withDefaults("idle"));
    a.create(SequenceDefinition.withDefaults("busy"));
    List<Long> first = ids(a.allocate("idle", 10, WAIT));
    a.allocate("busy", 10, WAIT);
    long held = a.describe("idle").serverReserve();
    assertThat(held).isPositive();

    // Two sweeps 11 minutes apart, "busy" used in between: only "idle" goes.
    assertThat(a.unloadIdle()).isZero(); // both were used since they loaded: idle from now on
    now.addAndGet(11 * MINUTE);
    a.allocate("busy", 1, WAIT);
    assertThat(a.unloadIdle()).isEqualTo(1);
    assertThat(a.isLoaded("idle")).isFalse();
    assertThat(a.isLoaded("busy")).isTrue();
    assertThat(store.givenBack).as("the whole reserve went back to the store").isEqualTo(held);
    assertThat(a.stats().returned()).isEqualTo(held);
    assertThat(a.stats().abandoned()).as("not a gap").isZero();
    assertThat(a.stats().served()).as("totals keep the unloaded sequence's counters").isEqualTo(21);

    // The next call loads it again, and gets the returned IDs first: the sequence goes on where it was.
    List<Long> next = ids(a.allocate("idle", 5, WAIT));
    assertThat(a.isLoaded("idle")).isTrue();
    assertThat(next).containsExactly(11L, 12L, 13L, 14L, 15L);
    assertThat(first).doesNotContainAnyElementsOf(next);
  }

  @Test
  void should_hand_out_exactly_the_count_of_a_call_that_had_taken_part_of_it_when_its_sequence_was_unloaded()
      throws Exception {
    // The refills of "partial" block in the store while `blocked` is closed, so a call that drains the reserve
    // waits for one; the sequence is unloaded under it (found by a chaos run: a call for 160 IDs ended OK
    // with 192, the 32 it had drained before the unload and then 160 more).
    java.util.concurrent.CountDownLatch blocked = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch refilling = new java.util.concurrent.CountDownLatch(1);
    AtomicBoolean block = new AtomicBoolean();
    InMemoryRangeStore slow = new InMemoryRangeStore() {
      @Override
      protected void beforeReserve(SequenceDefinition d, int stripe, long size) {
        if (block.get()) {
          refilling.countDown();
          try {
            blocked.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
    };
    allocator = Allocator.builder(slow).ticker(now::get).unloadIdleAfter(Duration.ofMinutes(10)).build();
    Allocator a = allocator;
    a.create(new SequenceDefinition("partial", 1, Long.MAX_VALUE, 1, 100, 1_000));
    a.allocate("partial", 1, WAIT);
    long held = a.describe("partial").serverReserve();
    assertThat(held).isPositive();
    block.set(true);
    ExecutorService caller = Executors.newSingleThreadExecutor();
    AtomicReference<Thread> sweeper = new AtomicReference<>();
    ExecutorService caller2 = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "sweeps");
      sweeper.set(t);
      return t;
    });
    try {
      // One more than the reserve: the call drains it all, then waits for the refill that blocks.
      Future<List<IdRange>> call = caller.submit(() -> a.allocate("partial", held + 1, Duration.ofSeconds(30)));
      assertThat(refilling.await(10, TimeUnit.SECONDS)).as("the refill reached the store").isTrue();
      // The unload waits for the late refill (to give it back), so the store is let go once the sequence is out.
      Future<Long> sweeps = caller2.submit(() -> {
        long unloaded = 0;
        for (int sweep = 0; sweep < 3 && a.isLoaded("partial"); sweep++) {
          now.addAndGet(11 * MINUTE);
          unloaded += a.unloadIdle();
        }
        return unloaded;
      });
      // Let the store go once the sweep is inside the unload, waiting for the late refill (or the sequence is
      // out): the unload is then under the waiting call. (isLoaded still says true while the unload waits for
      // the late refill, so waiting for it alone always waited out the whole 10 s.)
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (a.isLoaded("partial") && !parked(sweeper.get()) && System.nanoTime() < until) {
        Thread.sleep(1);
      }
      blocked.countDown();
      assertThat(sweeps.get(30, TimeUnit.SECONDS)).as("unloaded under the waiting call").isEqualTo(1);

      List<Long> got = ids(call.get(30, TimeUnit.SECONDS));

      assertThat(got).as("exactly the count asked for").hasSize((int) held + 1).doesNotHaveDuplicates();
    } finally {
      blocked.countDown();
      caller.shutdownNow();
      caller2.shutdownNow();
    }
  }

  /** Whether {@code t} waits (parked, not blocked on a monitor): a sweep waits only for a late refill. */
  private static boolean parked(Thread t) {
    Thread.State state = t == null ? Thread.State.NEW : t.getState();
    return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
  }

  @Test
  void should_never_unload_when_off() {
    Allocator a = allocator(Duration.ZERO);
    a.create(SequenceDefinition.withDefaults("kept"));
    a.allocate("kept", 1, WAIT);
    now.addAndGet(1_000 * MINUTE);
    assertThat(a.unloadIdle()).isZero();
    assertThat(a.unloadIdle()).isZero();
    assertThat(a.isLoaded("kept")).isTrue();
  }

  @Test
  void should_hand_out_every_id_once_while_sequences_are_unloaded_under_concurrent_callers() throws Exception {
    // A real clock and executor: callers race the unloads for real.
    allocator = Allocator.builder(store).unloadIdleAfter(Duration.ofNanos(1)).build();
    Allocator a = allocator;
    a.create(new SequenceDefinition("raced", 1, Long.MAX_VALUE, 3, 1_000, 10_000));
    Set<Long> seen = ConcurrentHashMap.newKeySet();
    AtomicLong duplicates = new AtomicLong();
    AtomicLong failures = new AtomicLong();
    AtomicReference<Exception> firstFailure = new AtomicReference<>();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService callers = Executors.newFixedThreadPool(4);
    List<Future<?>> running = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      running.add(callers.submit(() -> {
        for (int i = 0; i < 20_000 && !stop.get(); i++) {
          try {
            // A long deadline: this is about the unload logic, not latency, and a starved CI machine (load
            // average 18 seen) can stall a thread for seconds; a caller never woken would still fail.
            for (long id : ids(a.allocate("raced", 1 + i % 7, Duration.ofSeconds(60)))) {
              if (!seen.add(id)) {
                duplicates.incrementAndGet();
              }
            }
          } catch (StoreUnavailableException e) {
            failures.incrementAndGet();
            firstFailure.compareAndSet(null, e);
          }
        }
      }));
    }
    int unloads = 0;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (running.stream().anyMatch(f -> !f.isDone()) && System.nanoTime() < deadline) {
      unloads += a.unloadIdle(); // marks idle, then unloads at the next sweep unless a call came between
      Thread.onSpinWait();
    }
    stop.set(true);
    for (Future<?> f : running) {
      f.get(30, TimeUnit.SECONDS);
    }
    callers.shutdown();
    assertThat(unloads).as("unloads raced the callers").isPositive();
    assertThat(duplicates.get()).isZero();
    assertThat(failures.get()).as("a call inside an unloaded sequence carries on; first failure: %s",
        firstFailure.get()).isZero();
    Allocator.Stats stats = a.stats();
    assertThat(stats.served()).isEqualTo(seen.size());
    assertThat(stats.abandoned()).as("unloads give everything back").isZero();
  }
}
