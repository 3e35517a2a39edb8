package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * What an AdvanceSequence waits for after the servers confirmed it: only client leases that may still hold
 * IDs below the floor, on whichever server handed them out, with that server's lease lifetime; nothing when
 * none is outstanding. And a runtime loaded after an advance learns the floor before it hands anything out.
 * Time is a fake ticker; the wait is recorded by the allocator's sleeper seam (which moves the fake time).
 */
// Its allocators may log warnings of FloorSync: never while FloorSyncTest reads that log.
@ResourceLock(value = FloorSyncTest.LOG, mode = ResourceAccessMode.READ)
@Execution(ExecutionMode.CONCURRENT) // shares nothing static; beside the classes that wait on real time
class AdvanceWaitTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final Duration LIFETIME = Duration.ofSeconds(10);
  /** A lease lifetime plus the margin an advance adds for a client's late expiry: max(1 s, a quarter). */
  private static final Duration FULL_WAIT = LIFETIME.plus(LIFETIME.dividedBy(4));

  private final AtomicLong now = new AtomicLong(5_000_000_000L);
  private final Ticker ticker = now::get;
  private final InMemoryRangeStore store = new InMemoryRangeStore().shared(Duration.ofMillis(20));
  private final List<Allocator> allocators = new ArrayList<>();
  private final SequenceDefinition seq = new SequenceDefinition("s", 1, Long.MAX_VALUE, 1, 1_000, 1_000_000);

  @AfterEach
  void closeAll() {
    allocators.forEach(Allocator::close);
  }

  private Allocator server(String name, Duration lifetime, List<Long> sleeps) {
    Allocator a = Allocator.builder(store).serverName(name).ticker(ticker).clientLeaseLifetime(lifetime)
        .minNodeBlock(100).build();
    a.sleeper = nanos -> {
      sleeps.add(nanos);
      now.addAndGet(nanos);
    };
    allocators.add(a);
    return a;
  }

  private void pass(Duration d) {
    now.addAndGet(d.toNanos());
  }

  @Test
  void should_return_at_once_when_no_client_lease_is_outstanding_and_wait_for_one_that_is() {
    List<Long> sleeps = new CopyOnWriteArrayList<>();
    Allocator a = server("a", LIFETIME, sleeps);
    a.create(seq);
    pass(FULL_WAIT.plusSeconds(1)); // what an earlier process under this name handed out has expired

    a.advance("s", 1_000);
    assertThat(sleeps).as("nothing handed out: no wait").isEmpty();

    a.allocate("s", 5, WAIT); // a lease goes to a client now
    a.advance("s", 2_000);
    assertThat(sleeps).hasSize(1);
    assertThat(Duration.ofNanos(sleeps.get(0))).isBetween(FULL_WAIT.minusMillis(100), FULL_WAIT);

    pass(Duration.ofSeconds(1));
    a.advance("s", 3_000); // nothing handed out since the last advance looked
    assertThat(sleeps).hasSize(1);
  }

  @Test
  void should_not_wait_for_a_client_lease_that_ended_before_the_advance_came() {
    List<Long> sleeps = new CopyOnWriteArrayList<>();
    Allocator a = server("a", LIFETIME, sleeps);
    a.create(seq);
    pass(FULL_WAIT.plusSeconds(1)); // what an earlier process under this name handed out has expired

    a.allocate("s", 5, WAIT); // the only lease: it ends within FULL_WAIT
    pass(Duration.ofSeconds(1));
    a.lookAtLeaseMarks(); // the periodic look, a second after the allocation
    pass(FULL_WAIT.plusMillis(1)); // the lease has ended, even counted from the look
    a.advance("s", 1_000);

    assertThat(sleeps).as("the only lease had ended: no wait").isEmpty();
  }

  @Test
  void should_look_at_the_marks_by_itself_every_second() throws Exception {
    // The allocator's own look, on its thread: seen as a read of the (fake) ticker from that thread.
    java.util.concurrent.CountDownLatch looked = new java.util.concurrent.CountDownLatch(1);
    Ticker watched = () -> {
      long t = now.get(); // before the test may move it on (the look notes t under the runtime's monitor)
      if (Thread.currentThread().getName().startsWith("idgen-lease-marks-")) {
        looked.countDown();
      }
      return t;
    };
    List<Long> sleeps = new CopyOnWriteArrayList<>();
    Allocator a = Allocator.builder(store).serverName("a").ticker(watched).clientLeaseLifetime(LIFETIME)
        .minNodeBlock(100).build();
    a.sleeper = nanos -> {
      sleeps.add(nanos);
      now.addAndGet(nanos);
    };
    allocators.add(a);
    a.create(seq);
    pass(FULL_WAIT.plusSeconds(1));

    a.allocate("s", 5, WAIT); // marks the sequence: only a look clears it (ticker read on the look's thread)
    assertThat(looked.await(10, java.util.concurrent.TimeUnit.SECONDS)).as("looked at by itself").isTrue();
    pass(FULL_WAIT.plusMillis(1));
    a.advance("s", 1_000);

    assertThat(sleeps).as("the lease had ended: no wait").isEmpty();
  }

  @Test
  void should_still_wait_for_a_client_lease_that_may_be_in_use_whenever_the_marks_were_last_looked_at() {
    List<Long> sleeps = new CopyOnWriteArrayList<>();
    Allocator a = server("a", LIFETIME, sleeps);
    a.create(seq);
    pass(FULL_WAIT.plusSeconds(1));

    // Looked at while the lease is young: it is still in use when the advance comes.
    a.allocate("s", 5, WAIT);
    long leased = now.get();
    pass(Duration.ofSeconds(1));
    a.lookAtLeaseMarks();
    pass(Duration.ofSeconds(5));
    a.advance("s", 1_000);
    assertThat(sleeps).hasSize(1);
    assertThat(now.get() - leased).as("waited out the lease").isGreaterThanOrEqualTo(FULL_WAIT.toNanos());

    // An allocation after the last look, not seen by any look before the advance: the advance's own look
    // finds it and waits a whole lease from now.
    pass(Duration.ofSeconds(1));
    a.lookAtLeaseMarks();
    pass(Duration.ofSeconds(1));
    a.allocate("s", 5, WAIT);
    leased = now.get();
    a.advance("s", 2_000);
    assertThat(sleeps).hasSize(2);
    assertThat(now.get() - leased).as("waited out the lease").isGreaterThanOrEqualTo(FULL_WAIT.toNanos());

    // Allocated, then looked at many times while it was in use: each look keeps the first one's time.
    pass(Duration.ofSeconds(1));
    a.allocate("s", 5, WAIT);
    leased = now.get();
    for (int i = 0; i < 5; i++) {
      pass(Duration.ofSeconds(1));
      a.lookAtLeaseMarks();
    }
    a.advance("s", 3_000);
    assertThat(sleeps).hasSize(3);
    assertThat(now.get() - leased).as("waited out the lease").isGreaterThanOrEqualTo(FULL_WAIT.toNanos());
  }

  @Test
  void should_wait_for_a_fresh_process_as_long_as_an_earlier_one_under_its_name_may_have_leases_out() {
    List<Long> sleeps = new CopyOnWriteArrayList<>();
    Allocator a = server("a", LIFETIME, sleeps);
    a.create(seq);
    pass(Duration.ofSeconds(2));

    a.advance("s", 1_000);

    assertThat(sleeps).hasSize(1);
    assertThat(Duration.ofNanos(sleeps.get(0))).isBetween(FULL_WAIT.minusSeconds(2).minusMillis(100),
        FULL_WAIT.minusSeconds(2));
  }

  @Test
  void should_wait_for_the_longest_client_lease_lifetime_that_any_live_server_hands_out() {
    List<Long> sleepsA = new CopyOnWriteArrayList<>();
    Allocator a = server("a", Duration.ofSeconds(2), sleepsA);
    Allocator b = server("b", Duration.ofSeconds(30), new CopyOnWriteArrayList<>());
    a.create(seq);
    pass(Duration.ofSeconds(60)); // both processes' start-up leases have expired
    b.allocate("s", 5, WAIT); // b's client may use this for 30 s

    a.advance("s", 1_000_000);

    assertThat(sleepsA).hasSize(1);
    assertThat(Duration.ofNanos(sleepsA.get(0))).as("b's lifetime, not a's 2 s")
        .isGreaterThanOrEqualTo(Duration.ofSeconds(30));
    assertThat(b.allocate("s", 5, WAIT)).allSatisfy(r -> assertThat(r.first()).isGreaterThan(1_000_000));
  }

  @Test
  void should_not_wait_for_a_server_whose_leases_expired_after_it_stopped_but_should_for_one_that_just_did() {
    List<Long> sleepsA = new CopyOnWriteArrayList<>();
    Allocator a = server("a", LIFETIME, sleepsA);
    Allocator b = server("b", LIFETIME, new CopyOnWriteArrayList<>());
    a.create(seq);
    pass(Duration.ofSeconds(60));
    b.allocate("s", 5, WAIT);
    b.close(); // a graceful stop: its client still holds a lease for up to 10 s

    a.advance("s", 1_000);
    assertThat(sleepsA).hasSize(1);
    assertThat(Duration.ofNanos(sleepsA.get(0))).isGreaterThanOrEqualTo(LIFETIME);
  }

  @Test
  void should_learn_the_floor_of_a_sequence_before_it_hands_anything_out_when_it_loads() {
    // A store whose pool still holds IDs below the floor (a pool row appended without it): the floor is
    // known to the store, and a runtime loaded now must cut at it.
    InMemoryRangeStore plain = new InMemoryRangeStore();
    RangeStore stale = new ForwardingRangeStore(plain) {
      @Override
      public long floor(SequenceDefinition d) {
        return 5_000;
      }
    };
    Allocator a = Allocator.builder(stale).ticker(ticker).minNodeBlock(100).build();
    allocators.add(a);
    a.create(seq);

    List<IdRange> got = a.allocate("s", 10, WAIT);

    assertThat(got).allSatisfy(r -> assertThat(r.first()).isGreaterThan(5_000));
    assertThat(a.known("s").floor()).isEqualTo(5_000);
  }
}
