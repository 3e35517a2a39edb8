package dev.idgen.chaos;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * The checker's arithmetic on runs of IDs ({@code first, first + stride, …}) and on intervals of stripe indexes
 * ({@code long[] {lo, hi, …}}): overflow-safe, stateless.
 */
final class IdMath {
  private IdMath() {}

  /** The last of {@code count} IDs {@code first, first + stride, …}, or Long.MIN_VALUE if it overflows. */
  static long lastId(long first, long count, long stride) {
    try {
      return Math.addExact(first, Math.multiplyExact(count - 1, stride));
    } catch (ArithmeticException e) {
      return Long.MIN_VALUE;
    }
  }

  /** How many of the {@code count} IDs {@code first, first + stride, …} are at or below {@code floor}. */
  static long idsAtOrBelow(long first, long count, long stride, long floor) {
    if (count < 1 || stride < 1 || first > floor) {
      return 0;
    }
    try {
      return Math.min(count, Math.subtractExact(floor, first) / stride + 1);
    } catch (ArithmeticException e) {
      return count;
    }
  }

  static long overlap(long lo, long hi, long lo2, long hi2) {
    long a = Math.max(lo, lo2);
    long b = Math.min(hi, hi2);
    return b < a ? 0 : b - a + 1;
  }

  /** Sorted, merged intervals (adjacent ones joined). */
  static List<long[]> union(List<long[]> intervals) {
    List<long[]> sorted = new ArrayList<>(intervals);
    sorted.sort(Comparator.comparingLong(x -> x[0]));
    List<long[]> merged = new ArrayList<>();
    for (long[] iv : sorted) {
      long[] lastOne = merged.isEmpty() ? null : merged.get(merged.size() - 1);
      if (lastOne != null && iv[0] <= lastOne[1] + 1) {
        lastOne[1] = Math.max(lastOne[1], iv[1]);
      } else {
        merged.add(new long[] {iv[0], iv[1]});
      }
    }
    return merged;
  }

  /** How many indexes of {@code [lo, hi]} lie in the merged, sorted {@code union}. */
  static long covered(List<long[]> union, long lo, long hi) {
    int a = 0;
    int b = union.size() - 1;
    int first = union.size();
    while (a <= b) { // the first interval ending at or after lo
      int mid = (a + b) >>> 1;
      if (union.get(mid)[1] >= lo) {
        first = mid;
        b = mid - 1;
      } else {
        a = mid + 1;
      }
    }
    long covered = 0;
    for (int i = first; i < union.size() && union.get(i)[0] <= hi; i++) {
      covered += overlap(lo, hi, union.get(i)[0], union.get(i)[1]);
    }
    return covered;
  }

  /** {@code n} empty lists of intervals, one per stripe. */
  static List<List<long[]>> emptyStripes(int n) {
    List<List<long[]>> l = new ArrayList<>();
    for (int k = 0; k < n; k++) {
      l.add(new ArrayList<>());
    }
    return l;
  }

  /** A run-clock time for people: seconds with three decimals, {@code ?} if not recorded. */
  static String secs(long nanos) {
    return nanos == Long.MIN_VALUE ? "?" : String.format(Locale.ROOT, "%.3fs", nanos / 1e9);
  }
}
