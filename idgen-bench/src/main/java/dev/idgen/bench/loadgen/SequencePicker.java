package dev.idgen.bench.loadgen;

import com.google.errorprone.annotations.ThreadSafe;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks the sequence of each call among {@code n} (by index, 0 to n − 1): uniformly, or by a Zipf law in
 * which the k-th sequence (k = 1 … n) is picked in proportion to 1 / k<sup>s</sup>, so that a few sequences
 * take most calls, as a few tables take most inserts. Immutable after construction; thread-safe (each
 * thread draws from its own {@link ThreadLocalRandom}).
 */
@ThreadSafe
final class SequencePicker {

  /** How calls are spread over the sequences. */
  enum Distribution { uniform, zipf }

  private final int n;
  /** Zipf only: cumulative[k] = P(index ≤ k); the last entry is 1. null: uniform. */
  private final double[] cumulative;

  private SequencePicker(int n, double[] cumulative) {
    this.n = n;
    this.cumulative = cumulative;
  }

  static SequencePicker uniform(int n) {
    checkCount(n);
    return new SequencePicker(n, null);
  }

  /** A Zipf law of exponent {@code s} over {@code n} sequences (s = 1: the classic 1/k). */
  static SequencePicker zipf(int n, double s) {
    checkCount(n);
    if (!(s > 0) || Double.isInfinite(s)) {
      throw new IllegalArgumentException("zipf exponent: " + s + " (expected: > 0, finite)");
    }
    double[] cumulative = new double[n];
    double sum = 0;
    for (int k = 0; k < n; k++) {
      sum += 1 / Math.pow(k + 1, s);
      cumulative[k] = sum;
    }
    for (int k = 0; k < n; k++) {
      cumulative[k] /= sum;
    }
    cumulative[n - 1] = 1;
    return new SequencePicker(n, cumulative);
  }

  static SequencePicker of(Distribution distribution, int n, double zipfExponent) {
    return distribution == Distribution.zipf ? zipf(n, zipfExponent) : uniform(n);
  }

  private static void checkCount(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("sequences: " + n + " (expected: >= 1)");
    }
  }

  int size() {
    return n;
  }

  /** The probability of index {@code k} (for reports and tests). */
  double probability(int k) {
    if (cumulative == null) {
      return 1.0 / n;
    }
    return k == 0 ? cumulative[0] : cumulative[k] - cumulative[k - 1];
  }

  /** The index of the next call's sequence. */
  int next() {
    if (n == 1) {
      return 0;
    }
    ThreadLocalRandom random = ThreadLocalRandom.current();
    if (cumulative == null) {
      return random.nextInt(n);
    }
    int i = Arrays.binarySearch(cumulative, random.nextDouble());
    // Not found (the usual case): -(insertion point) - 1, the first entry above the draw.
    return Math.min(i >= 0 ? i + 1 : -i - 1, n - 1);
  }
}
