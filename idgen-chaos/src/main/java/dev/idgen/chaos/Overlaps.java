package dev.idgen.chaos;

import static dev.idgen.chaos.IdMath.lastId;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * The disk soak's check of what its callers received: per sequence, how many IDs were handed out more than
 * once, and how many lie outside the sequence's {@code [1, max]}. Ranges are {@code long[] {first, count,
 * stride}} with stride 1 (the soak's sequences have one stripe; a range of another stride is counted as out
 * of bounds, so that it cannot slip past the check). Stateless.
 */
final class Overlaps {
  private Overlaps() {}

  record Result(long duplicates, long outOfBounds) {}

  static Result check(Map<String, ? extends Collection<long[]>> received, List<DiskSoak.Seq> sequences) {
    long duplicates = 0;
    long outOfBounds = 0;
    for (DiskSoak.Seq seq : sequences) {
      Collection<long[]> ranges = received.get(seq.name());
      if (ranges == null) {
        continue;
      }
      List<long[]> sorted = new ArrayList<>(ranges);
      sorted.sort(Comparator.comparingLong(r -> r[0]));
      long highest = Long.MIN_VALUE; // the highest ID seen so far in the sweep
      for (long[] r : sorted) {
        long last = lastId(r[0], r[1], 1);
        if (r[2] != 1 || r[1] < 1 || r[0] < 1 || last == Long.MIN_VALUE || last > seq.max()) {
          outOfBounds += Math.max(1, r[1]);
          continue;
        }
        if (r[0] <= highest) {
          duplicates += Math.min(last, highest) - r[0] + 1;
        }
        highest = Math.max(highest, last);
      }
    }
    return new Result(duplicates, outOfBounds);
  }
}
