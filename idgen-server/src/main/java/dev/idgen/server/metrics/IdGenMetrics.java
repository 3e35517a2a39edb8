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
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The names of idgen's own metrics, and the meters that the request path records into. Names are the
 * Prometheus names without the {@code _total} suffix that the Prometheus registry adds to counters
 * (docs/operations.md, "Metrics to alert on", lists them as scraped).
 *
 * <p>Thread-safe: Micrometer meters are; meters are looked up (and created once) per call.
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

  /**
   * The {@code sequence} tag of calls on names this server has not loaded (unknown sequences, calls
   * refused before their sequence was looked up): a client cannot create a time series per name it
   * makes up. Not a valid sequence name, so it cannot clash with one.
   */
  static final String OTHER_SEQUENCE = "_other";

  private final MeterRegistry registry;
  private final Timer refill;
  private final Counter reservations;
  private final Counter reservationFailures;
  /** IDs of Allocate calls that were cancelled or cut off before they were sent: a gap. */
  private final LongAdder abandonedInCalls = new LongAdder();
  private final ConcurrentMap<String, SequenceCounters> bySequence = new ConcurrentHashMap<>();

  IdGenMetrics(MeterRegistry registry) {
    this.registry = registry;
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
  }

  MeterRegistry registry() {
    return registry;
  }

  /**
   * {@code store} as the allocator should see it: every reservation timed into {@code idgen_refill_seconds}
   * and counted. Closing the result does not close {@code store}.
   */
  public RangeStore metered(RangeStore store) {
    return new MeteredRangeStore(store, this, Ticker.system());
  }

  /** One Allocate call ended with {@code status}, after sending {@code ids} IDs. */
  void allocateCall(String sequence, Status.Code status, long ids) {
    // Cached per sequence: building and registering a tagged meter on every call was a hot spot.
    SequenceCounters counters = bySequence.computeIfAbsent(sequence, SequenceCounters::new);
    counters.calls(status).increment();
    if (ids > 0) {
      counters.ids.increment((double) ids);
      counters.leases.increment();
    }
  }

  /**
   * The Allocate counters of one sequence (names are bounded: loaded sequences, or
   * {@value #OTHER_SEQUENCE}). Thread-safe: the per-status slots are filled racily but idempotently, since
   * the registry returns the one meter registered for a name and tags.
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
