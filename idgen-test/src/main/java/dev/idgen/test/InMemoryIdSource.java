package dev.idgen.test;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.client.IdGenClientException;
import dev.idgen.client.IdSource;
import dev.idgen.client.IdSourceStats;
import io.grpc.Status;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * An {@link IdSource} without a server, for unit tests: it hands out {@code first}, {@code first + 1}, …
 * in the order callers take them, up to an optional {@code max}.
 *
 * <pre>{@code
 * InMemoryIdSource orders = InMemoryIdSource.startingAt("orders", 1000);
 * new OrderService(orders).place(order);   // the order gets ID 1000, the next one 1001
 * }</pre>
 *
 * <p>It keeps {@link IdSource}'s contracts: IDs are never handed out twice, {@link #next(int)} and
 * {@link #fill} check their arguments alike, and the failures are the library's
 * {@link IdGenClientException}s. Past {@code max} every call fails with reason {@code EXHAUSTED} (status
 * {@code OUT_OF_RANGE}), as a real source does; a bulk call that runs past it takes the IDs that are left
 * (a gap) and then fails. After {@link #close()} every call fails with reason {@code CLOSED}, as a real
 * source does once its client is closed. It never waits, so it never fails with {@code TIMED_OUT} and
 * {@link #tryNext()} is never empty.
 *
 * <p>Unlike a real source, its IDs are ordered: one thread sees them increase, and a bulk call gets
 * consecutive IDs. Code that relies on that will break against a server: see {@link IdSource}.
 *
 * <p>Threads: safe for any number. The next ID is one {@link AtomicLong}; each call takes its IDs with
 * one successful compare-and-set (retried when another caller got there first), so concurrent callers get
 * disjoint IDs without a lock. The counters of
 * {@link #stats()} are atomics too.
 */
@ThreadSafe
public final class InMemoryIdSource implements IdSource, AutoCloseable {
  /** The servers' rule for sequence names, as {@code IdGenClient.sequence} checks it. */
  private static final Pattern SEQUENCE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
  /** {@link #next}'s value once every ID is out: IDs are never negative. */
  private static final long EXHAUSTED = -1;

  private final String sequence;
  private final long first;
  private final long max;
  /**
   * The next ID to hand out, or {@link #EXHAUSTED} once {@code max} was taken (not {@code max + 1}, which
   * overflows when {@code max} is {@link Long#MAX_VALUE}).
   */
  private final AtomicLong next;
  private volatile boolean closed;
  private final AtomicLong idsServed = new AtomicLong();

  private InMemoryIdSource(String sequence, long first, long max) {
    if (sequence == null || !SEQUENCE_NAME.matcher(sequence).matches()) {
      throw new IllegalArgumentException("sequence name: '" + sequence
          + "' (expected: 1 to 64 characters from [A-Za-z0-9._-], starting with a letter or digit)");
    }
    if (first < 0) {
      throw new IllegalArgumentException("first: " + first + " (expected: >= 0, IDs are never negative)");
    }
    if (max < first) {
      throw new IllegalArgumentException("max: " + max + " (expected: >= first, " + first + ")");
    }
    this.sequence = sequence;
    this.first = first;
    this.max = max;
    this.next = new AtomicLong(first);
  }

  /**
   * Returns a source of {@code sequence} that hands out {@code first}, {@code first + 1}, … up to
   * {@link Long#MAX_VALUE}.
   *
   * @param sequence the sequence's name, as {@code IdGenClient.sequence} accepts it
   * @param first the first ID, {@code >= 0}
   * @return a new source
   * @throws IllegalArgumentException if the name is malformed or {@code first < 0}
   */
  public static InMemoryIdSource startingAt(String sequence, long first) {
    return new InMemoryIdSource(sequence, first, Long.MAX_VALUE);
  }

  /**
   * Returns a source of {@code sequence} that hands out {@code first} to {@code max}, both included, and
   * then fails with reason {@code EXHAUSTED}: to test what code does when a sequence runs out.
   *
   * @param sequence the sequence's name, as {@code IdGenClient.sequence} accepts it
   * @param first the first ID, {@code >= 0}
   * @param max the last ID, {@code >= first}
   * @return a new source
   * @throws IllegalArgumentException if the name is malformed, {@code first < 0} or {@code max < first}
   */
  public static InMemoryIdSource between(String sequence, long first, long max) {
    return new InMemoryIdSource(sequence, first, max);
  }

  @Override
  public String sequence() {
    return sequence;
  }

  @Override
  public long next() {
    long[] one = new long[1];
    take(one, 0, 1, false);
    return one[0];
  }

  @Override
  public OptionalLong tryNext() {
    return OptionalLong.of(next());
  }

  @Override
  public CompletableFuture<Long> nextAsync() {
    try {
      return CompletableFuture.completedFuture(next());
    } catch (IdGenClientException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public long[] next(int count) {
    if (count < 0) {
      throw new IllegalArgumentException("count: " + count + " (expected: >= 0)");
    }
    long[] ids = new long[count];
    take(ids, 0, count, false);
    return ids;
  }

  @Override
  public void fill(long[] ids, int from, int to) {
    Objects.checkFromToIndex(from, to, ids.length);
    take(ids, from, to, true);
  }

  /**
   * Returns the counters: {@link IdSourceStats#idsServed()} counts the IDs handed out; the others stay 0,
   * since this source leases nothing and never waits.
   *
   * @return the counters as of now
   */
  @Override
  public IdSourceStats stats() {
    return IdSourceStats.builder(sequence).idsServed(idsServed.get()).build();
  }

  /**
   * Makes every later call fail with reason {@code CLOSED}, as a real source does once its client is
   * closed. Idempotent.
   */
  @Override
  public void close() {
    closed = true;
  }

  /**
   * Writes consecutive IDs to {@code ids[from..to)}, or as many as are left before failing with EXHAUSTED.
   * {@code keepPartial}: whether the caller keeps the IDs written before such a failure (a fill does; a bulk
   * call's array is dropped, a gap), which decides whether they count as served.
   */
  private void take(long[] ids, int from, int to, boolean keepPartial) {
    if (closed) {
      throw IdGenClientException.of(sequence, IdGenClientException.Reason.CLOSED, null,
          "the InMemoryIdSource is closed");
    }
    int count = to - from;
    if (count == 0) {
      return;
    }
    long start;
    long taken;
    for (;;) {
      start = next.get();
      if (start == EXHAUSTED) {
        throw exhaustedFailure();
      }
      taken = Math.min(count, max - start + 1); // start <= max here, so no overflow
      long after = start + taken - 1 == max ? EXHAUSTED : start + taken;
      if (next.compareAndSet(start, after)) {
        break;
      }
    }
    for (int i = 0; i < taken; i++) {
      ids[from + i] = start + i;
    }
    if (taken < count) {
      if (keepPartial) {
        idsServed.addAndGet(taken);
      }
      throw exhaustedFailure(); // the IDs written are valid; the rest of the range is left as it was
    }
    idsServed.addAndGet(taken);
  }

  private IdGenClientException exhaustedFailure() {
    String what = "the sequence is exhausted: every ID from " + first + " to its max " + max + " was handed out";
    return IdGenClientException.of(sequence, IdGenClientException.Reason.EXHAUSTED,
        Status.OUT_OF_RANGE.withDescription("sequence '" + sequence + "' reached its max " + max), what);
  }

  /**
   * Describes the source: its sequence, range and the next ID.
   *
   * @return a short description
   */
  @Override
  public String toString() {
    long n = next.get();
    return "InMemoryIdSource{sequence=" + sequence + ", first=" + first + ", max=" + max
        + ", next=" + (n == EXHAUSTED ? "none" : Long.toString(n)) + "}";
  }
}
