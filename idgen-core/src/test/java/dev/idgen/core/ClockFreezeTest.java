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
 * A process frozen in a way its monotonic clock does not see (a VM suspended, or stunned for a live
 * migration: {@code System.nanoTime} stands still, the wall clock moves on) must not serve from a lease
 * that ran out meanwhile: neither the owner lease of a strict sequence (its successor may have served) nor
 * the server lease behind AdvanceSequence (an advance may have completed without it). Both clocks are fakes
 * here; the monotonic one is never moved.
 */
class ClockFreezeTest {
  private static final Duration WAIT = Duration.ofSeconds(5);

  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final AtomicLong millis = new AtomicLong(1_700_000_000_000L);
  private final List<Allocator> allocators = new ArrayList<>();

  @AfterEach
  void closeAll() {
    allocators.forEach(Allocator::close);
  }

  private Allocator server(InMemoryRangeStore store, String name, AllocatorBuilder extra) {
    Executor inline = Runnable::run;
    Allocator a = extra.serverName(name).ownerTarget(name + ":7070").ticker(nanos::get).wallClock(millis::get)
        .executor(inline).unloadIdleAfter(Duration.ZERO).minNodeBlock(100).build();
    allocators.add(a);
    return a;
  }

  @Test
  void should_stop_serving_a_strict_sequence_when_the_wall_clock_says_its_owner_lease_ran_out() {
    InMemoryRangeStore store = new InMemoryRangeStore();
    Allocator owner = server(store, "a", Allocator.builder(store).ownerLease(Duration.ofSeconds(10)));
    owner.create(new SequenceDefinition("orders", 1, Long.MAX_VALUE, 1, 1_000, 1_000_000)
        .withStrictOrdering("local"));
    assertThat(owner.allocate("orders", 1, WAIT)).isNotEmpty();
    assertThat(owner.tryAllocate("orders", 1)).isNotNull();

    millis.addAndGet(Duration.ofSeconds(9).toMillis()); // suspended for 9 s: past L - margin (9 s), on the wall

    assertThat(owner.tryAllocate("orders", 1)).as("served from memory after a freeze").isNull();
  }

  @Test
  void should_keep_serving_a_strict_sequence_within_its_owner_lease_margin_on_both_clocks() {
    InMemoryRangeStore store = new InMemoryRangeStore();
    Allocator owner = server(store, "a", Allocator.builder(store).ownerLease(Duration.ofSeconds(10))
        .ownerLeaseMargin(Duration.ofSeconds(3)));
    owner.create(new SequenceDefinition("orders", 1, Long.MAX_VALUE, 1, 1_000, 1_000_000)
        .withStrictOrdering("local"));
    owner.allocate("orders", 1, WAIT);

    millis.addAndGet(Duration.ofMillis(6_900).toMillis());
    assertThat(owner.tryAllocate("orders", 1)).isNotNull();
    millis.addAndGet(Duration.ofMillis(200).toMillis()); // past L - 3 s
    assertThat(owner.tryAllocate("orders", 1)).isNull();
  }

  @Test
  void should_stop_serving_when_the_wall_clock_says_the_server_lease_ran_out() {
    InMemoryRangeStore store = new InMemoryRangeStore().shared(Duration.ofHours(1)); // no background cycle
    Allocator b = server(store, "b", Allocator.builder(store).serverLease(Duration.ofSeconds(8)));
    b.create(new SequenceDefinition("s", 1, Long.MAX_VALUE, 1, 10_000, 1_000_000));
    b.allocate("s", 1, WAIT);
    assertThat(b.tryAllocate("s", 1)).isNotNull();

    millis.addAndGet(Duration.ofSeconds(7).toMillis()); // past 3/4 of the lease on the wall clock only

    assertThat(b.tryAllocate("s", 1)).isNull();
    assertThatThrownBy(() -> b.allocate("s", 1, WAIT)).isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("server b has not reached the store");
  }

  @Test
  void should_refuse_an_owner_lease_margin_of_half_the_lease_or_more() {
    InMemoryRangeStore store = new InMemoryRangeStore();
    assertThatThrownBy(() -> Allocator.builder(store).ownerLease(Duration.ofSeconds(10))
        .ownerLeaseMargin(Duration.ofSeconds(5)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ownerLeaseMargin: PT5S");
  }
}
