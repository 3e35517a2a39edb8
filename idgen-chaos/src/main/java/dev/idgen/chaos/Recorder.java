package dev.idgen.chaos;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * What one client received, written to its own file as it arrives: the harness keeps nothing it needs for
 * the verdict in memory, so {@link Checker} can be run again later on the files alone.
 *
 * <p>File format ({@code client-*.bin}, {@link DataOutputStream} encoding, big-endian), a sequence of records:
 * <pre>
 *   'U' name:UTF server:u8 callStartNanos:long receivedNanos:long first:long count:long stride:long ordering:u8
 *                                                                                            a range received from
 *                                                                                            server slot `server`, with
 *                                                                                            the ordering it was stamped
 *                                                                                            with (IdRange.ordering's
 *                                                                                            number: 1 per-server, 2 strict)
 *   'T' the same without the ordering (written by runs before stamps were recorded, and by tests)
 *   'F' name:UTF requested:long received:long code:UTF                                      a call that failed
 *   'B' name:UTF askedNanos:long handedNanos:long runs:int (first:long count:long stride:long) × runs
 *                                                                                            a batch a stub handed out
 *   'C' name:UTF server:u8 startNanos:long endNanos:long outcome:UTF unmarked:int ranges:int
 *       (first:long count:long stride:long) × ranges                                        one whole Allocate call of
 *                                                                                            a strict client
 * </pre>
 * Times are nanoseconds since the run's epoch ({@code run.txt}), on the harness's monotonic clock.
 *
 * <p>A stub's batch (one {@code next(n)}) is recorded as the runs of IDs it consists of, in the order handed
 * out: a run is {@code count} IDs {@code first, first + stride, …}, so a batch taken from one lease is one run
 * of 24 bytes, however many IDs it holds. {@code askedNanos} is the time just before the caller asked for the
 * batch, {@code handedNanos} the time it had it: the batch was handed out between the two, and a batch asked
 * for after an advance returned was certainly handed out after it (the checker's rule, as for a range's call
 * start).
 *
 * <p>A {@code 'C'} record is written when the call has closed, besides the {@code 'T'} records of its ranges
 * and its {@code 'F'} record if it failed (which the uniqueness, bounds and lost checks read as for any call):
 * {@code startNanos} is taken just before the call is started (before its request is sent), {@code endNanos}
 * when its status arrived, after its last range; {@code outcome} is {@code OK}, or the status code and, when
 * the server gave one, its {@code ErrorInfo} reason ({@code UNAVAILABLE:OWNER_UNAVAILABLE}); {@code unmarked}
 * counts the call's ranges that did not say {@code ORDERING_STRICT}; the ranges are all those received, also
 * on a call that then failed (they were handed out). The checker holds strict sequences' calls to their order
 * with these ({@link StrictOrder}).
 *
 * <p>The checker also reads two older records, no longer written: {@code 'R'} (a range, as {@code 'T'} without
 * the server) and {@code 'S' name:UTF n:int id:long × n} (a stub's IDs one by one, without times).
 *
 * <p>Threads: gRPC callbacks and the client's worker write concurrently; every record is written under
 * {@code lock}, so records never interleave.
 */
@ThreadSafe
final class Recorder implements AutoCloseable {
  static final byte RANGE = 'R';
  static final byte SERVER_RANGE = 'T';
  static final byte STAMPED_RANGE = 'U';
  static final byte SERVED_IDS = 'S';
  static final byte FAILED_CALL = 'F';
  static final byte BATCH = 'B';
  static final byte CALL = 'C';

  private final Object lock = new Object();
  private final RunClock clock;

  @GuardedBy("lock") private final DataOutputStream out;
  @GuardedBy("lock") private boolean closed;
  /** Allocate calls started and not yet closed (their onClose recorded), see {@link #awaitCallsClosed}. */
  @GuardedBy("lock") private int openCalls;

  Recorder(Path file, RunClock clock) {
    this.clock = clock;
    try {
      this.out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file), 1 << 16));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  RunClock clock() {
    return clock;
  }

  /** A range received from server slot {@code server} (0–255) on a call started at {@code callStartNanos}. */
  void range(String sequence, int server, long callStartNanos, long first, long count, long stride) {
    range(sequence, server, callStartNanos, clock.nanos(), first, count, stride);
  }

  /** {@link #range}, read at {@code received} (tests write records of their own times). */
  void range(String sequence, int server, long callStartNanos, long received, long first, long count, long stride) {
    writeRange(SERVER_RANGE, sequence, server, callStartNanos, received, first, count, stride, -1);
  }

  /**
   * A range received from server slot {@code server} on a call started at {@code callStartNanos}, stamped with
   * {@code ordering} (the number of its {@code IdRange.ordering}, 0–255), read at {@code received}.
   */
  void stampedRange(String sequence, int server, long callStartNanos, long received, long first, long count,
      long stride, int ordering) {
    writeRange(STAMPED_RANGE, sequence, server, callStartNanos, received, first, count, stride, ordering);
  }

  private void writeRange(byte tag, String sequence, int server, long callStartNanos, long received, long first,
      long count, long stride, int ordering) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      try {
        out.writeByte(tag);
        out.writeUTF(sequence);
        out.writeByte(server);
        out.writeLong(callStartNanos);
        out.writeLong(received);
        out.writeLong(first);
        out.writeLong(count);
        out.writeLong(stride);
        if (tag == STAMPED_RANGE) {
          out.writeByte(ordering);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  void failedCall(String sequence, long requested, long received, String code) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      try {
        out.writeByte(FAILED_CALL);
        out.writeUTF(sequence);
        out.writeLong(requested);
        out.writeLong(received);
        out.writeUTF(code);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /**
   * One whole Allocate call of a strict client, once closed: {@code ranges} flattened as {first, count,
   * stride} triples, every range received; see the class comment.
   */
  void call(String sequence, int server, long startNanos, long endNanos, String outcome, int unmarked,
      long[] ranges) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      try {
        out.writeByte(CALL);
        out.writeUTF(sequence);
        out.writeByte(server);
        out.writeLong(startNanos);
        out.writeLong(endNanos);
        out.writeUTF(outcome);
        out.writeInt(unmarked);
        out.writeInt(ranges.length / 3);
        for (long v : ranges) {
          out.writeLong(v);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /**
   * A batch a stub handed to its caller: {@code ids[0..n)}, asked for at {@code askedNanos} (run clock, just
   * before the call that produced it) and handed out now.
   */
  void served(String sequence, long askedNanos, long[] ids, int n) {
    served(sequence, askedNanos, clock.nanos(), ids, n);
  }

  /** {@link #served}, handed out at {@code handed} (tests write records of their own times). */
  void served(String sequence, long askedNanos, long handed, long[] ids, int n) {
    long[] runs = runs(ids, n);
    synchronized (lock) {
      if (closed) {
        return;
      }
      try {
        out.writeByte(BATCH);
        out.writeUTF(sequence);
        out.writeLong(askedNanos);
        out.writeLong(handed);
        out.writeInt(runs.length / 3);
        for (long v : runs) {
          out.writeLong(v);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /**
   * {@code ids[0..n)} as runs {first, count, stride}, flattened, in order: a run grows while the next ID is
   * the previous one plus the run's stride (set by its first two IDs, > 0); a repeated or smaller ID starts a
   * new run. Decoding the runs gives back exactly {@code ids[0..n)}.
   */
  static long[] runs(long[] ids, int n) {
    long[] out = new long[3 * Math.max(1, n)];
    int k = 0;
    int i = 0;
    while (i < n) {
      long first = ids[i];
      long count = 1;
      long stride = 1;
      if (i + 1 < n && ids[i + 1] > first && ids[i + 1] - first > 0) { // > 0: no overflow
        stride = ids[i + 1] - first;
        count = 2;
        while (i + count < n && ids[(int) (i + count)] - ids[(int) (i + count - 1)] == stride) {
          count++;
        }
      }
      out[k++] = first;
      out[k++] = count;
      out[k++] = stride;
      i += (int) count;
    }
    return Arrays.copyOf(out, k);
  }

  /** An Allocate call started (the interceptor's {@code start}). */
  void callStarted() {
    synchronized (lock) {
      openCalls++;
    }
  }

  /** An Allocate call closed, after its outcome was recorded. */
  void callClosed() {
    synchronized (lock) {
      openCalls--;
      lock.notifyAll();
    }
  }

  /**
   * Waits up to {@code millis} until every call started has closed (its ranges and outcome recorded);
   * returns how many are still open. The end of a run waits for this before it closes the file.
   */
  int awaitCallsClosed(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + millis * 1_000_000L;
    synchronized (lock) {
      while (openCalls > 0) {
        long left = (deadline - System.nanoTime()) / 1_000_000L;
        if (left <= 0) {
          break;
        }
        lock.wait(left);
      }
      return openCalls;
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      try {
        out.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
