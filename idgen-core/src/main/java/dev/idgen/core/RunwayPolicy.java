package dev.idgen.core;

import com.google.errorprone.annotations.Immutable;
import java.time.Duration;

/**
 * How a tier sizes its reserve by time: the reserve exists to ride out the failure of the tier above it,
 * so what it holds is a duration at the rate it is consumed, not a count.
 *
 * <p>The rule, for a tier consuming {@code rate} IDs per second with a runway {@code R}, a step {@code s}
 * and a cap {@code C} (the sequence's block size for that tier):
 * <pre>
 *   low water  L = clamp(rate × R, min, C / (1 + s))     refill when fewer than L are held
 *   refill       = L + max(min, s × L) − held           so a refill tops the reserve up to about L × (1 + s)
 *                  (at least 1, at most C − held)
 * </pre>
 * A refill starts the moment the reserve falls below {@code L}, so when the tier above fails at the worst
 * moment (just as a refill was due) the reserve still holds {@code L} IDs: the <em>guaranteed runway</em>
 * is {@code L / rate}, which is {@code R} unless the cap binds ({@code C / ((1 + s) × rate)} then). What
 * the tier holds, and so what a crash abandons, stays below {@code L × (1 + s) + min}, i.e. about
 * {@code (1 + s) × R} of consumption, and never above {@code C}. A larger step means fewer, larger
 * reservations (store writes) and a larger gap on a crash.
 *
 * <p>Sequences with a max also bound every reservation by what is left of the space
 * ({@link #boundedByRemaining}), so that no tier ever takes more than a small fraction of it.
 *
 * <p>Immutable and stateless: the rate is measured by the caller.
 *
 * @param runwayNanos how long the reserve should last at the measured rate (R)
 * @param step how much beyond the low-water mark a refill reserves, as a fraction of it (s)
 * @param minReserve the smallest low-water mark and the smallest step, in IDs
 */
@Immutable
public record RunwayPolicy(long runwayNanos, double step, long minReserve) {

  /**
   * The largest fraction of what is left of a stripe that one reservation may take: a sequence with a
   * max (e.g. a 32-bit one) is never reserved far ahead of its use. 1 % of a fresh 32-bit stripe is
   * 21 million IDs: a day's runway up to about 250 IDs/s, shrinking as the space is used.
   */
  public static final int MAX_PERCENT_OF_REMAINING = 1;
  /** Below this many IDs, the fraction no longer shrinks reservations (the last 100,000 IDs go 1,000 at a time). */
  public static final long MIN_BOUNDED_RESERVATION = 1_000;

  public RunwayPolicy {
    if (runwayNanos <= 0) {
      throw new IllegalArgumentException("runway: " + runwayNanos + " ns (expected: > 0)");
    }
    if (!(step > 0 && step <= 4)) {
      throw new IllegalArgumentException("step: " + step + " (expected: > 0 and <= 4)");
    }
    if (minReserve < 1) {
      throw new IllegalArgumentException("minReserve: " + minReserve + " (expected: >= 1)");
    }
  }

  public static RunwayPolicy of(Duration runway, double step, long minReserve) {
    return new RunwayPolicy(runway.toNanos(), step, minReserve);
  }

  /**
   * The low-water mark for a tier consuming {@code idsPerNano} (negative: not measured yet, and then the
   * minimum) with the cap {@code cap}.
   */
  public long lowWater(double idsPerNano, long cap) {
    long capLow = maxLowWater(cap);
    if (idsPerNano < 0) {
      return Math.min(minReserve, capLow);
    }
    double exact = idsPerNano * runwayNanos;
    double wanted = Math.ceil(exact - exact * 1e-12); // 200 IDs/s for 300 s is 60,000, not 60,001
    long low = wanted >= capLow ? capLow : Math.max(minReserve, (long) wanted);
    return Math.min(low, capLow);
  }

  /** The largest low-water mark under {@code cap}: a refill on top of it stays within the cap. */
  public long maxLowWater(long cap) {
    return Math.max(1, (long) (cap / (1 + step)));
  }

  /** How many IDs to reserve when {@code held} is below {@code lowWater}, for a tier capped at {@code cap}. */
  public long refillSize(long lowWater, long held, long cap) {
    long stepIds = Math.max(minReserve, (long) Math.ceil(lowWater * step));
    long wanted = lowWater - held + stepIds; // no overflow: both terms are below cap <= MAX_BLOCK_SIZE
    return Math.max(1, Math.min(wanted, cap - held));
  }

  /**
   * The guaranteed runway in seconds of a tier whose low-water mark is {@code lowWater} at {@code idsPerSecond};
   * infinite when nothing is being consumed.
   */
  public static double guaranteedSeconds(long lowWater, double idsPerSecond) {
    return idsPerSecond > 0 ? lowWater / idsPerSecond : Double.POSITIVE_INFINITY;
  }

  /**
   * {@code wanted}, bounded by what is left of the stripe ({@code remaining} IDs): at most
   * {@link #MAX_PERCENT_OF_REMAINING} percent of it, but not less than {@link #MIN_BOUNDED_RESERVATION} (or what
   * is left). For a 64-bit sequence this never binds in practice.
   */
  public static long boundedByRemaining(long wanted, long remaining) {
    long limit = Math.max(MIN_BOUNDED_RESERVATION, remaining / 100 * MAX_PERCENT_OF_REMAINING);
    return Math.min(wanted, Math.min(remaining, limit));
  }
}
