package dev.idgen.core.store.cassandra;

import java.util.ArrayList;
import java.util.List;

/**
 * The record, in a pool row, of the DC blocks appended to it: the last {@link #CAPACITY} blocks as
 * {@code [from, to)} index pairs, and {@code below}, the highest end of any block dropped from the
 * record. A block is known appended if it is listed; a block not listed whose end is at or below
 * {@code below} may have been appended and dropped from the list, so it is never appended again.
 * Blocks come from the global cursor in nearly increasing order, so that case needs
 * {@link #CAPACITY} later blocks to be appended before an earlier one: rare, and a counted loss.
 * Immutable.
 */
record Appended(List<Long> pairs, long below) {
  static final int CAPACITY = 32;
  static final Appended EMPTY = new Appended(List.of(), Long.MIN_VALUE);

  Appended {
    pairs = List.copyOf(pairs);
  }

  boolean contains(long from, long to) {
    for (int i = 0; i < pairs.size(); i += 2) {
      if (pairs.get(i) == from && pairs.get(i + 1) == to) {
        return true;
      }
    }
    return false;
  }

  boolean mayContain(long from, long to) {
    return to <= below;
  }

  Appended with(long from, long to) {
    List<Long> next = new ArrayList<>(pairs);
    long newBelow = below;
    while (next.size() >= 2 * CAPACITY) {
      newBelow = Math.max(newBelow, next.get(1));
      next.remove(0);
      next.remove(0);
    }
    next.add(from);
    next.add(to);
    return new Appended(next, newBelow);
  }
}
