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
 * not IDs. {@link #takeAll(long)}, a bulk caller's fast path, is a bounded compare-and-set on the same
 * index that never takes fewer IDs than asked for.
 *
 * <p>{@code refillAt} is the index whose taker asks the source to check whether the next lease should
 * be requested (see {@link Refiller}); {@code -1} for none. It is fixed before the lease is
 * published through a volatile write, and never changes.
 *
 * <p>{@link #expire()} ends a lease early, when its range's {@code valid_for} ran out: one
 * {@code getAndAdd(count)} on the same counter moves the index past the end in a single atomic step.
 * A {@code take} linearized before it got its indexes before the expiry (those below {@code count}
 * are IDs, handed out in time); one linearized after it gets an index {@code >= count}, not an ID,
 * and goes to the slow path like a caller that found the lease used up. The fast path reads no
 * clock and no field that {@code take} did not already read: expiry costs it nothing.
 *
 * <p>{@code expires} and {@code expiresAt} are those of the range (ticker time), fixed like
 * {@code refillAt}: a bulk caller that took IDs and waited checks them before it returns the IDs, even
 * once the lease was replaced and no task will {@link #expire()} it any more.
 */
final class Lease {
  private static final VarHandle TAKEN;

  /** How often {@link #takeAll} retries its compare-and-set before it leaves the caller to the slow path. */
  private static final int TAKE_ALL_ATTEMPTS = 8;

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
  /** Whether the range has a {@code valid_for}; if so its IDs are not to be handed out from {@code expiresAt} on. */
  final boolean expires;
  final long expiresAt;

  /** Indexes handed out so far, possibly past {@code count}; only ever updated through TAKEN. */
  @SuppressWarnings("unused")
  private volatile long taken;

  /**
   * The value of {@code taken} when the lease expired, {@code -1} while it has not. Written once, by
   * {@link #expire()}, and read by {@link #used()}, {@link #remaining()} and {@link #expired()}: all
   * called under the owning source's lock (tests read it after the threads they check have ended).
   * The fast path never reads it.
   */
  private long takenAtExpiry = -1;

  Lease(long first, long stride, long count, long refillAt, boolean expires, long expiresAt) {
    this.first = first;
    this.stride = stride;
    this.count = count;
    this.refillAt = refillAt;
    this.expires = expires;
    this.expiresAt = expiresAt;
  }

  /** A lease with nothing in it: what a source holds before its first lease and after close. */
  static Lease empty() {
    return new Lease(0, 1, 0, -1, false, 0);
  }

  /** Whether the range's {@code valid_for} has run out at ticker time {@code now}. */
  boolean dueAt(long now) {
    return expires && now - expiresAt >= 0;
  }

  /**
   * Takes {@code n} consecutive indexes and returns the first. Those below {@link #count} are the
   * caller's; the rest are not IDs.
   */
  long take(long n) {
    return (long) TAKEN.getAndAdd(this, n);
  }

  /**
   * Takes {@code n >= 1} consecutive indexes if that many IDs are left, and returns the first; else
   * takes nothing and returns {@code -1}, as it does when other threads' takes made its compare-and-set
   * fail {@value #TAKE_ALL_ATTEMPTS} times in a row. A bulk caller's fast path takes all it needs or
   * nothing: what it takes without the source's lock counts as handed out at once, so it must be what
   * it returns.
   */
  long takeAll(long n) {
    long t = taken;
    for (int attempt = 0; attempt < TAKE_ALL_ATTEMPTS; attempt++) {
      if (t > count - n) {
        return -1;
      }
      long witness = (long) TAKEN.compareAndExchange(this, t, t + n);
      if (witness == t) {
        return t;
      }
      t = witness;
    }
    return -1;
  }

  /** Indexes taken so far, possibly past {@code count} (always, once expired). */
  long taken() {
    return taken;
  }

  /**
   * Makes every index not yet taken invalid, in one atomic step, and returns how many IDs that
   * dropped; {@code 0} if the lease had already expired. Only under the owning source's lock.
   */
  long expire() {
    if (takenAtExpiry >= 0) {
      return 0;
    }
    long before = (long) TAKEN.getAndAdd(this, count);
    takenAtExpiry = before;
    return Math.max(0, count - before);
  }

  /** Whether {@link #expire()} ended this lease. */
  boolean expired() {
    return takenAtExpiry >= 0;
  }

  /** Indexes taken before the lease expired ({@code -1} if it has not): those below {@code count} were IDs. */
  long takenAtExpiry() {
    return takenAtExpiry;
  }

  /** IDs not yet taken; none once expired. */
  long remaining() {
    return takenAtExpiry >= 0 ? 0 : Math.max(0, count - taken);
  }

  /** IDs taken (before the expiry, if the lease expired), at most {@code count}. */
  long used() {
    return Math.min(count, takenAtExpiry >= 0 ? takenAtExpiry : taken);
  }

  /** The ID at index {@code i}. */
  long id(long i) {
    return first + i * stride;
  }
}
