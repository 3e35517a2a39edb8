package dev.idgen.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.idgen.core.Allocator;
import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.server.InMemoryRangeStore;
import dev.idgen.server.config.OperationsSettings;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * {@code idgen.metrics.max-sequence-series}: which sequences get series of their own, where the Allocate calls
 * of the others are counted, and which gauges exist; refreshed by hand, sequences unloaded by hand.
 */
class SequenceSeriesBoundTest {

  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final List<String> NAMES = List.of("s1", "s2", "s3", "s4", "s5");
  /** The per-sequence gauges of the monitor (without Cassandra: no dc tier). */
  private static final List<String> GAUGES = List.of(IdGenMetrics.HEADROOM, IdGenMetrics.REMAINING,
      IdGenMetrics.RUNWAY, IdGenMetrics.RUNWAY_GUARANTEED, IdGenMetrics.RESERVE);

  private final AtomicLong nanos = new AtomicLong();
  private final InMemoryRangeStore store = new InMemoryRangeStore();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  /** Sequences the monitor is told are no longer loaded. */
  private final Set<String> unloaded = ConcurrentHashMap.newKeySet();
  @RegisterExtension final CapturedLogs logs = new CapturedLogs(IdGenMetrics.class);
  private Allocator allocator;
  private IdGenMetrics metrics;
  private SequenceMonitor monitor;

  @BeforeEach
  void setUp() {
    allocator = Allocator.builder(store).minNodeBlock(10).executor(Runnable::run).ticker(nanos::get).build();
    for (String name : NAMES) {
      allocator.create(new SequenceDefinition(name, 1, 1_000_000, 1, 10, 1_000));
    }
  }

  @AfterEach
  void tearDown() {
    allocator.close();
  }

  private void bound(int max) {
    Config config = ConfigFactory.parseMap(Map.of("idgen.metrics.max-sequence-series", max))
        .withFallback(ConfigFactory.defaultReference()).resolve();
    OperationsSettings settings = OperationsSettings.from(config, Map.of());
    metrics = new IdGenMetrics(registry, settings.metrics().maxSequenceSeries());
    monitor = new SequenceMonitor(() -> allocator.sequenceStats().stream()
        .filter(s -> !unloaded.contains(s.definition().name())).toList(), store, metrics, settings, nanos::get);
  }

  /** An Allocate call of {@code count} IDs, counted as the call interceptor counts it. */
  private long allocate(String sequence, long count) {
    long ids = allocator.allocate(sequence, count, WAIT).stream().mapToLong(IdRange::count).sum();
    metrics.allocateCall(sequence, Status.Code.OK, ids);
    return ids;
  }

  @Test
  void should_count_a_forwarded_request_for_a_name_not_loaded_here_under_other() {
    bound(2);

    metrics.forwardedAnswered("made-up", false, Status.Code.NOT_FOUND, 0);
    metrics.forwardedAnswered("s1", true, Status.Code.OK, 7);

    // A peer's made-up names take no slot: s1 still gets the first of its own.
    assertThat(allSequenceTags()).containsExactlyInAnyOrder("s1", "_other");
    assertThat(registry.get(IdGenMetrics.ALLOCATE_CALLS).tag("sequence", "_other").tag("status", "NOT_FOUND")
        .counter().count()).isEqualTo(1);
    assertThat(counter(IdGenMetrics.IDS_ALLOCATED, "s1")).isEqualTo(7);
  }

  @Test
  void should_fold_counters_beyond_the_bound_into_other() {
    bound(2);
    long allocated = 0;
    for (int i = 0; i < NAMES.size(); i++) {
      allocated += allocate(NAMES.get(i), i + 1); // s1: 1 ID, s2: 2, … s5: 5
    }
    metrics.allocateCall("s5", Status.Code.INVALID_ARGUMENT, 0);

    monitor.refresh();

    assertThat(allocated).isEqualTo(15);
    assertThat(sequences(IdGenMetrics.IDS_ALLOCATED)).containsExactlyInAnyOrder("s1", "s2", "_other");
    assertThat(counter(IdGenMetrics.IDS_ALLOCATED, "s1")).isEqualTo(1);
    assertThat(counter(IdGenMetrics.IDS_ALLOCATED, "s2")).isEqualTo(2);
    assertThat(counter(IdGenMetrics.IDS_ALLOCATED, "_other")).isEqualTo(3 + 4 + 5);
    assertThat(sum(IdGenMetrics.IDS_ALLOCATED)).isEqualTo((double) allocated)
        .isEqualTo((double) allocator.stats().served());
    assertThat(sum(IdGenMetrics.LEASES)).isEqualTo(5);
    assertThat(counter(IdGenMetrics.LEASES, "_other")).isEqualTo(3);
    assertThat(registry.get(IdGenMetrics.ALLOCATE_CALLS).tag("sequence", "_other").tag("status", "OK").counter()
        .count()).isEqualTo(3);
    assertThat(registry.get(IdGenMetrics.ALLOCATE_CALLS).tag("sequence", "_other")
        .tag("status", "INVALID_ARGUMENT").counter().count()).isEqualTo(1);
    // The sequences with counters of their own got the gauges; no meter at all names the others.
    for (String gauge : GAUGES) {
      assertThat(sequences(gauge)).as(gauge).containsExactlyInAnyOrder("s1", "s2");
    }
    assertThat(allSequenceTags()).containsExactlyInAnyOrder("s1", "s2", "_other");
    assertThat(folded()).isEqualTo(3);
    assertThat(boundReachedLines()).singleElement().satisfies(m -> assertThat(m)
        .contains("max_sequence_series=2").contains("first_folded=s3"));

    allocate("s4", 7);
    monitor.refresh();

    assertThat(counter(IdGenMetrics.IDS_ALLOCATED, "_other")).isEqualTo(3 + 4 + 5 + 7);
    assertThat(sum(IdGenMetrics.IDS_ALLOCATED)).isEqualTo((double) allocator.stats().served());
    assertThat(boundReachedLines()).as("logged once").hasSize(1);
  }

  @Test
  void should_free_a_gauge_slot_when_a_sequence_is_unloaded_but_keep_its_counters() {
    bound(2);
    allocate("s1", 1);
    allocate("s2", 2);
    allocate("s3", 3);
    monitor.refresh();
    assertThat(sequences(IdGenMetrics.HEADROOM)).containsExactlyInAnyOrder("s1", "s2");
    assertThat(folded()).isEqualTo(1);

    unloaded.add("s1");
    monitor.refresh();

    // s3 took the gauge slot of s1; s1's counters stay (counters never go down), so s3's are still folded.
    for (String gauge : GAUGES) {
      assertThat(sequences(gauge)).as(gauge).containsExactlyInAnyOrder("s2", "s3");
    }
    assertThat(counter(IdGenMetrics.IDS_ALLOCATED, "s1")).isEqualTo(1);
    allocate("s3", 4);
    assertThat(sequences(IdGenMetrics.IDS_ALLOCATED)).containsExactlyInAnyOrder("s1", "s2", "_other");
    assertThat(counter(IdGenMetrics.IDS_ALLOCATED, "_other")).isEqualTo(3 + 4);
    assertThat(folded()).as("s3: counters folded").isEqualTo(1);

    allocate("s4", 5); // a new sequence: no slot of either kind is free
    monitor.refresh();

    assertThat(sequences(IdGenMetrics.HEADROOM)).containsExactlyInAnyOrder("s2", "s3");
    assertThat(counter(IdGenMetrics.IDS_ALLOCATED, "_other")).isEqualTo(3 + 4 + 5);
    assertThat(folded()).isEqualTo(2);
  }

  @Test
  void should_fold_everything_with_a_bound_of_zero() {
    bound(0);
    long allocated = 0;
    for (String name : NAMES) {
      allocated += allocate(name, 2);
    }

    monitor.refresh();

    assertThat(sequences(IdGenMetrics.IDS_ALLOCATED)).containsExactly("_other");
    assertThat(counter(IdGenMetrics.IDS_ALLOCATED, "_other")).isEqualTo((double) allocated).isEqualTo(10);
    assertThat(counter(IdGenMetrics.LEASES, "_other")).isEqualTo(5);
    for (String gauge : GAUGES) {
      assertThat(registry.find(gauge).gauges()).as(gauge).isEmpty();
    }
    assertThat(allSequenceTags()).containsExactly("_other");
    assertThat(folded()).isEqualTo(5);
    assertThat(boundReachedLines()).singleElement().satisfies(m -> assertThat(m)
        .contains("max_sequence_series=0").contains("first_folded=s1"));
  }

  @Test
  void should_keep_alarms_for_sequences_without_gauges() {
    bound(0);
    Logger monitorLogger = (Logger) LoggerFactory.getLogger(SequenceMonitor.class);
    ListAppender<ILoggingEvent> monitorLogs = new ListAppender<>();
    monitorLogs.start();
    monitorLogger.addAppender(monitorLogs);
    try {
      allocator.create(new SequenceDefinition("tiny", 1, 100, 1, 10, 10));
      allocate("tiny", 90); // 90 % of tiny used: headroom below 20 %

      monitor.refresh();

      assertThat(registry.find(IdGenMetrics.HEADROOM).gauges()).isEmpty();
      assertThat(monitorLogs.list).map(ILoggingEvent::getFormattedMessage)
          .anySatisfy(m -> assertThat(m).startsWith("alarm=headroom_low").contains("sequence=tiny"));
    } finally {
      monitorLogger.detachAppender(monitorLogs);
    }
  }

  @Test
  void should_give_own_counters_to_at_most_the_bound_when_sequences_are_counted_at_once() throws Exception {
    bound(3);
    List<String> names = new ArrayList<>();
    for (int i = 0; i < 32; i++) {
      names.add("c" + i);
    }
    int threads = 4;
    int rounds = 50;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        List<String> order = new ArrayList<>(names);
        Collections.rotate(order, t * 8); // each thread counts the sequences in another order
        done.add(pool.submit(() -> {
          start.await();
          for (int r = 0; r < rounds; r++) {
            for (String name : order) {
              metrics.allocateCall(name, Status.Code.OK, 1);
            }
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }

    Set<String> own = sequences(IdGenMetrics.IDS_ALLOCATED);
    assertThat(own).contains("_other").hasSize(3 + 1);
    assertThat(sum(IdGenMetrics.IDS_ALLOCATED)).isEqualTo((double) threads * rounds * names.size());
    assertThat(sum(IdGenMetrics.LEASES)).isEqualTo((double) threads * rounds * names.size());
  }

  private Set<String> sequences(String meter) {
    return registry.find(meter).meters().stream().map(m -> m.getId().getTag("sequence"))
        .collect(Collectors.toSet());
  }

  private Set<String> allSequenceTags() {
    return registry.getMeters().stream().map(m -> m.getId().getTag("sequence")).filter(Objects::nonNull)
        .collect(Collectors.toSet());
  }

  private double counter(String meter, String sequence) {
    return registry.get(meter).tag("sequence", sequence).counter().count();
  }

  private double sum(String meter) {
    return registry.find(meter).counters().stream().mapToDouble(Counter::count).sum();
  }

  private double folded() {
    return registry.get(IdGenMetrics.SEQUENCES_FOLDED).gauge().value();
  }

  private List<String> boundReachedLines() {
    return logs.messages(Level.INFO, "metrics=series_bound_reached");
  }
}
