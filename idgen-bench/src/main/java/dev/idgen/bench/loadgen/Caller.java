package dev.idgen.bench.loadgen;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * A caller of the load generator ({@link LoadGen}): one call at a time, with its own counters and histogram.
 * Threads: its counters are written by the caller's own thread (or its channel's event loop) only, and read only
 * after {@link #await} returned; the {@link Phase} is volatile, written by the load generator's main thread.
 */
abstract class Caller {
  /** The phases every caller watches. */
  static final int WARMUP = 0;
  static final int MEASURE = 1;
  static final int DONE = 2;
  /** After a failed call a caller pauses this long, so that a dead server is not hammered in a loop. */
  static final long ERROR_PAUSE_MILLIS = 10;
  /** Histograms track latencies up to this, with 3 significant digits. */
  static final long MAX_TRACKED_NANOS = TimeUnit.MINUTES.toNanos(5);

  final Histogram latency = new Histogram(MAX_TRACKED_NANOS, 3);
  final Map<String, Long> errors = new HashMap<>();
  final Phase phase;
  long calls;
  long ids;

  Caller(Phase phase) {
    this.phase = phase;
  }

  /** Starts calling until the phase is DONE. */
  abstract void start();

  /** Waits until the caller has stopped (its last call ended); false on timeout. */
  abstract boolean await(long millis) throws InterruptedException;

  void countError(String key) {
    if (phase.value == MEASURE) {
      errors.merge(key, 1L, Long::sum);
    }
  }

  void recordCall(long nanos, long n) {
    if (phase.value == MEASURE) {
      latency.recordValue(Math.min(nanos, MAX_TRACKED_NANOS));
      calls++;
      ids += n;
    }
  }

  /** A call counted but not timed (paced client mode samples its latency). */
  void recordUntimed(long n) {
    if (phase.value == MEASURE) {
      calls++;
      ids += n;
    }
  }

  /** The current phase, shared by the callers. */
  static final class Phase {
    volatile int value = WARMUP;
  }
}
