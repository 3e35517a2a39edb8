package dev.idgen.server.metrics;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.google.inject.multibindings.Multibinder;
import dev.idgen.core.Allocator;
import dev.idgen.core.RangeStore;
import dev.idgen.core.Ticker;
import dev.idgen.core.store.cassandra.CasStats;
import dev.idgen.core.store.cassandra.CassandraRangeStore;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.lifecycle.ServerComponent;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * Binds the meters ({@code idgen.metrics}, {@code idgen.alarms}): the Prometheus registry (with the JVM's
 * meters), {@link IdGenMetrics}, the metrics layer of every gRPC call ({@link GrpcCallMetrics}: Micrometer's per-RPC
 * meters, and the Allocate counters by sequence), the
 * counters read from the allocator and the store at each scrape, the {@link SequenceMonitor} and the
 * {@code /metrics} endpoint ({@link MetricsHttpServer}), the last two as {@link ServerComponent}s.
 */
public final class MetricsModule extends AbstractModule {

  private final OperationsSettings settings;

  public MetricsModule(OperationsSettings settings) {
    this.settings = settings;
  }

  @Override
  protected void configure() {
    Multibinder<ServerComponent> components = Multibinder.newSetBinder(binder(), ServerComponent.class);
    components.addBinding().to(SequenceMonitor.class);
    if (settings.metrics().enabled()) {
      components.addBinding().to(MetricsHttpServer.class);
    }
  }

  @Provides
  @Singleton
  PrometheusMeterRegistry prometheus() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    // Its notification listener lives as long as the JVM: one registry per process (tests: a few).
    new JvmGcMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    return registry;
  }

  @Provides
  @Singleton
  MeterRegistry registry(PrometheusMeterRegistry prometheus) {
    return prometheus;
  }

  @Provides
  @Singleton
  IdGenMetrics metrics(MeterRegistry registry) {
    return new IdGenMetrics(registry, settings.metrics().maxSequenceSeries());
  }

  @Provides
  @Singleton
  MetricsHttpServer metricsHttpServer(PrometheusMeterRegistry registry) {
    return new MetricsHttpServer(registry, settings.metrics());
  }

  /**
   * The metrics layer of every gRPC call ({@link GrpcCallMetrics}): Micrometer's per-RPC meters of every method
   * of every service, and the Allocate counters by sequence. The latency histogram spans what a call can take:
   * an Allocate served from memory takes tens of microseconds; a call waits at most
   * {@code idgen.limits.max-call-duration} (30 s).
   */
  @Provides
  @Singleton
  GrpcCallMetrics grpcMetrics(MeterRegistry registry, IdGenMetrics metrics, Allocator allocator) {
    return new GrpcCallMetrics(registry, timer -> timer
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofNanos(100_000))
        .maximumExpectedValue(Duration.ofSeconds(30)),
        metrics, allocator);
  }

  /** Also registers the meters that read the allocator's and the store's counters at each scrape. */
  @Provides
  @Singleton
  SequenceMonitor monitor(Allocator allocator, RangeStore store, IdGenMetrics metrics) {
    registerCounters(allocator, store, metrics);
    return new SequenceMonitor(allocator, store, metrics, settings, Ticker.system());
  }

  static void registerCounters(Allocator allocator, RangeStore store, IdGenMetrics metrics) {
    MeterRegistry registry = metrics.registry();
    CassandraRangeStore cassandra = store instanceof CassandraRangeStore c ? c : null;
    // From the allocator's totals, which include unloaded sequences: counters never go down.
    lost(registry, "abandoned", allocator, a -> a.stats().abandoned() + metrics.abandonedInCalls());
    lost(registry, "advanced", allocator, a -> {
      Allocator.Stats stats = a.stats();
      return stats.dropped() - stats.abandoned() + (cassandra == null ? 0 : cassandra.idsDropped());
    });
    lost(registry, "dc_block", allocator, a -> cassandra == null ? 0
        : cassandra.globalStats().idsLost() + cassandra.poolStats().idsLost());
    FunctionCounter.builder(IdGenMetrics.IDS_RETURNED, allocator, a -> a.stats().returned())
        .description("IDs given back to the store by a graceful stop (handed out later: not a gap)")
        .register(registry);
    if (cassandra == null) {
      return;
    }
    Map<String, Function<CassandraRangeStore, CasStats>> tiers =
        Map.of("global", CassandraRangeStore::globalStats, "dc", CassandraRangeStore::poolStats);
    Map<String, ToDoubleFunction<CasStats>> outcomes = Map.of(
        "applied", CasStats::applied,
        "conflict", CasStats::conflicts,
        "unknown", CasStats::unknown,
        "resolved_applied", CasStats::resolvedApplied,
        "resolved_not_applied", CasStats::resolvedNotApplied,
        "resolved_ambiguous", CasStats::resolvedAmbiguous,
        "recovered", CasStats::recovered,
        "unresolved", CasStats::unresolved);
    tiers.forEach((tier, stats) -> {
      outcomes.forEach((outcome, value) -> FunctionCounter
          .builder(IdGenMetrics.STORE_CAS, cassandra, c -> value.applyAsDouble(stats.apply(c)))
          .description("Cassandra compare-and-set operations by tier and outcome")
          .tag("tier", tier).tag("outcome", outcome)
          .register(registry));
      FunctionCounter.builder(IdGenMetrics.STORE_CAS_ATTEMPTS, cassandra, c -> stats.apply(c).attempts())
          .description("Cassandra compare-and-set statements sent, by tier")
          .tag("tier", tier)
          .register(registry);
      FunctionCounter.builder(IdGenMetrics.STORE_REGRESSIONS, cassandra, c -> stats.apply(c).regressions())
          .description("Rows that showed less than this server had seen them hold: Cassandra forgot writes it"
              + " acknowledged (each was moved past them, a counted gap); should stay 0")
          .tag("tier", tier)
          .register(registry);
    });
    for (boolean serial : new boolean[] {true, false}) {
      FunctionCounter.builder(IdGenMetrics.STORE_READS, cassandra, c -> c.reads(serial))
          .description("Cassandra reads sent, by consistency (serial: a Paxos round; plain: LOCAL_QUORUM)")
          .tag("consistency", serial ? "serial" : "plain")
          .register(registry);
    }
  }

  private static void lost(MeterRegistry registry, String reason, Allocator allocator,
      ToDoubleFunction<Allocator> value) {
    FunctionCounter.builder(IdGenMetrics.IDS_LOST, allocator, value)
        .description("IDs that will never be handed out (a gap), by reason")
        .tag("reason", reason)
        .register(registry);
  }
}
