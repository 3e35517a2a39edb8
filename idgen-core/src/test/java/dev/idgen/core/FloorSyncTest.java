package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.core.internal.floors.FloorSync;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The advance guarantee between allocators that share a store: an advance returns only when every live
 * server has dropped its cached IDs at or below the floor; a server that cannot reach the store stops
 * serving before its announcement expires.
 */
class FloorSyncTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final Duration INTERVAL = Duration.ofMillis(50);

  private final InMemoryRangeStore store = new InMemoryRangeStore().shared(INTERVAL);
  private final List<Allocator> allocators = new ArrayList<>();

  @AfterEach
  void closeAll() {
    allocators.forEach(Allocator::close);
  }

  private Allocator server(String name, AllocatorBuilder b) {
    Allocator a = b.serverName(name).minNodeBlock(1_000).build();
    allocators.add(a);
    return a;
  }

  private static long max(List<IdRange> ranges) {
    long m = Long.MIN_VALUE;
    for (IdRange r : ranges) {
      m = Math.max(m, r.get(r.count() - 1));
    }
    return m;
  }

  private static long min(List<IdRange> ranges) {
    long m = Long.MAX_VALUE;
    for (IdRange r : ranges) {
      m = Math.min(m, r.first());
    }
    return m;
  }

  /**
   * The lock of FloorSync's log, which the test below reads: the classes that run beside the others and make
   * allocators (their FloorSync may warn) hold it to read, that test to write.
   */
  static final String LOG = "FloorSync log";

  @Test
  @ResourceLock(LOG)
  void should_keep_saying_why_it_does_not_serve_every_30_seconds_while_its_cycles_fail() {
    AtomicLong now = new AtomicLong(1_000_000_000L);
    InMemoryRangeStore down = new InMemoryRangeStore().shared(Duration.ofSeconds(1));
    down.storeDown = true;
    FloorSync sync = new FloorSync(down, HeartbeatTest.HOLDS_NOTHING, now::get, () -> 0L, "a", Duration.ofMinutes(10),
        Long.MIN_VALUE);
    ch.qos.logback.classic.Logger logger =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(FloorSync.class);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logs =
        new ch.qos.logback.core.read.ListAppender<>();
    logs.start();
    logger.addAppender(logs);
    try {
      for (int second = 0; second < 65; second++) { // a cycle a second for 65 s: warned at 0, 30 and 60 s
        sync.cycleQuietly();
        now.addAndGet(TimeUnit.SECONDS.toNanos(1));
      }
      down.storeDown = false;
      sync.cycleQuietly();
    } finally {
      logger.detachAppender(logs);
    }

    assertThat(logs.list.stream().filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
        .map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage))
        .hasSize(3)
        .allSatisfy(m -> assertThat(m).contains("server a has not reached the store yet").contains("last error: "));
    assertThat(sync.serving()).isTrue();
  }

  @Test
  void should_be_ready_as_soon_as_a_store_that_connects_late_answers_and_not_before() throws Exception {
    CompletableFuture<Void> connected = new CompletableFuture<>();
    // Floors refreshed hourly: only the cycle that the store's readiness triggers can make it ready here.
    InMemoryRangeStore late = new InMemoryRangeStore() {
      @Override
      public CompletionStage<Void> ready() {
        return connected;
      }
    }.shared(Duration.ofHours(1));
    late.storeDown = true; // not connected yet
    Allocator a = server("a", Allocator.builder(late));
    a.create(new SequenceDefinition("orders", 1, Long.MAX_VALUE, 1, 1_000, 1_000_000));

    assertThat(a.ready()).isNotDone();
    assertThatThrownBy(() -> a.allocate("orders", 1, Duration.ZERO))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("has not reached the store yet");

    late.storeDown = false;
    connected.complete(null);

    a.ready().toCompletableFuture().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(a.allocate("orders", 1, WAIT)).hasSize(1);
  }

  @Test
  void should_fail_ready_when_the_store_gives_up_connecting() {
    CompletableFuture<Void> connected = new CompletableFuture<>();
    InMemoryRangeStore late = new InMemoryRangeStore() {
      @Override
      public CompletionStage<Void> ready() {
        return connected;
      }
    }.shared(Duration.ofHours(1));
    Allocator a = server("a", Allocator.builder(late));

    connected.completeExceptionally(new StoreUnavailableException("gave up (test)"));

    assertThat(a.ready().toCompletableFuture()).isCompletedExceptionally();
  }

  @Test
  void should_not_return_from_an_advance_before_a_server_with_a_stalled_poller_dropped_its_cached_ids()
      throws Exception {
    Allocator a = server("a", Allocator.builder(store));
    Allocator b = server("b", Allocator.builder(store));
    a.create(new SequenceDefinition("s", 1, Long.MAX_VALUE, 1, 10_000, 1_000_000));
    assertThat(max(b.allocate("s", 1, WAIT))).isLessThan(100_000); // b now caches IDs below the floor

    CountDownLatch stalled = new CountDownLatch(1);
    AtomicBoolean stall = new AtomicBoolean(true);
    b.beforeFloorSync(() -> {
      if (stall.getAndSet(false)) {
        stalled.countDown();
        try {
          Thread.sleep(3_000); // a slow store read, a GC pause
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    });
    assertThat(stalled.await(5, TimeUnit.SECONDS)).isTrue();

    a.advance("s", 100_000);

    // Right after the advance returned: b hands out nothing at or below the floor.
    for (int i = 0; i < 50; i++) {
      assertThat(min(b.allocate("s", 7, WAIT))).isGreaterThan(100_000);
    }
  }

  @Test
  void should_say_which_servers_did_not_confirm_when_they_stay_silent_past_the_confirm_timeout() {
    Allocator a = server("a", Allocator.builder(store).advanceConfirmTimeout(Duration.ofMillis(300)));
    Allocator b = server("b", Allocator.builder(store));
    a.create(new SequenceDefinition("s", 1, Long.MAX_VALUE, 1, 10_000, 1_000_000));
    b.allocate("s", 1, WAIT);
    CountDownLatch release = new CountDownLatch(1);
    b.beforeFloorSync(() -> {
      try {
        release.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    try {
      assertThatThrownBy(() -> a.advance("s", 100_000))
          .isInstanceOf(AdvanceNotConfirmedException.class)
          .hasMessageContaining("local/b")
          .hasMessageContaining("floor 100000 is in force in the store")
          .satisfies(e -> assertThat(((AdvanceNotConfirmedException) e).unconfirmed()).containsExactly("local/b"));
    } finally {
      release.countDown();
    }
    // Retrying completes it once b has caught up.
    a.advance("s", 100_000);
    assertThat(min(b.allocate("s", 3, WAIT))).isGreaterThan(100_000);
  }

  @Test
  void should_stop_serving_when_it_cannot_reach_the_store_for_most_of_its_lease_and_serve_again_after() {
    AtomicLong now = new AtomicLong();
    Ticker ticker = now::get;
    Allocator b = server("b", Allocator.builder(store).ticker(ticker).serverLease(Duration.ofSeconds(8)));
    b.create(new SequenceDefinition("s", 1, Long.MAX_VALUE, 1, 10_000, 1_000_000));
    b.allocate("s", 1, WAIT);
    store.storeDown = true;
    now.addAndGet(Duration.ofSeconds(5).toNanos()); // within 3/4 of the lease: still serving from memory
    assertThat(b.tryAllocate("s", 1)).isNotNull();
    now.addAndGet(Duration.ofSeconds(2).toNanos()); // past 6 s: its announcement may be about to expire
    assertThat(b.tryAllocate("s", 1)).isNull();
    assertThatThrownBy(() -> b.allocate("s", 1, WAIT))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("server b has not reached the store");

    store.storeDown = false;
    CompletableFuture<List<IdRange>> served = CompletableFuture.supplyAsync(() -> {
      for (int i = 0; i < 200; i++) { // the poller's next cycle, every 50 ms, lifts the fence
        List<IdRange> r = b.tryAllocate("s", 1);
        if (r != null) {
          return r;
        }
        try {
          Thread.sleep(25);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return null;
        }
      }
      return null;
    });
    assertThat(served.join()).isNotNull();
  }

  @Test
  void should_let_an_advance_complete_without_a_server_that_withdrew() {
    Allocator a = server("a", Allocator.builder(store).advanceConfirmTimeout(Duration.ofMillis(300)));
    Allocator b = server("b", Allocator.builder(store));
    a.create(new SequenceDefinition("s", 1, Long.MAX_VALUE, 1, 10_000, 1_000_000));
    b.allocate("s", 1, WAIT);
    b.beforeFloorSync(() -> {
      throw new StoreUnavailableException("cut off");
    });
    b.close(); // a graceful stop withdraws its announcement
    a.advance("s", 100_000);
    assertThat(min(a.allocate("s", 1, WAIT))).isGreaterThan(100_000);
  }
}
