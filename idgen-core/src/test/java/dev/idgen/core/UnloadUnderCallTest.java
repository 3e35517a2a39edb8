package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A call waiting inside a sequence that an idle sweep unloads: it goes on with the sequence loaded anew, a
 * strict one claimed again or sent to its new owner; and when it cannot go on, the IDs it had taken are
 * counted lost, not handed out, not forgotten. The call waits for a refill that the store holds back (the
 * next reservation blocks until released, then fails, so that nothing lands late); time is a fake ticker.
 */
class UnloadUnderCallTest {
  private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);

  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final AtomicBoolean blockNext = new AtomicBoolean();
  private final CountDownLatch refilling = new CountDownLatch(1);
  private final CountDownLatch released = new CountDownLatch(1);
  /** Sequences can no longer be read: a call that loads one anew fails. */
  private final AtomicBoolean definitionsGone = new AtomicBoolean();
  /** When this server releases an owner row, another server ("b") claims it at once. */
  private final AtomicBoolean takenOverOnRelease = new AtomicBoolean();
  /** Counted down once the owner row was released (and maybe taken over). */
  private final CountDownLatch releasedRow = new CountDownLatch(1);
  /**
   * The unload's release of the owner row lands late: after the next read of the row, which still sees it
   * held, and before the claim that follows that read (the race of an unload with a call inside it).
   */
  private final AtomicBoolean releaseBetweenReadAndClaim = new AtomicBoolean();
  /** Counted down once the release held back by {@link #releaseBetweenReadAndClaim} was issued. */
  private final CountDownLatch releaseIssued = new CountDownLatch(1);
  /** The release held back by {@link #releaseBetweenReadAndClaim}: {expected, next}; under the store's monitor. */
  private OwnerRecord[] heldRelease;

  private final InMemoryRangeStore store = new InMemoryRangeStore() {
    @Override
    protected void beforeReserve(SequenceDefinition d, int stripe, long size) {
      if (blockNext.getAndSet(false)) {
        refilling.countDown();
        try {
          released.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        throw new StoreUnavailableException("the held-back reservation fails (test)");
      }
    }

    @Override
    public Optional<StoredSequence> findStored(String name) {
      if (definitionsGone.get()) {
        throw new StoreUnavailableException("in-memory store: definitions cannot be read (test)");
      }
      return super.findStored(name);
    }

    @Override
    public Optional<OwnerRecord> owner(SequenceDefinition d) {
      if (takenOverOnRelease.get()) {
        try {
          releasedRow.await(30, TimeUnit.SECONDS); // the call's new runtime reads the row after the release
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (releaseBetweenReadAndClaim.get()) {
        try {
          releaseIssued.await(10, TimeUnit.SECONDS); // a read of the row once the unload has released it
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      synchronized (this) {
        Optional<OwnerRecord> read = super.owner(d);
        if (heldRelease != null) {
          super.replaceOwner(d, heldRelease[0], heldRelease[1]); // lands after this read, before its claim
          heldRelease = null;
          releasedRow.countDown();
        }
        return read;
      }
    }

    @Override
    public synchronized boolean replaceOwner(SequenceDefinition d, OwnerRecord expected, OwnerRecord next) {
      if (next.target().isEmpty() && releaseBetweenReadAndClaim.getAndSet(false)) {
        heldRelease = new OwnerRecord[] {expected, next};
        releaseIssued.countDown();
        return true; // the releasing server ignores the outcome: its lease expires by itself if not applied
      }
      boolean applied = super.replaceOwner(d, expected, next);
      if (applied && next.target().isEmpty()) {
        if (takenOverOnRelease.get()) {
          super.replaceOwner(d, next, new OwnerRecord("b", UUID.randomUUID(), "b:7070", next.epoch() + 1,
              UUID.randomUUID()));
        }
        releasedRow.countDown();
      }
      return applied;
    }
  };
  private final ExecutorService caller = Executors.newSingleThreadExecutor();
  private Allocator allocator;

  @AfterEach
  void close() {
    released.countDown();
    releasedRow.countDown();
    releaseIssued.countDown();
    caller.shutdownNow();
    if (allocator != null) {
      allocator.close();
    }
  }

  private Allocator allocator(SequenceDefinition d) {
    allocator = Allocator.builder(store).serverName("a").ownerTarget(() -> "a:7070").ticker(now::get)
        .unloadIdleAfter(Duration.ofMinutes(10)).build();
    allocator.create(d);
    return allocator;
  }

  /** A call waiting inside a sequence when it was unloaded, and how many IDs it had taken by then. */
  private record Caught(Future<List<IdRange>> call, long taken) {}

  /**
   * Starts a call for one more ID than the server holds, so that it drains the reserve and waits for the
   * refill held back in the store; runs {@code beforeUnload}, then unloads the sequence under the call and lets
   * the refill go (it fails).
   */
  private Caught callUnloadedUnder(Allocator a, String name, Runnable beforeUnload) throws Exception {
    a.allocate(name, 1, Duration.ofSeconds(5));
    long held = a.describe(name).serverReserve();
    assertThat(held).isPositive();
    blockNext.set(true);
    Future<List<IdRange>> call = caller.submit(() -> a.allocate(name, held + 1, Duration.ofSeconds(30)));
    assertThat(refilling.await(10, TimeUnit.SECONDS)).as("the call's refill reached the store").isTrue();
    assertThat(a.unloadIdle()).as("used since it loaded: idle from now on").isZero();
    beforeUnload.run();
    now.addAndGet(11 * MINUTE);
    ExecutorService sweeper = Executors.newSingleThreadExecutor();
    try {
      Future<Integer> sweep = sweeper.submit(a::unloadIdle);
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      // Polls, bounded: a non-strict unload waits for the late refill, so the refill is let go once the
      // sequence is out of the map (a strict one's does not wait, and the call may load it again at once).
      while (!sweep.isDone() && a.isLoaded(name) && System.nanoTime() < until) {
        Thread.sleep(1);
      }
      released.countDown();
      assertThat(sweep.get(30, TimeUnit.SECONDS)).as("unloaded under the waiting call").isEqualTo(1);
    } finally {
      sweeper.shutdownNow();
    }
    return new Caught(call, held);
  }

  @Test
  void should_count_the_ids_of_a_call_that_cannot_go_on_after_its_sequence_was_unloaded() throws Exception {
    Allocator a = allocator(new SequenceDefinition("s", 1, Long.MAX_VALUE, 1, 100, 1_000));
    // From the unload on, the sequence cannot be loaded anew: the call cannot go on.
    Caught caught = callUnloadedUnder(a, "s", () -> definitionsGone.set(true));

    assertThatThrownBy(() -> caught.call().get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(StoreUnavailableException.class);
    Allocator.Stats stats = a.stats();
    assertThat(stats.served()).as("only the first call's ID was handed out").isEqualTo(1);
    assertThat(stats.abandoned()).as("the failed call's IDs are a counted gap").isEqualTo(caught.taken());
  }

  @Test
  void should_claim_a_strict_sequence_again_for_a_call_inside_it_when_it_was_unloaded() throws Exception {
    Allocator a = allocator(new SequenceDefinition("o", 1, Long.MAX_VALUE, 1, 100, 1_000)
        .withStrictOrdering("local"));
    Caught caught = callUnloadedUnder(a, "o", () -> {});

    List<IdRange> got = caught.call().get(30, TimeUnit.SECONDS);

    assertThat(IdRange.total(got)).as("exactly the count asked for").isEqualTo(caught.taken() + 1);
    List<Long> firsts = new ArrayList<>();
    got.forEach(r -> firsts.add(r.first()));
    assertThat(firsts).as("in order").isSorted();
    assertThat(a.owner("o")).hasValueSatisfying(row -> assertThat(row.epoch()).isEqualTo(2));
  }

  @Test
  void should_claim_a_strict_sequence_again_when_the_unload_releases_its_row_between_the_read_and_the_claim()
      throws Exception {
    Allocator a = allocator(new SequenceDefinition("o", 1, Long.MAX_VALUE, 1, 100, 1_000)
        .withStrictOrdering("local"));
    Caught caught = callUnloadedUnder(a, "o", () -> releaseBetweenReadAndClaim.set(true));

    List<IdRange> got = caught.call().get(30, TimeUnit.SECONDS);

    assertThat(releasedRow.getCount()).as("the held-back release landed").isZero();
    assertThat(IdRange.total(got)).as("exactly the count asked for").isEqualTo(caught.taken() + 1);
    assertThat(a.owner("o")).hasValueSatisfying(row -> {
      assertThat(row.epoch()).isEqualTo(2);
      assertThat(row.target()).isEqualTo("a:7070");
    });
  }

  @Test
  void should_send_a_call_inside_an_unloaded_strict_sequence_to_the_server_that_took_it_over() throws Exception {
    Allocator a = allocator(new SequenceDefinition("o", 1, Long.MAX_VALUE, 1, 100, 1_000)
        .withStrictOrdering("local"));
    Caught caught = callUnloadedUnder(a, "o", () -> takenOverOnRelease.set(true));

    assertThatThrownBy(() -> caught.call().get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
        .cause().isInstanceOf(NotOwnerException.class)
        .satisfies(e -> assertThat(((NotOwnerException) e).ownerTarget()).contains("b:7070"));
    Allocator.Stats stats = a.stats();
    assertThat(stats.served()).as("only the first call's ID was handed out").isEqualTo(1);
    assertThat(stats.abandoned()).as("the IDs the call had taken under the old lease are a counted gap")
        .isEqualTo(caught.taken());
  }
}
