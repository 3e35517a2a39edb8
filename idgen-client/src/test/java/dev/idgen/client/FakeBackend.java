package dev.idgen.client;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The state a cluster of fake servers shares: per sequence, a counter that hands out each ID once,
 * and the record of every range leased, so that tests can check that each ID a client handed out was
 * leased by a server.
 */
final class FakeBackend {

  /** A range leased by a server. */
  record Leased(long first, long count, long stride) {
    boolean contains(long id) {
      return id >= first && id <= first + (count - 1) * stride && (id - first) % stride == 0;
    }
  }

  private static final class Sequence {
    final long start;
    final long stride;
    final long max;
    long nextIndex;
    final List<Leased> leased = new ArrayList<>();

    Sequence(long start, long stride, long max) {
      this.start = start;
      this.stride = stride;
      this.max = max;
    }
  }

  private final ConcurrentMap<String, Sequence> sequences = new ConcurrentHashMap<>();

  /** Creates a dense sequence starting at 1 with no maximum. */
  FakeBackend create(String name) {
    return create(name, 1, 1, Long.MAX_VALUE);
  }

  /** Creates a sequence of IDs {@code start + i × stride}, all at most {@code max}. */
  FakeBackend create(String name, long start, long stride, long max) {
    sequences.put(name, new Sequence(start, stride, max));
    return this;
  }

  boolean exists(String name) {
    return sequences.containsKey(name);
  }

  /**
   * Leases up to {@code count} new IDs as {@code pieces} ranges (fewer if there are not enough IDs):
   * an empty list when the sequence is used up.
   */
  List<Leased> allocate(String name, long count, int pieces) {
    Sequence s = sequences.get(name);
    synchronized (s) {
      long left = (s.max - s.start) / s.stride + 1 - s.nextIndex;
      long n = Math.min(count, left);
      List<Leased> out = new ArrayList<>();
      long piece = Math.max(1, (n + pieces - 1) / pieces);
      for (long done = 0; done < n; done += piece) {
        long k = Math.min(piece, n - done);
        Leased r = new Leased(s.start + s.nextIndex * s.stride, k, s.stride);
        s.nextIndex += k;
        s.leased.add(r);
        out.add(r);
      }
      return out;
    }
  }

  /** Every range leased so far for {@code name}, ordered by first ID. */
  List<Leased> leased(String name) {
    Sequence s = sequences.get(name);
    synchronized (s) {
      List<Leased> copy = new ArrayList<>(s.leased);
      copy.sort(Comparator.comparingLong(Leased::first));
      return copy;
    }
  }

  /** IDs leased so far for {@code name}. */
  long leasedIds(String name) {
    return leased(name).stream().mapToLong(Leased::count).sum();
  }

  /**
   * Whether {@code id} lies in one of {@code ranges}, sorted by first ID (ranges of one sequence never
   * interleave: each covers consecutive indexes).
   */
  static boolean contains(List<Leased> ranges, long id) {
    int lo = 0;
    int hi = ranges.size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      Leased r = ranges.get(mid);
      if (r.first() > id) {
        hi = mid - 1;
      } else if (r.contains(id)) {
        return true;
      } else {
        lo = mid + 1;
      }
    }
    return false;
  }
}
