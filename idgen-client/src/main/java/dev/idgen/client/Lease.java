package dev.idgen.client;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One leased range being handed out: the immutable {@code (first, stride, count)} of the range plus
 * the atomic index of the next ID to hand out, as in Hazelcast's {@code AutoBatcher} block.
 *
 * <p>Keeping the index inside the lease is what makes replacing the lease safe without a lock: a
 * thread that read the old lease just before it was replaced still takes indexes from the old
 * lease's own counter, which is past its end, so it cannot take an ID of the new lease at an index
 * meant for the old one. {@link #take(long)} is a single {@code getAndAdd} (wait-free); the index
 * may run past {@code count} when threads race at the end of a lease, and those indexes are simply
 * not IDs.
 *
 * <p>{@code refillAt} is the index whose taker asks the source to check whether the next lease should
 * be requested (see {@link LeasedIdSource}); {@code -1} for none. It is fixed before the lease is
 * published through a volatile write, and never changes.
 */
final class Lease {
  private static final VarHandle TAKEN;

  static {
    try {
      TAKEN = MethodHandles.lookup().findVarHandle(Lease.class, "taken", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final long first;
  final long stride;
  final long count;
  final long refillAt;

  /** Indexes handed out so far, possibly past {@code count}; only ever updated through TAKEN. */
  @SuppressWarnings("unused")
  private volatile long taken;

  Lease(long first, long stride, long count, long refillAt) {
    this.first = first;
    this.stride = stride;
    this.count = count;
    this.refillAt = refillAt;
  }

  /** A lease with nothing in it: what a source holds before its first lease and after close. */
  static Lease empty() {
    return new Lease(0, 1, 0, -1);
  }

  /**
   * Takes {@code n} consecutive indexes and returns the first. Those below {@link #count} are the
   * caller's; the rest are not IDs.
   */
  long take(long n) {
    return (long) TAKEN.getAndAdd(this, n);
  }

  /** Indexes taken so far, possibly past {@code count}. */
  long taken() {
    return taken;
  }

  /** IDs not yet taken. */
  long remaining() {
    return Math.max(0, count - taken);
  }

  /** IDs taken, at most {@code count}. */
  long used() {
    return Math.min(count, taken);
  }

  /** The ID at index {@code i}. */
  long id(long i) {
    return first + i * stride;
  }
}
