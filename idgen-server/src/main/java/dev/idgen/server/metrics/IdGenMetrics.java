package dev.idgen.server.metrics;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.RangeStore;
import dev.idgen.core.Ticker;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The names of idgen's own metrics, and the meters that the request path records into. Names are the
 * Prometheus names without the {@code _total} suffix that the Prometheus registry adds to counters
 * (docs/operations.md, "Metrics to alert on", lists them as scraped).
 *
 * <p>At most {@code idgen.metrics.max-sequence-series} sequences get Allocate counters of their own (the first
 * to be counted); the calls of every further sequence are counted under {@value #OTHER_SEQUENCE}, so the totals
 * over all series stay exact while the number of series is bounded. Counters are never removed (a Prometheus
 * counter must not go down), so their slots are never freed. The {@link SequenceMonitor} applies the same
 * bound to its gauges, whose slots are freed when a sequence is unloaded.
 *
 * <p>Thread-safe: Micrometer meters are; meters are looked up (and created once) per call. A counter slot is
 * claimed by a compare-and-set on {@code counterSlots} inside the map's per-key {@code computeIfAbsent}, so
 * concurrent first calls of different sequences cannot claim more than the bound, and once it is reached a
 * folded sequence's call takes no lock (the count never goes down).
 */
@ThreadSafe
public final class IdGenMetrics {

  static final String IDS_ALLOCATED = "idgen.ids.allocated";
  static final String ALLOCATE_CALLS = "idgen.allocate.calls";
  static final String LEASES = "idgen.leases";
  static final String STORE_CAS = "idgen.store.cas";
  static final String STORE_CAS_ATTEMPTS = "idgen.store.cas.attempts";
  static final String STORE_READS = "idgen.store.reads";
  static final String STORE_REGRESSIONS = "idgen.store.regressions";
  static final String STORE_RESERVATIONS = "idgen.store.reservations";
  static final String STORE_RESERVATION_FAILURES = "idgen.store.reservation.failures";
  static final String REFILL = "idgen.refill";
  static final String RUNWAY = "idgen.runway.seconds";
  static final String RUNWAY_GUARANTEED = "idgen.runway.guaranteed.seconds";
  static final String HEADROOM = "idgen.headroom.ratio";
  static final String REMAINING = "idgen.remaining.ids";
  static final String RESERVE = "idgen.reserve.ids";
  static final String IDS_LOST = "idgen.ids.lost";
  static final String IDS_RETURNED = "idgen.ids.returned";
  static final String FORWARDED_CALLS = "idgen.strict.forwarded.calls";
  static final String FORWARDED_BATCHES = "idgen.strict.forwarded.batches";
  static final String STRICT_OWNER = "idgen.strict.owner";
  static final String STRICT_OWNER_EPOCH = "idgen.strict.owner.epoch";
  static final String SEQUENCES_FOLDED = "idgen.metrics.sequences.folded";

  /**
   * The {@code sequence} tag of calls on names this server has not loaded (unknown sequences, calls
   * refused before their sequence was looked up): a client cannot create a time series per name it
   * makes up. Not a valid sequence name, so it cannot clash with one.
   */
  static final String OTHER_SEQUENCE = "_other";

  private static final Logger log = LoggerFactory.getLogger(IdGenMetrics.class);

  private final MeterRegistry registry;
  /** {@code idgen.metrics.max-sequence-series}: how many sequences may have series of their own. */
  private final int maxSequenceSeries;
  /** How many sequences have counters of their own; never goes down, at most {@link #maxSequenceSeries}. */
  private final AtomicInteger counterSlots = new AtomicInteger();
  /** Whether the bound has left a sequence without series of its own yet (logged once). */
  private final AtomicBoolean boundLogged = new AtomicBoolean();
  private final Timer refill;
  private final Counter reservations;
  private final Counter reservationFailures;
  private final Counter forwardedCalls;
  private final Counter forwardedBatches;
  /** IDs of Allocate calls that were cancelled or cut off before they were sent: a gap. */
  private final LongAdder abandonedInCalls = new LongAdder();
  private final ConcurrentMap<String, SequenceCounters> bySequence = new ConcurrentHashMap<>();

  IdGenMetrics(MeterRegistry registry, int maxSequenceSeries) {
    if (maxSequenceSeries < 0) {
      throw new IllegalArgumentException("maxSequenceSeries must be 0 or more, got " + maxSequenceSeries);
    }
    this.registry = registry;
    this.maxSequenceSeries = maxSequenceSeries;
    this.refill = Timer.builder(REFILL)
        .description("Store reservations made by this server's allocator (refills and direct reservations)")
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofSeconds(30))
        .register(registry);
    this.reservations = Counter.builder(STORE_RESERVATIONS)
        .description("Store reservations made by this server's allocator")
        .register(registry);
    this.reservationFailures = Counter.builder(STORE_RESERVATION_FAILURES)
        .description("Store reservations that failed (store unreachable, deadline passed)")
        .register(registry);
    this.forwardedCalls = Counter.builder(FORWARDED_CALLS)
        .description("Allocate calls of strict sequences this server forwarded to their owner")
        .register(registry);
    this.forwardedBatches = Counter.builder(FORWARDED_BATCHES)
        .description("Calls this server sent to owners of strict sequences: forwarded calls, coalesced")
        .register(registry);
  }

  /** A forwarded call to an owner, on behalf of {@code callers} Allocate calls (coalesced). */
  public void forwarded(int callers) {
    forwardedBatches.increment();
    forwardedCalls.increment(callers);
  }

  /**
   * The owner answered one request of a forwarding server's {@code IdGenPeer.ForwardAllocate} stream: counted
   * as the Allocate call it stands for ({@code idgen_allocate_calls_total} and the IDs and leases beside it),
   * as when forwarding servers sent one call each.
   */
  public void forwardedAnswered(String sequence, boolean loaded, Status.Code status, long ids) {
    allocateCall(sequence, loaded, status, ids);
  }

  MeterRegistry registry() {
    return registry;
  }

  int maxSequenceSeries() {
    return maxSequenceSeries;
  }

  /**
   * {@code store} as the allocator should see it: every reservation timed into {@code idgen_refill_seconds}
   * and counted. Closing the result does not close {@code store}.
   */
  public RangeStore metered(RangeStore store) {
    return new MeteredRangeStore(store, this, Ticker.system());
  }

  /**
   * One Allocate call ended with {@code status}, after sending {@code ids} IDs; counted under {@value
   * #OTHER_SEQUENCE} unless this server has {@code loaded} the sequence.
   */
  void allocateCall(String sequence, boolean loaded, Status.Code status, long ids) {
    allocateCall(loaded ? sequence : OTHER_SEQUENCE, status, ids);
  }

  /** One Allocate call ended with {@code status}, after sending {@code ids} IDs. */
  void allocateCall(String sequence, Status.Code status, long ids) {
    SequenceCounters counters = counters(sequence);
    counters.calls(status).increment();
    if (ids > 0) {
      counters.ids.increment((double) ids);
      counters.leases.increment();
    }
  }

  /**
   * {@code sequence}'s own counters if it has or can still get a slot, else those of
   * {@value #OTHER_SEQUENCE}. Cached per sequence: building and registering a tagged meter on every call was a
   * hot spot.
   */
  private SequenceCounters counters(String sequence) {
    SequenceCounters counters = bySequence.get(sequence);
    if (counters != null) {
      return counters;
    }
    if (!sequence.equals(OTHER_SEQUENCE)) {
      if (counterSlots.get() < maxSequenceSeries) {
        counters = bySequence.computeIfAbsent(sequence, n -> claimCounterSlot() ? new SequenceCounters(n) : null);
        if (counters != null) {
          return counters;
        }
      }
      folded(sequence);
    }
    return bySequence.computeIfAbsent(OTHER_SEQUENCE, SequenceCounters::new);
  }

  private boolean claimCounterSlot() {
    while (true) {
      int claimed = counterSlots.get();
      if (claimed >= maxSequenceSeries) {
        return false;
      }
      if (counterSlots.compareAndSet(claimed, claimed + 1)) {
        return true;
      }
    }
  }

  /** Whether {@code sequence} has Allocate counters of its own (it was counted, and got a slot). */
  boolean hasOwnCounters(String sequence) {
    return bySequence.containsKey(sequence) && !sequence.equals(OTHER_SEQUENCE);
  }

  /**
   * Whether {@code sequence}'s Allocate calls are counted under {@value #OTHER_SEQUENCE}: it has no counters
   * of its own and no slot is left (a sequence not counted yet while slots are left is not folded).
   */
  boolean countersFolded(String sequence) {
    return !bySequence.containsKey(sequence) && counterSlots.get() >= maxSequenceSeries;
  }

  /**
   * {@code sequence} gets no series of its own (counters or gauges): logs, the first time only, that the bound
   * is reached.
   */
  void folded(String sequence) {
    if (!boundLogged.get() && boundLogged.compareAndSet(false, true)) {
      log.info("metrics=series_bound_reached max_sequence_series={} first_folded={}: sequences beyond the"
          + " bound are counted under sequence=\"{}\" and get no gauges of their own"
          + " (idgen.metrics.max-sequence-series; idgen_metrics_sequences_folded counts them)",
          maxSequenceSeries, sequence, OTHER_SEQUENCE);
    }
  }

  /**
   * The Allocate counters of one sequence (names are bounded: at most {@link #maxSequenceSeries} loaded
   * sequences, and {@value #OTHER_SEQUENCE}). Thread-safe: the per-status slots are filled racily but
   * idempotently, since the registry returns the one meter registered for a name and tags.
   */
  private final class SequenceCounters {
    final String sequence;
    final Counter ids;
    final Counter leases;
    final AtomicReferenceArray<Counter> calls = new AtomicReferenceArray<>(Status.Code.values().length);

    SequenceCounters(String sequence) {
      this.sequence = sequence;
      this.ids = Counter.builder(IDS_ALLOCATED)
          .description("IDs sent to clients")
          .tag("sequence", sequence)
          .register(registry);
      this.leases = Counter.builder(LEASES)
          .description("Allocate calls that returned IDs")
          .tag("sequence", sequence)
          .register(registry);
    }

    Counter calls(Status.Code status) {
      Counter c = calls.get(status.ordinal());
      if (c == null) {
        c = Counter.builder(ALLOCATE_CALLS)
            .description("Allocate calls, by final status (the gRPC code name)")
            .tag("sequence", sequence)
            .tag("status", status.name())
            .register(registry);
        calls.set(status.ordinal(), c);
      }
      return c;
    }
  }

  /** One store reservation took {@code nanos}. */
  void reservation(long nanos, boolean succeeded) {
    refill.record(Duration.ofNanos(nanos));
    reservations.increment();
    if (!succeeded) {
      reservationFailures.increment();
    }
  }

  /** IDs of a call that the client cancelled, or that was cut off, before they were sent. */
  public void abandonedInCall(long ids) {
    abandonedInCalls.add(ids);
  }

  long abandonedInCalls() {
    return abandonedInCalls.sum();
  }
}
