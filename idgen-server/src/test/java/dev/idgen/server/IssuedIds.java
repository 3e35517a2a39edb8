package dev.idgen.server;

import dev.idgen.api.v1.IdRange;
import java.util.ArrayList;
import java.util.List;

/**
 * Every range a test received for one sequence, checked without expanding them: duplicates (extra copies of an
 * ID, over all ranges), IDs outside {@code [start, max]} or off the sequence's stride, and the number of
 * distinct IDs. Thread-safe (synchronized): concurrent callers add to one instance.
 */
final class IssuedIds {
  private final long start;
  private final long max;
  private final int stripes;
  private final List<long[]> intervals = new ArrayList<>(); // {stripe, firstIndex, lastIndex}
  private long outOfBounds;
  private long ids;

  IssuedIds(long start, long max, int stripes) {
    this.start = start;
    this.max = max;
    this.stripes = stripes;
  }

  synchronized void add(IdRange range) {
    ids += range.getCount();
    long last;
    try {
      last = Math.addExact(range.getFirst(), Math.multiplyExact(range.getCount() - 1, range.getStride()));
    } catch (ArithmeticException overflow) {
      outOfBounds += range.getCount();
      return;
    }
    if (range.getCount() < 1 || range.getStride() != stripes || range.getFirst() < start || last > max) {
      outOfBounds += Math.max(1, range.getCount());
      return;
    }
    long offset = range.getFirst() - start;
    intervals.add(new long[] {offset % stripes, offset / stripes, offset / stripes + range.getCount() - 1});
  }

  synchronized void addAll(List<IdRange> ranges) {
    ranges.forEach(this::add);
  }

  /** IDs received, copies included. */
  synchronized long ids() {
    return ids;
  }

  synchronized long outOfBounds() {
    return outOfBounds;
  }

  /** Extra copies: 0 when every ID was received at most once. */
  synchronized long duplicates() {
    long duplicates = 0;
    for (long[][] stripe : byStripe()) {
      long maxLast = -1;
      for (long[] iv : stripe) {
        if (iv[1] <= maxLast) {
          duplicates += Math.min(iv[2], maxLast) - iv[1] + 1;
        }
        maxLast = Math.max(maxLast, iv[2]);
      }
    }
    return duplicates;
  }

  /** Distinct in-bounds IDs received. */
  synchronized long distinct() {
    long distinct = 0;
    for (long[][] stripe : byStripe()) {
      long maxLast = -1;
      for (long[] iv : stripe) {
        long from = Math.max(iv[1], maxLast + 1);
        if (from <= iv[2]) {
          distinct += iv[2] - from + 1;
        }
        maxLast = Math.max(maxLast, iv[2]);
      }
    }
    return distinct;
  }

  /** How many IDs [start, max] holds. */
  long space() {
    return max - start + 1;
  }

  private long[][][] byStripe() {
    long[][][] result = new long[stripes][][];
    for (int k = 0; k < stripes; k++) {
      int stripe = k;
      result[k] = intervals.stream().filter(iv -> iv[0] == stripe)
          .sorted((a, b) -> Long.compare(a[1], b[1])).toArray(long[][]::new);
    }
    return result;
  }
}
