package dev.idgen.core.store.cassandra;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.core.RunwayPolicy;
import dev.idgen.core.SequenceDefinition;
import java.time.Duration;

/**
 * A datacenter's consumption rate of one stripe, learned from the pool's {@code taken} counter (IDs ever
 * handed to servers of that datacenter) each time this process reserves from it, and the pool size that
 * rate asks for: a {@link RunwayPolicy} with the <em>isolation runway</em>, capped by the sequence's
 * {@code dc_block_size}. The pool is refilled as soon as it holds less than the isolation runway at this
 * rate, so a datacenter cut off from the others at the worst moment still has that runway in its pool.
 * Until a rate is measured, the pool is kept at ten of the latest node reservations: a quiet datacenter
 * reserves little (IDs stay short and dense), a busy one grows to hours within a few refills.
 *
 * <p>{@code taken} grows in steps (a server's reservation covers minutes of its traffic), so the rate is
 * measured over intervals of at least {@link #MIN_INTERVAL_NANOS} (a server's refill steps are 75 s apart
 * at the default outage runway), and an interval restarts after each reservation of this process that grows
 * its reserve (more than twice the previous one): a fill is no consumption and would inflate the rate
 * manyfold. Other servers' fills still count, for as long as the moving average remembers them.
 *
 * <p>Threads: all methods synchronize on this object; it is touched once per node reservation.
 */
@ThreadSafe
final class DcRate {
  /** Weight of the newest interval in the moving average. */
  private static final double ALPHA = 0.3;
  /** Intervals shorter than this are merged into the next one: too short to average the steps out. */
  static final long MIN_INTERVAL_NANOS = 60_000_000_000L;
  /** The pool's smallest low-water mark, in node reservations. */
  private static final int MIN_NODE_RESERVATIONS = 10;

  private final long runwayNanos;
  private final double step;

  @GuardedBy("this") private long lastNanos;
  @GuardedBy("this") private long lastTaken = -1;
  /** IDs per nanosecond; negative until a first interval was measured. */
  @GuardedBy("this") private double rate = -1;
  /** The latest node reservation's size. */
  @GuardedBy("this") private long lastRequest = 1;
  /** The next observation starts a new interval instead of ending one (it follows a fill). */
  @GuardedBy("this") private boolean restart = true;

  DcRate(Duration isolationRunway, double step) {
    this.runwayNanos = isolationRunway.toNanos();
    this.step = step;
  }

  /** Records that the pool's {@code taken} counter read {@code taken} at {@code nanos}. */
  synchronized void observe(long nanos, long taken) {
    if (restart || lastTaken < 0 || taken < lastTaken) {
      restart = false;
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

  /**
   * Records a node reservation of {@code size} IDs, before it is made. One more than twice the previous is
   * this server growing its reserve (a fill, not consumption): the measurement restarts after it, so that
   * fills never read as rate.
   */
  synchronized void request(long size) {
    if (size > 2 * lastRequest) {
      restart = true;
    }
    lastRequest = Math.max(1, size);
  }

  /** IDs per second, or a negative number before the first measurement. */
  synchronized double idsPerSecond() {
    return rate < 0 ? -1 : rate * 1e9;
  }

  /** Refill the pool of {@code d} when it holds fewer IDs than this. */
  synchronized long lowWater(SequenceDefinition d) {
    return policy().lowWater(rate, d.dcBlockSize());
  }

  /** How many IDs to move from the global cursor into a pool of {@code d} that holds {@code held}. */
  synchronized long refillSize(SequenceDefinition d, long held) {
    RunwayPolicy policy = policy();
    long cap = d.dcBlockSize();
    return policy.refillSize(policy.lowWater(rate, cap), Math.min(held, cap), cap);
  }

  @GuardedBy("this")
  private RunwayPolicy policy() {
    long min = lastRequest > Long.MAX_VALUE / MIN_NODE_RESERVATIONS ? Long.MAX_VALUE : lastRequest * MIN_NODE_RESERVATIONS;
    return new RunwayPolicy(runwayNanos, step, min);
  }
}
