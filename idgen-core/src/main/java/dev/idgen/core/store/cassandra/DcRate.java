package dev.idgen.core.store.cassandra;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.core.SequenceDefinition;
import java.time.Duration;

/**
 * A datacenter's consumption rate of one stripe, learned from the pool's {@code taken} counter (IDs ever
 * handed to servers of that datacenter) each time this process reserves from it, and the DC block size
 * that rate asks for: {@code rate × target runway}, between ten node blocks and the sequence's
 * {@code dc_block_size}. Sizing DC blocks to the datacenter's own rate keeps a quiet datacenter from
 * reserving a million IDs it will not use for months (IDs stay short), while a busy one still gets
 * blocks that last hours when it is cut off.
 *
 * <p>Threads: all methods synchronize on this object; it is touched once per node reservation.
 */
@ThreadSafe
final class DcRate {
  /** Weight of the newest interval in the moving average. */
  private static final double ALPHA = 0.3;
  /** Intervals shorter than this are merged into the next one: too short to measure. */
  private static final long MIN_INTERVAL_NANOS = 100_000_000L;

  private final long targetRunwayNanos;

  @GuardedBy("this") private long lastNanos;
  @GuardedBy("this") private long lastTaken = -1;
  /** IDs per nanosecond; negative until a first interval was measured. */
  @GuardedBy("this") private double rate = -1;

  DcRate(Duration targetRunway) {
    this.targetRunwayNanos = targetRunway.toNanos();
  }

  /** Records that the pool's {@code taken} counter read {@code taken} at {@code nanos}. */
  synchronized void observe(long nanos, long taken) {
    if (lastTaken < 0 || taken < lastTaken) {
      lastNanos = nanos;
      lastTaken = taken;
      return;
    }
    long elapsed = nanos - lastNanos;
    if (elapsed < MIN_INTERVAL_NANOS) {
      return;
    }
    double sample = (taken - lastTaken) / (double) elapsed;
    rate = rate < 0 ? sample : ALPHA * sample + (1 - ALPHA) * rate;
    lastNanos = nanos;
    lastTaken = taken;
  }

  /** IDs per second, or a negative number before the first measurement. */
  synchronized double idsPerSecond() {
    return rate < 0 ? -1 : rate * 1e9;
  }

  /** The DC block to reserve next for {@code d}. */
  synchronized long blockSize(SequenceDefinition d) {
    return blockSize(rate, targetRunwayNanos, d);
  }

  static long blockSize(double idsPerNano, long targetRunwayNanos, SequenceDefinition d) {
    long max = d.dcBlockSize();
    long min = Math.min(max, d.nodeBlockSize() > max / 10 ? max : d.nodeBlockSize() * 10);
    if (idsPerNano < 0) {
      return min; // nothing measured yet: start small, as Leaf's segments do
    }
    double wanted = idsPerNano * targetRunwayNanos;
    return wanted >= max ? max : Math.max(min, (long) wanted);
  }
}
