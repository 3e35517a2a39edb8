package dev.idgen.core.store.cassandra;

import java.util.ArrayList;
import java.util.List;

/**
 * Arithmetic on a pool's blocks: a list of disjoint {@code [from, to)} index intervals, flattened
 * ({@code from0, to0, from1, to1, ...}), as the {@code blocks} column of {@code dc_pools} holds them.
 * Pure functions of immutable inputs; each returns a new list.
 */
final class Blocks {
  private Blocks() {}

  /** The pool's intervals without the first {@code n} IDs (taken from the first interval). */
  static List<Long> consume(List<Long> blocks, long n) {
    List<Long> rest = new ArrayList<>(blocks);
    long from = rest.get(0) + n;
    if (from >= rest.get(1)) {
      rest.remove(0);
      rest.remove(0);
    } else {
      rest.set(0, from);
    }
    return rest;
  }

  /** The intervals cut at {@code minIndex}. */
  static List<Long> trim(List<Long> blocks, long minIndex) {
    List<Long> kept = new ArrayList<>();
    for (int i = 0; i < blocks.size(); i += 2) {
      long from = Math.max(blocks.get(i), minIndex);
      long to = blocks.get(i + 1);
      if (from < to) {
        kept.add(from);
        kept.add(to);
      }
    }
    return kept;
  }

  /** Whether any index of {@code [from, to)} is in the intervals. */
  static boolean overlaps(List<Long> blocks, long from, long to) {
    for (int i = 0; i < blocks.size(); i += 2) {
      if (blocks.get(i) < to && from < blocks.get(i + 1)) {
        return true;
      }
    }
    return false;
  }

  /** Whether the intervals hold any index of the other intervals. */
  static boolean overlaps(List<Long> blocks, List<Long> other) {
    for (int i = 0; i < other.size(); i += 2) {
      if (overlaps(blocks, other.get(i), other.get(i + 1))) {
        return true;
      }
    }
    return false;
  }

  /** Two disjoint interval lists as one, in index order (returned IDs come first: they are the lowest). */
  static List<Long> merge(List<Long> a, List<Long> b) {
    List<long[]> all = new ArrayList<>();
    for (List<Long> list : List.of(a, b)) {
      for (int i = 0; i < list.size(); i += 2) {
        all.add(new long[] {list.get(i), list.get(i + 1)});
      }
    }
    all.sort((x, y) -> Long.compare(x[0], y[0]));
    List<Long> out = new ArrayList<>();
    for (long[] r : all) {
      int n = out.size();
      if (n > 0 && out.get(n - 1) == r[0]) {
        out.set(n - 1, r[1]); // adjacent: one interval
      } else {
        out.add(r[0]);
        out.add(r[1]);
      }
    }
    return out;
  }

  /** How many IDs the intervals hold. */
  static long size(List<Long> blocks) {
    long n = 0;
    for (int i = 0; i < blocks.size(); i += 2) {
      n += blocks.get(i + 1) - blocks.get(i);
    }
    return n;
  }
}
