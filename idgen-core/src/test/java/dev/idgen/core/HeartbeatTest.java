package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.core.internal.floors.FloorSync;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * How an advance (or a definition change, which rides the floor log as one) decides that a server which has
 * not confirmed it is gone: only once that server's heartbeat has stayed the same for its whole announced lease
 * on the advancing process's own (monotonic) clock, never because a store's clock says its announcement expired. The store is scripted: every read of the
 * announcements moves the fake ticker one second and returns the next heartbeat of server {@code dc1/b}.
 */
// Its allocators may log warnings of FloorSync: never while FloorSyncTest reads that log.
@ResourceLock(value = FloorSyncTest.LOG, mode = ResourceAccessMode.READ)
@Execution(ExecutionMode.CONCURRENT) // waits on real time; shares nothing static
class HeartbeatTest {
  private static final Duration LEASE = Duration.ofSeconds(8);
  private static final AdvanceReceipt RECEIPT = new AdvanceReceipt(Map.of("dc1", 5L));

  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final AtomicInteger reads = new AtomicInteger();

  /** The floors of a server that holds nothing: what it applies changes nothing (FloorSyncTest's too). */
  static final FloorSync.Floors HOLDS_NOTHING = new FloorSync.Floors() {
    @Override
    public long raise(String sequence, long floor) {
      return Long.MIN_VALUE;
    }

    @Override
    public long reloadAll() {
      return Long.MIN_VALUE;
    }

    @Override
    public void redefine(String sequence, long version) {}

    @Override
    public void redefineAll() {}
  };

  /** A FloorSync whose store reports {@code dc1/b} pending, with the heartbeat {@code beat} gives for each read. */
  private FloorSync sync(IntFunction<Optional<String>> beat) {
    return syncAnswering(read -> new Confirmations(List.of("dc1/b"), Optional.of(Duration.ZERO),
        beat.apply(read).map(b -> Map.of("dc1/b", new Confirmations.Heartbeat(b, LEASE))).orElse(Map.of())));
  }

  /** A FloorSync whose store answers the {@code n}th read of the announcements with {@code answer(n)}. */
  private FloorSync syncAnswering(IntFunction<Confirmations> answer) {
    InMemoryRangeStore store = new InMemoryRangeStore() {
      @Override
      public Confirmations confirmations(AdvanceReceipt receipt) {
        int read = reads.incrementAndGet();
        now.addAndGet(Duration.ofSeconds(1).toNanos()); // the read takes a second
        return answer.apply(read);
      }
    }.shared(Duration.ofMillis(100));
    return new FloorSync(store, HOLDS_NOTHING, now::get, () -> 0L, "a", LEASE, Long.MIN_VALUE);
  }

  private long confirm(FloorSync sync, Duration timeout) {
    return sync.confirm(RECEIPT, "s", 100, now.get() + timeout.toNanos(), 0);
  }

  /** How a definition change (an update, a delete) waits for its floor-log entry's confirmations. */
  private long confirmChange(FloorSync sync, Duration timeout) {
    return sync.confirm(RECEIPT, now.get() + timeout.toNanos(), 0,
        pending -> new ChangeNotConfirmedException("s", "its deletion", pending));
  }

  @Test
  void should_wait_for_a_server_whose_heartbeat_moves_however_long_its_announcement_has_been_there() {
    FloorSync sync = sync(read -> Optional.of("b@" + read));

    assertThatThrownBy(() -> confirm(sync, Duration.ofSeconds(20)))
        .isInstanceOf(AdvanceNotConfirmedException.class)
        .satisfies(e -> assertThat(((AdvanceNotConfirmedException) e).unconfirmed()).containsExactly("dc1/b"));
    assertThat(reads).as("read until the deadline, 2.5 leases").hasValue(20);
  }

  @Test
  void should_count_a_server_as_gone_once_its_heartbeat_stayed_the_same_for_its_lease_and_not_before() {
    FloorSync sync = sync(read -> Optional.of("b@1"));

    assertThat(confirm(sync, Duration.ofSeconds(60))).isEqualTo(Long.MIN_VALUE);

    // First seen at the end of read 1; gone at the first read that ends a whole lease (8 s) later.
    assertThat(reads).hasValue(9);
  }

  @Test
  void should_go_on_counting_across_advances_retried_after_a_timeout() {
    FloorSync sync = sync(read -> Optional.of("b@1"));

    assertThatThrownBy(() -> confirm(sync, Duration.ofSeconds(3))).isInstanceOf(AdvanceNotConfirmedException.class);
    assertThat(reads).hasValue(3);

    assertThat(confirm(sync, Duration.ofSeconds(60))).isEqualTo(Long.MIN_VALUE);
    assertThat(reads).as("the retry counts from the first advance's first read").hasValue(9);
  }

  @Test
  void should_count_again_from_a_new_heartbeat_as_after_a_restart_under_the_same_name() {
    FloorSync sync = sync(read -> Optional.of(read < 5 ? "b@1" : "b2@1")); // a new process from read 5

    assertThat(confirm(sync, Duration.ofSeconds(60))).isEqualTo(Long.MIN_VALUE);

    assertThat(reads).as("first seen at read 5, gone 8 s later").hasValue(13);
  }

  @Test
  void should_wait_for_a_server_without_a_heartbeat_until_the_store_drops_its_announcement() {
    FloorSync sync = sync(read -> Optional.empty()); // an older server: the store's TTL decides

    assertThatThrownBy(() -> confirm(sync, Duration.ofSeconds(20))).isInstanceOf(AdvanceNotConfirmedException.class);
    assertThat(reads).hasValue(20);
  }

  @Test
  void should_count_from_the_background_reads_so_that_an_advance_long_after_a_crash_need_not_wait_a_lease() {
    FloorSync sync = sync(read -> Optional.of("b@1")); // crashed: its heartbeat never moves again

    sync.observe();
    sync.observe(); // within an eighth of a lease: no second read
    assertThat(reads).hasValue(1);
    now.addAndGet(LEASE.toNanos()); // the advance comes a lease after the background read

    assertThat(confirm(sync, Duration.ofSeconds(60))).isEqualTo(Long.MIN_VALUE);
    assertThat(reads).as("the advance's first read finds it gone").hasValue(2);
  }

  @Test
  void should_count_a_server_as_gone_by_its_heartbeat_for_a_definition_change_too() {
    FloorSync sync = sync(read -> Optional.of("b@1"));

    assertThat(confirmChange(sync, Duration.ofSeconds(60))).isEqualTo(Long.MIN_VALUE);
    assertThat(reads).hasValue(9);
  }

  @Test
  void should_name_only_the_servers_still_serving_when_a_definition_change_is_not_confirmed() {
    // dc1/b crashed (its heartbeat never moves), dc1/c is alive but has not applied the change.
    FloorSync sync = syncAnswering(read -> new Confirmations(List.of("dc1/b", "dc1/c"), Optional.of(Duration.ZERO),
        Map.of(
            "dc1/b", new Confirmations.Heartbeat("b@1", LEASE),
            "dc1/c", new Confirmations.Heartbeat("c@" + read, LEASE))));

    assertThatThrownBy(() -> confirmChange(sync, Duration.ofSeconds(20)))
        .isInstanceOf(ChangeNotConfirmedException.class)
        .satisfies(e -> assertThat(((ChangeNotConfirmedException) e).unconfirmed()).containsExactly("dc1/c"));
  }

  @Test
  void should_forget_nothing_when_a_read_fails() {
    AtomicInteger failing = new AtomicInteger();
    FloorSync sync = sync(read -> {
      if (read == 3 && failing.getAndIncrement() == 0) {
        throw new StoreUnavailableException("down (test)");
      }
      return Optional.of("b@1");
    });

    assertThat(confirm(sync, Duration.ofSeconds(60))).isEqualTo(Long.MIN_VALUE);
    assertThat(reads).as("first seen at read 1 despite the failed read 3").hasValue(9);
  }
}
