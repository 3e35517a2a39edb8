package dev.idgen.core;

import com.google.errorprone.annotations.Immutable;
import java.util.Collection;

/**
 * A run of IDs: {@code first, first + stride, …}, {@code count} of them. Immutable.
 *
 * <p>Every range the allocator produces lies inside one stripe of one sequence, so its last ID is at
 * most the sequence's maximum and never overflows.
 */
@Immutable
public record IdRange(long first, long count, long stride) {

  public IdRange {
    if (count < 1) {
      throw new IllegalArgumentException("count: " + count + " (expected: >= 1)");
    }
    if (stride < 1) {
      throw new IllegalArgumentException("stride: " + stride + " (expected: >= 1)");
    }
    // The last ID must be representable, so that callers never see a wrapped-around ID.
    try {
      Math.addExact(first, Math.multiplyExact(count - 1, stride));
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("range overflows: " + first + "+" + (count - 1) + "*" + stride, e);
    }
  }

  /** How many IDs {@code ranges} hold together. */
  public static long total(Collection<IdRange> ranges) {
    long n = 0;
    for (IdRange r : ranges) {
      n += r.count;
    }
    return n;
  }

  /** The last ID of the range. */
  public long last() {
    return first + (count - 1) * stride;
  }

  /** The {@code index}-th ID of the range, 0-based. */
  public long get(long index) {
    if (index < 0 || index >= count) {
      throw new IndexOutOfBoundsException("index: " + index + " (expected: 0 to " + (count - 1) + ")");
    }
    return first + index * stride;
  }

  /** Whether {@code id} is one of the range's IDs. */
  public boolean contains(long id) {
    return id >= first && id <= last() && (id - first) % stride == 0;
  }

  /** The first {@code n} IDs of this range ({@code 1 <= n <= count}). */
  public IdRange head(long n) {
    if (n < 1 || n > count) {
      throw new IllegalArgumentException("n: " + n + " (expected: 1 to " + count + ")");
    }
    return n == count ? this : new IdRange(first, n, stride);
  }

  /** This range without its first {@code n} IDs ({@code 0 <= n < count}). */
  public IdRange tail(long n) {
    if (n < 0 || n >= count) {
      throw new IllegalArgumentException("n: " + n + " (expected: 0 to " + (count - 1) + ")");
    }
    return n == 0 ? this : new IdRange(first + n * stride, count - n, stride);
  }

  /**
   * The IDs of this range above {@code floor}, or {@code null} if there are none: used to drop what an
   * {@code AdvanceSequence} put out of bounds.
   */
  public IdRange above(long floor) {
    if (first > floor) {
      return this;
    }
    if (last() <= floor) {
      return null;
    }
    long skip = (floor - first) / stride + 1; // IDs at or below the floor
    return tail(skip);
  }

  @Override
  public String toString() {
    return stride == 1
        ? "[" + first + ".." + last() + "]"
        : "[" + first + ".." + last() + " step " + stride + "]";
  }
}
