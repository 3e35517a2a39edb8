package dev.idgen.server.metrics;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.core.Allocator;
import dev.idgen.core.RangeStore;
import dev.idgen.core.RunwayPolicy;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceState;
import dev.idgen.core.Ticker;
import dev.idgen.core.store.cassandra.CassandraRangeStore;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.lifecycle.PeriodicTask;
import dev.idgen.server.lifecycle.ServerComponent;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the per-sequence gauges that need the store or a rate — headroom, remaining IDs, the runway of
 * each reserve — and logs the alarms: every {@code idgen.metrics.refresh-interval} it measures each loaded
 * sequence's consumption over the interval and updates its local gauges, and reads the store state (a
 * plain read, never a Paxos round, never one per scrape) of at most {@code store-reads-per-refresh}
 * sequences, those whose pool this server changed first. The quiet sequences (nothing served from them here
 * and nothing reserved for them since their last read) share what is left at the pace that reads each again
 * about once per {@code quiet-store-read-interval}, longest unread first: what changes their store state is
 * other servers, which read it first when they use it. So the monitor's store load per server is bounded
 * whatever the number of sequences and follows the sequences in use; what it costs is staleness of the store
 * gauges of idle sequences.
 *
 * <ul>
 *   <li>{@code idgen_headroom_ratio{sequence}}: the unreserved fraction of [start, max];
 *       {@code idgen_remaining_ids{sequence}}: the unreserved IDs.
 *   <li>{@code idgen_runway_seconds{sequence,tier="node"}}: this server's reserve / its consumption rate;
 *       {@code tier="dc"} (Cassandra): this datacenter's pool / its rate, as the store measures it to size
 *       the pool (over minutes, from what the datacenter's servers took), or before that, the pool's drain
 *       over the intervals in which it was not refilled. +Inf while nothing is consumed.
 *   <li>{@code idgen_runway_guaranteed_seconds{sequence,tier="node"}}: what the node runway is at
 *       the worst moment for the store to fail: the low-water mark below which this server refills (its
 *       outage runway at the rate the pools measured, unless node_block_size caps it) / the rate.
 *   <li>{@code idgen_reserve_ids{sequence,tier}}: the reserves themselves.
 * </ul>
 *
 * <p>Only {@code idgen.metrics.max-sequence-series} sequences have these gauges at a time (the first to be
 * tracked, then those that take the slots of unloaded ones); the others are tracked, and alarmed on, all the
 * same, without gauges. {@code idgen_metrics_sequences_folded} counts the loaded sequences left without
 * series of their own: no gauges, or Allocate counters folded into {@code sequence="_other"} by
 * {@link IdGenMetrics}.
 *
 * <p>Alarms are one-line WARN messages with key=value pairs: a headroom level crossed (once per level),
 * a runway below its warning (once per crossing; an INFO line when it recovers).
 *
 * <p>Thread-safe: {@link #refresh()} runs on the monitor's own thread (or a test's), under {@code lock};
 * gauges read volatile fields. Gauges are registered and removed only under {@code lock}, where
 * {@code gaugeSlots} counts them, so the bound holds however refreshes interleave.
 */
@ThreadSafe
final class SequenceMonitor implements ServerComponent {

  private static final Logger log = LoggerFactory.getLogger(SequenceMonitor.class);
  private static final long NEVER = Long.MIN_VALUE;

  /** The sequences loaded now: the allocator's {@link Allocator#sequenceStats()}. */
  private final Supplier<List<Allocator.SequenceStats>> loadedSequences;
  private final RangeStore store;
  private final IdGenMetrics metrics;
  private final MeterRegistry registry;
  private final OperationsSettings.Alarms alarms;
  private final Duration interval;
  private final int storeReadsPerRefresh;
  /** How often (nanos) a quiet sequence's store state is read again; 0: as often as the budget allows. */
  private final long quietReadNanos;
  private final int maxSequenceSeries;
  private final Ticker ticker;
  private final Object lock = new Object();

  @GuardedBy("lock")
  private final Map<String, Tracked> tracked = new HashMap<>();

  /** How many tracked sequences have gauges of their own: at most {@link #maxSequenceSeries}. */
  @GuardedBy("lock")
  private int gaugeSlots;

  /**
   * Quiet sequences' reads earned and not yet made: the pace that reads each quiet one about once per
   * {@link #quietReadNanos}, spread over the refreshes rather than all due in one burst, and never more than one
   * refresh's worth.
   */
  @GuardedBy("lock")
  private double quietCredit;

  /** When (ticker nanos) the last refresh ran, or {@link #NEVER}. */
  @GuardedBy("lock")
  private long lastRefreshNanos = NEVER;

  /** Loaded sequences without series of their own at the last refresh (read by scrapes). */
  private volatile int folded;

  @GuardedBy("lock")
  private PeriodicTask scheduler;

  /** The bound on per-sequence series is {@code metrics}'s, which the counters share. */
  SequenceMonitor(Allocator allocator, RangeStore store, IdGenMetrics metrics,
      OperationsSettings settings, Ticker ticker) {
    this(allocator::sequenceStats, store, metrics, settings, ticker);
  }

  /** Follows the sequences {@code loadedSequences} lists (a test's, to unload one without waiting). */
  SequenceMonitor(Supplier<List<Allocator.SequenceStats>> loadedSequences, RangeStore store, IdGenMetrics metrics,
      OperationsSettings settings, Ticker ticker) {
    this.loadedSequences = loadedSequences;
    this.store = store;
    this.metrics = metrics;
    this.registry = metrics.registry();
    this.alarms = settings.alarms();
    this.interval = settings.metrics().refreshInterval();
    this.storeReadsPerRefresh = settings.metrics().storeReadsPerRefresh();
    this.quietReadNanos = settings.metrics().quietStoreReadInterval().toNanos();
    this.maxSequenceSeries = metrics.maxSequenceSeries();
    this.ticker = ticker;
    Gauge.builder(IdGenMetrics.SEQUENCES_FOLDED, this, m -> m.folded)
        .description("Loaded sequences without series of their own (idgen.metrics.max-sequence-series reached):"
            + " no per-sequence gauges, or Allocate counters counted under sequence=\"_other\"")
        .register(registry);
  }

  @Override
  public void start() {
    synchronized (lock) {
      if (scheduler != null) {
        return;
      }
      scheduler = PeriodicTask.every(interval, "idgen-sequence-monitor", this::refreshQuietly);
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      PeriodicTask.closeIfStarted(scheduler);
    }
  }

  @Override
  public String toString() {
    return "sequence monitor";
  }

  private void refreshQuietly() {
    try {
      refresh();
    } catch (RuntimeException e) {
      // Never let one failure end the schedule.
      log.warn("refreshing the sequence gauges failed: {}", e.toString());
    }
  }

  /**
   * Updates the gauges and logs alarms: the local ones (this server's reserve and rate) for every loaded
   * sequence, the store-derived ones for at most {@code storeReadsPerRefresh} of them; drops the gauges of
   * sequences the allocator unloaded, so that the registry follows the sequences in use, and gives their
   * slots to sequences that have none.
   */
  void refresh() {
    long now = ticker.nanos();
    String dc = store instanceof CassandraRangeStore c ? c.localDatacenter() : null;
    List<Allocator.SequenceStats> loaded = sortedForSlots(loadedSequences.get());
    List<Tracked> current = new ArrayList<>(loaded.size());
    List<Tracked> quiet = new ArrayList<>();
    synchronized (lock) {
      Set<String> names = new HashSet<>();
      for (Allocator.SequenceStats stats : loaded) {
        names.add(stats.definition().name());
      }
      for (Iterator<Tracked> it = tracked.values().iterator(); it.hasNext(); ) {
        Tracked t = it.next();
        if (names.contains(t.definition.name())) {
          continue;
        }
        it.remove();
        if (!t.gauges.isEmpty()) {
          t.gauges.forEach(registry::remove);
          gaugeSlots--; // the slot goes to the next sequence without gauges
        }
      }
      int withoutSeries = 0;
      for (Allocator.SequenceStats stats : loaded) {
        SequenceDefinition def = stats.definition();
        Tracked t = tracked.computeIfAbsent(def.name(), n -> new Tracked(def));
        if (t.gauges.isEmpty()) {
          if (gaugeSlots < maxSequenceSeries) {
            t.registerGauges(dc != null);
            gaugeSlots++;
          } else {
            metrics.folded(def.name());
          }
        }
        if (t.gauges.isEmpty() || metrics.countersFolded(def.name())) {
          withoutSeries++;
        }
        t.nodeRunway = t.node.update(now, stats.served(), stats.held());
        t.nodeGuaranteed = t.node.measured()
            ? RunwayPolicy.guaranteedSeconds(stats.lowWater(), t.node.perSecond()) : Double.NaN;
        t.nodeReserve = stats.held();
        t.ownerEpoch = stats.ownerEpoch();
        t.reservations = stats.reservations();
        t.served = stats.served();
        checkRunway(t, "node", t.nodeRunway, alarms.nodeRunwayWarning(), t.nodeReserve);
        (quietReadNanos == 0 || t.changedSinceRead() ? current : quiet).add(t);
      }
      current.sort(READ_FIRST);
      if (current.size() > storeReadsPerRefresh) {
        current.subList(storeReadsPerRefresh, current.size()).clear();
      }
      long elapsed = lastRefreshNanos == NEVER ? 0 : Math.max(0, now - lastRefreshNanos);
      lastRefreshNanos = now;
      if (quietReadNanos > 0) {
        // At most one refresh's worth (or one read) carried over: what the budget could not read while other
        // sequences took it (the first reads of 2,000 loaded ones, say) is skipped, not read in a burst later.
        double earned = quiet.size() * ((double) elapsed / quietReadNanos);
        quietCredit = Math.min(Math.max(1, Math.ceil(earned)), quietCredit + earned);
      }
      int room = Math.min(storeReadsPerRefresh - current.size(), quiet.size());
      int quietReads = Math.min(room, (int) Math.floor(quietCredit + 1e-9));
      if (quietReads > 0) {
        quiet.sort(Comparator.comparingLong(t -> t.readNanos));
        current.addAll(quiet.subList(0, quietReads));
        quietCredit -= quietReads;
      }
      folded = withoutSeries;
    }
    for (Tracked t : current) {
      readStore(t, dc, now);
    }
  }

  /**
   * {@code loaded} with the sequences that have Allocate counters of their own first: when gauge slots are
   * free, those get them first, so that while the bound holds, the sequences with counters and those with
   * gauges tend to be the same.
   */
  private List<Allocator.SequenceStats> sortedForSlots(List<Allocator.SequenceStats> loaded) {
    if (maxSequenceSeries == 0) {
      return loaded;
    }
    List<Allocator.SequenceStats> sorted = new ArrayList<>(loaded);
    sorted.sort(Comparator.comparing((Allocator.SequenceStats s) -> !metrics.hasOwnCounters(s.definition().name())));
    return sorted;
  }

  /**
   * Which sequences' store state is read first when there are more than a refresh may read: never read,
   * then those this server reserved for since their last read (their pool changed), then the longest
   * unread. The store state of the others changes only by other servers' reservations, which at runways
   * of minutes to hours is slow, so a gauge a few refreshes old is still right enough for an alarm.
   */
  private static final Comparator<Tracked> READ_FIRST = Comparator
      .comparing((Tracked t) -> t.readNanos != NEVER)
      .thenComparing(t -> t.reservations == t.reservationsAtRead)
      .thenComparingLong(t -> t.readNanos);

  private void readStore(Tracked t, String dc, long now) {
    SequenceDefinition def = t.definition;
    SequenceState state;
    try {
      state = store.approximateState(def); // no Paxos round
    } catch (RuntimeException e) {
      // The store is down: keep the last values; its unavailability shows in other metrics and logs.
      log.debug("could not read the state of sequence '{}': {}", def.name(), e.toString());
      return;
    }
    synchronized (lock) {
      t.readNanos = now;
      t.reservationsAtRead = t.reservations;
      t.servedAtRead = t.served;
      long total = 0;
      for (SequenceState.Stripe s : state.stripes()) {
        total += s.size();
      }
      long remaining = state.remaining();
      t.remaining = remaining;
      t.headroom = total <= 0 ? 0 : (double) remaining / total;
      checkHeadroom(t);
      if (dc == null) {
        return;
      }
      long reserve = 0;
      for (SequenceState.DatacenterReserve r : state.datacenterReserves()) {
        if (r.datacenter().equals(dc)) {
          reserve += r.ids();
        }
      }
      t.dcReserve = reserve;
      double drainRunway = t.dcDrain.updateDrain(now, reserve);
      // The rate the store sizes the pools by (measured over minutes, from what the datacenter's
      // servers took) when there is one: the drain between two reads comes in steps.
      double rate = ((CassandraRangeStore) store).datacenterRate(def);
      t.dcRunway = rate > 0 ? reserve / rate : rate == 0 ? Double.POSITIVE_INFINITY : drainRunway;
      checkRunway(t, "dc", t.dcRunway, alarms.dcRunwayWarning(), t.dcReserve);
    }
  }

  @GuardedBy("lock")
  private void checkHeadroom(Tracked t) {
    List<Double> levels = alarms.headroomWarnings();
    int crossed = 0;
    while (crossed < levels.size() && t.headroom < levels.get(crossed)) {
      crossed++;
    }
    if (crossed > t.headroomLevelsCrossed) {
      double level = levels.get(crossed - 1);
      log.warn("alarm=headroom_low sequence={} headroom_pct={} threshold_pct={} remaining_ids={} max={}",
          t.definition.name(), pct(t.headroom), pct(level), (long) t.remaining, t.definition.max());
    }
    t.headroomLevelsCrossed = crossed;
  }

  @GuardedBy("lock")
  private void checkRunway(Tracked t, String tier, double runway, Duration warning, double reserve) {
    if (warning.isZero() || Double.isNaN(runway)) {
      return;
    }
    boolean low = runway < warning.toNanos() / 1e9;
    boolean wasLow = tier.equals("node") ? t.nodeRunwayLow : t.dcRunwayLow;
    if (low && !wasLow) {
      log.warn("alarm=runway_low sequence={} tier={} runway_s={} warning_s={} reserve_ids={}",
          t.definition.name(), tier, seconds(runway), warning.toSeconds(), (long) reserve);
    } else if (!low && wasLow) {
      log.info("alarm=runway_recovered sequence={} tier={} runway_s={} warning_s={} reserve_ids={}",
          t.definition.name(), tier, seconds(runway), warning.toSeconds(), (long) reserve);
    }
    if (tier.equals("node")) {
      t.nodeRunwayLow = low;
    } else {
      t.dcRunwayLow = low;
    }
  }

  private static String pct(double fraction) {
    return String.format(Locale.ROOT, "%.2f", fraction * 100);
  }

  private static String seconds(double s) {
    return Double.isInfinite(s) ? "inf" : String.format(Locale.ROOT, "%.1f", s);
  }

  /** One sequence's gauges (read by scrapes) and alarm state (under the monitor's lock). */
  private final class Tracked {
    final SequenceDefinition definition;
    final Rate node = new Rate();
    final Rate dcDrain = new Rate();
    volatile double headroom = Double.NaN;
    volatile double remaining = Double.NaN;
    volatile double nodeRunway = Double.NaN;
    volatile double nodeGuaranteed = Double.NaN;
    volatile double dcRunway = Double.NaN;
    volatile double nodeReserve = Double.NaN;
    volatile double dcReserve = Double.NaN;
    /** A strict sequence's owner lease held here at the last refresh: its epoch, 0 for none. */
    volatile double ownerEpoch;
    int headroomLevelsCrossed;
    /** When (ticker nanos) the store state was last read, or {@link #NEVER}. */
    long readNanos = NEVER;
    /** The allocator's reservation count at the last refresh, and at the last store read. */
    long reservations;
    long reservationsAtRead = -1;
    /** The IDs this server served from the sequence, at the last refresh and at the last store read. */
    long served;
    long servedAtRead = -1;
    boolean nodeRunwayLow;
    boolean dcRunwayLow;

    /**
     * This sequence's gauges, removed from the registry when the allocator unloads it; empty while the bound
     * leaves it without.
     */
    final List<Gauge> gauges = new ArrayList<>();

    Tracked(SequenceDefinition definition) {
      this.definition = definition;
    }

    /** Never read, or served from or reserved for since its last read: not quiet. */
    boolean changedSinceRead() {
      return readNanos == NEVER || reservations != reservationsAtRead || served != servedAtRead;
    }

    void registerGauges(boolean hasDc) {
      String name = definition.name();
      gauges.add(Gauge.builder(IdGenMetrics.HEADROOM, this, x -> x.headroom)
          .description("Unreserved fraction of the sequence's [start, max]")
          .tag("sequence", name).register(registry));
      gauges.add(Gauge.builder(IdGenMetrics.REMAINING, this, x -> x.remaining)
          .description("IDs of the sequence not yet reserved by anyone")
          .tag("sequence", name).register(registry));
      gauges.add(Gauge.builder(IdGenMetrics.RUNWAY, this, x -> x.nodeRunway)
          .description("Seconds until the reserve is empty at the current rate (+Inf: no consumption)")
          .tag("sequence", name).tag("tier", "node").register(registry));
      gauges.add(Gauge.builder(IdGenMetrics.RESERVE, this, x -> x.nodeReserve)
          .description("IDs held in reserve")
          .tag("sequence", name).tag("tier", "node").register(registry));
      gauges.add(Gauge.builder(IdGenMetrics.RUNWAY_GUARANTEED, this, x -> x.nodeGuaranteed)
          .description("Seconds the reserve lasts at the current rate if the store fails at the worst moment:"
              + " the low-water mark a refill starts below / the rate (+Inf: no consumption)")
          .tag("sequence", name).tag("tier", "node").register(registry));
      if (definition.strict()) {
        // Which server owns a strict sequence: the one whose gauge says 1 (none during a take-over).
        gauges.add(Gauge.builder(IdGenMetrics.STRICT_OWNER, this, x -> x.ownerEpoch > 0 ? 1 : 0)
            .description("1 while this server holds the strict sequence's owner lease (it serves the sequence"
                + " and the other servers forward to it), else 0; as of the last refresh")
            .tag("sequence", name).register(registry));
        gauges.add(Gauge.builder(IdGenMetrics.STRICT_OWNER_EPOCH, this, x -> x.ownerEpoch)
            .description("The epoch of the strict sequence's owner lease this server holds (0: none);"
                + " it grows by one at each take-over")
            .tag("sequence", name).register(registry));
      }
      if (hasDc) {
        gauges.add(Gauge.builder(IdGenMetrics.RUNWAY, this, x -> x.dcRunway)
            .description("Seconds until the reserve is empty at the current rate (+Inf: no consumption)")
            .tag("sequence", name).tag("tier", "dc").register(registry));
        gauges.add(Gauge.builder(IdGenMetrics.RESERVE, this, x -> x.dcReserve)
            .description("IDs held in reserve")
            .tag("sequence", name).tag("tier", "dc").register(registry));
      }
    }
  }

  /**
   * A consumption rate over the last interval, and the runway it gives. Not thread-safe: used under the
   * monitor's lock.
   */
  static final class Rate {
    private long lastNanos;
    private long lastValue;
    private boolean started;
    private double perSecond;
    private int updates;

    /**
     * {@code consumed} is a counter that only grows; returns {@code reserve}'s runway in seconds at the
     * rate since the last update (NaN on the first update).
     */
    double update(long nowNanos, long consumed, long reserve) {
      if (!started || nowNanos <= lastNanos) {
        started = true;
        lastNanos = nowNanos;
        lastValue = consumed;
        return Double.NaN;
      }
      perSecond = (consumed - lastValue) / ((nowNanos - lastNanos) / 1e9);
      updates = 2;
      lastNanos = nowNanos;
      lastValue = consumed;
      return runway(reserve);
    }

    /**
     * {@code reserve} is a level that consumption lowers and refills raise: the rate is measured over
     * intervals in which it did not rise; an interval with a refill keeps the previous rate.
     */
    double updateDrain(long nowNanos, long reserve) {
      if (!started || nowNanos <= lastNanos) {
        started = true;
        lastNanos = nowNanos;
        lastValue = reserve;
        return Double.NaN;
      }
      if (reserve <= lastValue) {
        perSecond = (lastValue - reserve) / ((nowNanos - lastNanos) / 1e9);
      }
      lastNanos = nowNanos;
      lastValue = reserve;
      return runway(reserve);
    }

    /** Whether a rate has been measured (two updates). */
    boolean measured() {
      return updates > 1;
    }

    /** IDs per second over the last interval. */
    double perSecond() {
      return perSecond;
    }

    private double runway(long reserve) {
      return perSecond <= 0 ? Double.POSITIVE_INFINITY : reserve / perSecond;
    }
  }
}
