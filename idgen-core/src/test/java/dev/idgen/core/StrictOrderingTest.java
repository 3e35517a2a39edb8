package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The owner lease of strict sequences, with a fake clock: one owner at a time, take-over only after a lease
 * without renewal, the successor's IDs above everything the previous owner held, and a pool that never
 * takes IDs back. Owner rounds are run by hand ({@link Allocator#tickOwnersQuietly}) at chosen times.
 */
class StrictOrderingTest {
  private static final Duration LEASE = Duration.ofSeconds(10);
  private static final Duration WAIT = Duration.ofSeconds(5);

  private final InMemoryRangeStore store = new InMemoryRangeStore();
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final Ticker ticker = now::get;
  private final List<Allocator> allocators = new ArrayList<>();
  private final SequenceDefinition strict =
      new SequenceDefinition("orders", 1, Long.MAX_VALUE, 1, 1_000, 1_000_000).withStrictOrdering("local");

  @AfterEach
  void closeAll() {
    allocators.forEach(Allocator::close);
  }

  private Allocator server(String name) {
    Executor inline = Runnable::run; // refills land before take() looks again: deterministic
    Allocator a = Allocator.builder(store).serverName(name).ownerTarget(name + ":7070").ownerLease(LEASE)
        .ticker(ticker).executor(inline).unloadIdleAfter(Duration.ZERO).build();
    allocators.add(a);
    return a;
  }

  private void advance(Duration d) {
    now.addAndGet(d.toNanos());
  }

  private static long max(List<IdRange> ranges) {
    return ranges.stream().mapToLong(IdRange::last).max().orElseThrow();
  }

  private static long min(List<IdRange> ranges) {
    return ranges.stream().mapToLong(IdRange::first).min().orElseThrow();
  }

  @Test
  void should_answer_the_network_thread_questions_of_a_sequence_while_its_owner_round_waits_on_the_store()
      throws Exception {
    // b reads the owner row through a store of its own, whose next read blocks until released: b's owner
    // round then waits on the store, and the questions a network thread asks (where to forward, the owner
    // refused, the row as last read) must not wait for it.
    java.util.concurrent.CountDownLatch inRead = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicBoolean blockNextRead = new java.util.concurrent.atomic.AtomicBoolean();
    RangeStore slowReads = new ForwardingRangeStore(store) {
      @Override
      public java.util.Optional<OwnerRecord> owner(SequenceDefinition d) {
        if (blockNextRead.getAndSet(false)) {
          inRead.countDown();
          try {
            release.await(30, java.util.concurrent.TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return super.owner(d);
      }
    };
    Allocator a = server("a");
    Allocator b = Allocator.builder(slowReads).serverName("b").ownerTarget("b:7070").ownerLease(LEASE)
        .ticker(ticker).executor(Runnable::run).unloadIdleAfter(Duration.ZERO).build();
    allocators.add(b);
    a.create(strict);
    a.allocate("orders", 1, WAIT);
    assertThatThrownBy(() -> b.allocate("orders", 1, WAIT)).isInstanceOf(NotOwnerException.class);
    java.util.concurrent.ExecutorService round = java.util.concurrent.Executors.newSingleThreadExecutor();
    java.util.concurrent.ExecutorService network = java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      blockNextRead.set(true);
      java.util.concurrent.Future<?> tick = round.submit(b::tickOwnersQuietly);
      assertThat(inRead.await(10, java.util.concurrent.TimeUnit.SECONDS)).as("b's round reads the row").isTrue();

      // While the round holds the owner and waits on the store (it is never let go before these return).
      assertThat(network.submit(() -> b.forwardTarget("orders")).get(10, java.util.concurrent.TimeUnit.SECONDS))
          .contains("a:7070");
      assertThat(network.submit(() -> b.owner("orders")).get(10, java.util.concurrent.TimeUnit.SECONDS))
          .hasValueSatisfying(row -> assertThat(row.target()).isEqualTo("a:7070"));
      network.submit(() -> b.ownerRefused("orders", "a:7070")).get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(network.submit(() -> b.forwardTarget("orders")).get(10, java.util.concurrent.TimeUnit.SECONDS))
          .as("refused: read the row again before forwarding there").isEmpty();

      release.countDown();
      tick.get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(b.forwardTarget("orders")).as("the round's read began before the refusal: it does not count")
          .isEmpty();
      b.tickOwnersQuietly();
      assertThat(b.forwardTarget("orders")).as("read again after the refusal").contains("a:7070");
    } finally {
      release.countDown();
      round.shutdownNow();
      network.shutdownNow();
    }
  }

  @Test
  void should_refuse_strict_ordering_with_several_stripes_and_without_a_home() {
    assertThatThrownBy(() -> new SequenceDefinition("s", 1, 100, 2, 10, 10).withStrictOrdering("dc1"))
        .isInstanceOf(InvalidRequestException.class).hasMessageContaining("ORDERING_STRICT with 2 stripes")
        .extracting(e -> ((InvalidRequestException) e).field()).isEqualTo("ordering");
    assertThatThrownBy(() -> new SequenceDefinition("s", 1, 100, 1, 10, 10).withStrictOrdering(""))
        .isInstanceOf(InvalidRequestException.class)
        .extracting(e -> ((InvalidRequestException) e).field()).isEqualTo("home_datacenter");
  }

  @Test
  void should_serve_from_the_first_server_and_send_the_others_to_it() {
    Allocator a = server("a");
    Allocator b = server("b");
    a.create(strict);
    List<IdRange> first = a.allocate("orders", 1, WAIT);
    assertThat(first.get(0).first()).isEqualTo(1);
    assertThatThrownBy(() -> b.allocate("orders", 1, WAIT)).isInstanceOf(NotOwnerException.class)
        .satisfies(e -> assertThat(((NotOwnerException) e).ownerTarget()).contains("a:7070"));
    assertThat(b.forwardTarget("orders")).contains("a:7070");
    assertThat(a.forwardTarget("orders")).isEmpty();
    // The owner renews every quarter lease: b never takes over while it does.
    for (int i = 0; i < 12; i++) {
      advance(LEASE.dividedBy(4));
      a.tickOwnersQuietly();
      b.tickOwnersQuietly();
      assertThat(a.allocate("orders", 1, WAIT)).isNotEmpty();
      assertThat(b.forwardTarget("orders")).contains("a:7070");
    }
  }

  @Test
  void should_keep_a_strict_sequence_loaded_on_a_forwarding_server_while_it_forwards_its_calls() {
    Allocator a = server("a");
    Allocator b = Allocator.builder(store).serverName("b").ownerTarget("b:7070").ownerLease(LEASE).ticker(ticker)
        .executor(Runnable::run).unloadIdleAfter(Duration.ofSeconds(2)).build();
    allocators.add(b);
    a.create(strict);
    a.allocate("orders", 1, WAIT);
    assertThatThrownBy(() -> b.allocate("orders", 1, WAIT)).isInstanceOf(NotOwnerException.class); // loads it

    for (int i = 0; i < 10; i++) {
      advance(Duration.ofSeconds(1));
      a.tickOwnersQuietly();
      b.tickOwnersQuietly();
      assertThat(b.forwardTarget("orders")).contains("a:7070"); // a call forwarded to the owner
      assertThat(b.unloadIdle()).as("sweep %s", i).isZero();
    }
    assertThat(b.isLoaded("orders")).isTrue();
    advance(Duration.ofSeconds(5)); // no calls any more: unloaded after the idle time (the sweeper of the
    b.unloadIdle();                 // allocator's own thread may be the one that does it)
    advance(Duration.ofSeconds(3));
    b.unloadIdle();
    assertThat(b.isLoaded("orders")).isFalse();
  }

  @Test
  void should_let_a_restarted_process_of_the_owners_name_take_over_at_once_above_what_the_dead_one_held() {
    Allocator crashed = server("a");
    crashed.create(strict);
    List<IdRange> before = crashed.allocate("orders", 5, WAIT);
    long heldByCrashed = crashed.stats().held();
    assertThat(heldByCrashed).isPositive();
    // kill -9: the process is gone without releasing its lease (its row still names it, unexpired); names are
    // unique among live processes, so the next process of that name knows the row's writer is dead.
    Allocator restarted = server("a");
    Allocator other = server("b");

    List<IdRange> after = restarted.allocate("orders", 1, WAIT);

    assertThat(min(after)).as("above everything the dead process held").isGreaterThan(max(before) + heldByCrashed);
    assertThat(restarted.forwardTarget("orders")).as("never forwarded to its own address").isEmpty();
    assertThatThrownBy(() -> other.allocate("orders", 1, WAIT)).isInstanceOf(NotOwnerException.class)
        .satisfies(e -> assertThat(((NotOwnerException) e).ownerTarget()).contains("a:7070"));
  }

  @Test
  void should_take_over_after_a_lease_without_renewal_and_start_above_everything_the_old_owner_held() {
    Allocator a = server("a");
    Allocator b = server("b");
    a.create(strict);
    List<IdRange> fromA = a.allocate("orders", 5, WAIT);
    assertThatThrownBy(() -> b.allocate("orders", 1, WAIT)).isInstanceOf(NotOwnerException.class);
    long heldByA = a.stats().held();
    assertThat(heldByA).isPositive();

    // a stops renewing (frozen, cut off). Just short of a lease, b must still wait, and says how long.
    advance(LEASE.minusMillis(100));
    b.tickOwnersQuietly();
    assertThatThrownBy(() -> b.allocate("orders", 1, WAIT)).isInstanceOf(NotOwnerException.class)
        .satisfies(e -> assertThat(((NotOwnerException) e).ownerTarget()).contains("a:7070"));
    // a itself stopped serving at L - margin after its last renewal began (it would renew on its next call,
    // which is safe: the renewal and b's take-over are compare-and-sets on one row; here it stays silent).
    assertThat(a.tryAllocate("orders", 1)).isNull();

    advance(Duration.ofMillis(200));
    assertThat(b.forwardTarget("orders")).as("a stopped renewing: nowhere to forward").isEmpty();
    // The call itself reads the row again (it says a take-over is due) and takes the sequence over.
    List<IdRange> fromB = b.allocate("orders", 1, WAIT);
    assertThat(min(fromB)).isGreaterThan(max(fromA) + heldByA - 1);
    assertThat(store.owner(strict)).get().extracting(OwnerRecord::epoch).isEqualTo(2L);

    // a comes back: it sees the new row, drops what it held, forwards to b, and its store access is fenced.
    a.tickOwnersQuietly();
    assertThat(a.forwardTarget("orders")).contains("b:7070");
    assertThatThrownBy(() -> store.reserveStrict(strict, 1, 10)).isInstanceOf(NotOwnerException.class);
  }

  @Test
  void should_hand_the_sequence_over_at_once_when_its_owner_stops_gracefully() {
    Allocator a = server("a");
    Allocator b = server("b");
    a.create(strict);
    List<IdRange> fromA = a.allocate("orders", 3, WAIT);
    b.tickOwnersQuietly();
    a.close();
    assertThat(store.owner(strict)).get().extracting(OwnerRecord::target).isEqualTo("");
    // No lease to wait for: the released row is taken at the next call.
    List<IdRange> fromB = b.allocate("orders", 1, WAIT);
    assertThat(min(fromB)).isGreaterThan(max(fromA));
    assertThat(store.givenBack).isZero(); // a strict pool never goes back to the store
  }

  @Test
  void should_never_hand_out_ids_of_a_failed_call_again() {
    Allocator a = server("a");
    a.create(strict);
    List<IdRange> before = a.allocate("orders", 2, WAIT);
    // A call larger than the reserve waits for refills and fails when the store does; what it took is dropped.
    store.failReserves = true;
    assertThatThrownBy(() -> a.allocate("orders", 5_000, Duration.ofMillis(50)))
        .isInstanceOf(StoreUnavailableException.class);
    store.failReserves = false;
    long abandoned = a.stats().abandoned();
    assertThat(abandoned).isPositive(); // what the failed call took is a gap, not back in the queue
    List<IdRange> after = a.allocate("orders", 1, WAIT);
    assertThat(min(after)).isGreaterThan(max(before) + abandoned);
  }

  @Test
  void should_keep_calls_ordered_across_servers_through_take_overs() {
    Allocator[] servers = {server("a"), server("b"), server("c")};
    servers[0].create(strict);
    assertThat(servers[0].allocate("orders", 1, WAIT)).isNotEmpty();
    for (int k = 1; k < 3; k++) {
      int s = k;
      assertThatThrownBy(() -> servers[s].allocate("orders", 1, WAIT)).isInstanceOf(NotOwnerException.class);
    }
    long last = 1;
    int owner = 0;
    for (int round = 0; round < 30; round++) {
      // Each call completes before the next starts: every one must be above all before it.
      for (int i = 0; i < 20; i++) {
        List<IdRange> got = servers[owner].allocate("orders", 1 + (i % 3), WAIT);
        assertThat(min(got)).isGreaterThan(last);
        last = max(got);
      }
      // The owner renews once more, the others see it; then it goes silent for a lease and one of them takes over.
      servers[owner].tickOwnersQuietly();
      for (int k = 0; k < 3; k++) {
        if (k != owner) {
          servers[k].tickOwnersQuietly();
        }
      }
      advance(LEASE.plusMillis(1));
      int next = (owner + 1 + round % 2) % 3;
      servers[next].tickOwnersQuietly();
      owner = next;
    }
    assertThat(store.owner(strict)).get().extracting(OwnerRecord::epoch).isEqualTo(31L);
  }
}
