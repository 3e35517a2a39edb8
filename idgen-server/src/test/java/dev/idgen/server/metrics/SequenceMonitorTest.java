package dev.idgen.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.idgen.core.Allocator;
import dev.idgen.core.ForwardingRangeStore;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceState;
import dev.idgen.server.InMemoryRangeStore;
import dev.idgen.server.config.OperationsSettings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Headroom, runway and their alarms, refreshed by hand with a fake clock. */
class SequenceMonitorTest {

  private static final SequenceDefinition SMALL = new SequenceDefinition("small", 1, 100, 1, 10, 10);
  /** Room for a direct reservation (a request larger than the pool), which the wait bounds. */
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final AtomicLong nanos = new AtomicLong();
  private final InMemoryRangeStore store = new InMemoryRangeStore();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  @RegisterExtension final CapturedLogs logs = new CapturedLogs(SequenceMonitor.class);
  private Allocator allocator;
  private SequenceMonitor monitor;

  @BeforeEach
  void setUp() {
    // Refills run inline: the pools' contents are deterministic.
    allocator = Allocator.builder(store).minNodeBlock(10).executor(Runnable::run).ticker(nanos::get).build();
    allocator.create(SMALL);
  }

  @AfterEach
  void tearDown() {
    allocator.close();
  }

  private void monitor(String nodeWarning) {
    Config config = ConfigFactory.parseMap(Map.of("idgen.alarms.runway-warning.node", nodeWarning))
        .withFallback(ConfigFactory.defaultReference()).resolve();
    OperationsSettings settings = OperationsSettings.from(config, Map.of());
    monitor = new SequenceMonitor(allocator, store, metrics(settings), settings, nanos::get);
  }

  @Test
  void should_export_headroom_and_remaining_from_the_store_state() {
    monitor("10s");
    allocator.allocate("small", 25, WAIT);

    monitor.refresh();

    long remaining = store.state(SMALL).remaining();
    assertThat(remaining).isLessThanOrEqualTo(75);
    assertThat(gauge(IdGenMetrics.REMAINING)).isEqualTo(remaining);
    assertThat(gauge(IdGenMetrics.HEADROOM)).isEqualTo(remaining / 100.0);
  }

  @Test
  void should_warn_once_per_headroom_level_crossed() {
    monitor("0s");
    allocator.allocate("small", 75, WAIT); // 75 used, the pool holds the rest of a block
    monitor.refresh();
    monitor.refresh();

    assertThat(warnings("alarm=headroom_low")).hasSize(1)
        .allSatisfy(m -> assertThat(m).contains("sequence=small").contains("threshold_pct=20.00"));

    allocator.allocate("small", 15, WAIT); // 90 used: 10 % and 5 % crossed at once
    monitor.refresh();
    monitor.refresh();

    List<String> headroom = warnings("alarm=headroom_low");
    assertThat(headroom).hasSize(2);
    assertThat(headroom.get(1)).contains("threshold_pct=5.00").contains("max=100");
  }

  @Test
  void should_compute_the_node_runway_from_the_rate_over_the_interval() {
    monitor("0s");
    allocator.allocate("small", 1, WAIT); // loads the sequence: the monitor tracks it from now on
    monitor.refresh(); // the first refresh only starts the measurement
    assertThat(gauge(IdGenMetrics.RUNWAY)).isNaN();
    assertThat(gauge(IdGenMetrics.RUNWAY_GUARANTEED)).isNaN();

    allocator.allocate("small", 5, WAIT);
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(10));
    monitor.refresh();

    long held = allocator.stats().held();
    assertThat(held).isPositive();
    // 5 IDs in 10 s: 0.5 IDs/s.
    assertThat(gauge(IdGenMetrics.RUNWAY)).isEqualTo(held / 0.5);
    // The guaranteed runway: the low-water mark the pools refill below, at that rate.
    long lowWater = allocator.sequenceStats().get(0).lowWater();
    assertThat(lowWater).isPositive();
    assertThat(gauge(IdGenMetrics.RUNWAY_GUARANTEED)).isEqualTo(lowWater / 0.5);

    nanos.addAndGet(TimeUnit.SECONDS.toNanos(10));
    monitor.refresh(); // nothing consumed: the reserve lasts for ever
    assertThat(gauge(IdGenMetrics.RUNWAY)).isInfinite();
  }

  @Test
  void should_warn_when_the_runway_drops_below_the_alarm_and_note_the_recovery() {
    monitor("1h");
    allocator.allocate("small", 1, WAIT);
    monitor.refresh();
    allocator.allocate("small", 5, WAIT);
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(10));
    monitor.refresh(); // at most 10 IDs at 0.5/s: at most 20 s left
    monitor.refresh(); // same interval, no news: no second warning

    assertThat(warnings("alarm=runway_low")).hasSize(1)
        .allSatisfy(m -> assertThat(m).contains("sequence=small").contains("tier=node").contains("warning_s=3600"));

    nanos.addAndGet(TimeUnit.SECONDS.toNanos(10));
    monitor.refresh(); // idle: infinite runway

    assertThat(logs.messages(Level.INFO, "alarm=runway_recovered")).hasSize(1);
  }

  @Test
  void should_not_export_a_dc_tier_without_cassandra() {
    monitor("10s");
    allocator.allocate("small", 1, WAIT);

    monitor.refresh();

    assertThat(registry.find(IdGenMetrics.RUNWAY).tag("tier", "dc").gauges()).isEmpty();
    assertThat(registry.find(IdGenMetrics.RUNWAY).tag("tier", "node").gauges()).hasSize(1);
  }

  @Test
  void should_read_the_store_for_at_most_the_budget_per_refresh_whatever_the_number_of_sequences() {
    // A store that records the monitor's reads, 120 loaded sequences, a budget of 50 reads per refresh.
    List<String> read = new java.util.concurrent.CopyOnWriteArrayList<>();
    RangeStore counting = recordingReads(read);
    // Quiet sequences read again as often as the budget allows: the budget alone decides here.
    Config config = ConfigFactory.parseMap(Map.of("idgen.metrics.store-reads-per-refresh", 50,
            "idgen.metrics.quiet-store-read-interval", "0s"))
        .withFallback(ConfigFactory.defaultReference()).resolve();
    OperationsSettings settings = OperationsSettings.from(config, Map.of());
    monitor = new SequenceMonitor(allocator, counting, metrics(settings), settings, nanos::get);
    allocator.allocate("small", 1, WAIT);
    for (int i = 1; i < 120; i++) {
      allocator.create(new SequenceDefinition("s" + i, 1, 1_000_000, 1, 10, 1_000));
      allocator.allocate("s" + i, 1, WAIT);
    }

    // Never more than 50 reads per refresh, and every sequence read within ceil(120 / 50) = 3 refreshes.
    List<String> third = List.of();
    for (int refresh = 1; refresh <= 3; refresh++) {
      read.clear();
      nanos.addAndGet(TimeUnit.SECONDS.toNanos(15));
      monitor.refresh();
      assertThat(read).as("reads in refresh %d", refresh).hasSize(50).doesNotHaveDuplicates();
      third = List.copyOf(read);
    }
    assertThat(registry.find(IdGenMetrics.HEADROOM).gauges()).hasSize(120)
        .allSatisfy(g -> assertThat(g.value()).as(g.getId().getTag("sequence")).isNotNaN());

    // A sequence read in the last refresh would wait two refreshes for its turn; one that this server reserved
    // for since (its pool changed) is read at the next one.
    String changed = third.stream().filter(n -> !n.equals("small")).findFirst().orElseThrow();
    double remainingBefore = registry.get(IdGenMetrics.REMAINING).tag("sequence", changed).gauge().value();
    allocator.allocate(changed, 100, WAIT); // more than its 10-ID pool holds: a reservation
    read.clear();
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(15));
    monitor.refresh();
    assertThat(read).hasSize(50).contains(changed).doesNotContainAnyElementsOf(
        third.stream().filter(n -> !n.equals(changed)).toList());
    assertThat(registry.get(IdGenMetrics.REMAINING).tag("sequence", changed).gauge().value())
        .isLessThanOrEqualTo(remainingBefore - 100);
  }

  @Test
  void should_read_a_quiet_sequence_again_only_after_the_quiet_interval() {
    List<String> read = new java.util.concurrent.CopyOnWriteArrayList<>();
    RangeStore counting = recordingReads(read);
    Config config = ConfigFactory.parseMap(Map.of("idgen.metrics.quiet-store-read-interval", "5m"))
        .withFallback(ConfigFactory.defaultReference()).resolve();
    OperationsSettings settings = OperationsSettings.from(config, Map.of());
    monitor = new SequenceMonitor(allocator, counting, metrics(settings), settings, nanos::get);
    allocator.create(new SequenceDefinition("busy", 1, 1_000_000, 1, 10, 1_000));
    allocator.allocate("small", 1, WAIT);
    allocator.allocate("busy", 1, WAIT);
    monitor.refresh();
    assertThat(read).containsExactlyInAnyOrder("small", "busy");

    // Within the quiet interval: only the sequence served from since its read is read again.
    for (int refresh = 1; refresh < 20; refresh++) { // 19 refreshes of 15 s: 4 min 45 s
      read.clear();
      allocator.allocate("busy", 1, WAIT);
      nanos.addAndGet(TimeUnit.SECONDS.toNanos(15));
      monitor.refresh();
      assertThat(read).as("refresh %d", refresh).containsExactly("busy");
    }
    // Then the quiet one too, once; a reservation for it (its pool changed) makes it due at once.
    read.clear();
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(15));
    monitor.refresh();
    assertThat(read).containsExactly("small");
    read.clear();
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(15));
    monitor.refresh();
    assertThat(read).isEmpty();
    allocator.allocate("small", 50, WAIT); // more than its 10-ID pool: a reservation
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(15));
    monitor.refresh();
    assertThat(read).containsExactly("small");
  }

  @Test
  void should_measure_a_drain_rate_only_over_intervals_without_a_refill() {
    SequenceMonitor.Rate rate = new SequenceMonitor.Rate();
    long s = TimeUnit.SECONDS.toNanos(1);

    assertThat(rate.updateDrain(0, 1_000)).isNaN();
    assertThat(rate.updateDrain(10 * s, 900)).isEqualTo(900 / 10.0); // 10 IDs/s
    // Refilled meanwhile: the level rose, the rate stays 10/s.
    assertThat(rate.updateDrain(20 * s, 2_000)).isEqualTo(2_000 / 10.0);
  }

  /** The test's store, adding to {@code read} the name of each sequence whose state the monitor reads. */
  private RangeStore recordingReads(List<String> read) {
    return new ForwardingRangeStore(store) {
      @Override
      public SequenceState approximateState(SequenceDefinition sequence) {
        read.add(sequence.name());
        return super.approximateState(sequence);
      }
    };
  }

  private IdGenMetrics metrics(OperationsSettings settings) {
    return new IdGenMetrics(registry, settings.metrics().maxSequenceSeries());
  }

  private double gauge(String name) {
    return registry.get(name).tag("sequence", "small").gauge().value();
  }

  private List<String> warnings(String prefix) {
    return logs.messages(Level.WARN, prefix);
  }
}
