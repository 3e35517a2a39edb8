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

  /** With up to {@value #EXAMPLES} examples of IDs handed out twice, for the report. */
  record Result(long duplicates, long outOfBounds, List<String> examples) {}

  static final int EXAMPLES = 10;

  static Result check(Map<String, ? extends Collection<long[]>> received, List<DiskSoak.Seq> sequences) {
    long duplicates = 0;
    long outOfBounds = 0;
    List<String> examples = new ArrayList<>();
    for (DiskSoak.Seq seq : sequences) {
      Collection<long[]> ranges = received.get(seq.name());
      if (ranges == null) {
        continue;
      }
      List<long[]> sorted = new ArrayList<>(ranges);
      sorted.sort(Comparator.comparingLong(r -> r[0]));
      long highest = Long.MIN_VALUE; // the highest ID seen so far in the sweep
      long[] highestRange = null;
      for (long[] r : sorted) {
        long last = lastId(r[0], r[1], 1);
        if (r[2] != 1 || r[1] < 1 || r[0] < 1 || last == Long.MIN_VALUE || last > seq.max()) {
          outOfBounds += Math.max(1, r[1]);
          continue;
        }
        if (r[0] <= highest) {
          duplicates += Math.min(last, highest) - r[0] + 1;
          if (examples.size() < EXAMPLES) {
            examples.add(seq.name() + " " + describe(r) + " overlaps " + describe(highestRange));
          }
        }
        if (last > highest) {
          highest = last;
          highestRange = r;
        }
      }
    }
    return new Result(duplicates, outOfBounds, List.copyOf(examples));
  }

  /** {@code [first..last]}, and when it was received (a fourth element: ms since the soak began), if known. */
  private static String describe(long[] r) {
    return "[" + r[0] + ".." + lastId(r[0], r[1], 1) + "]" + (r.length > 3 ? " received at " + r[3] + " ms" : "");
  }
}
