package dev.idgen.chaos;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What one client received, written to its own file as it arrives: the harness keeps nothing it needs for
 * the verdict in memory, so {@link Checker} can be run again later on the files alone.
 *
 * <p>File format ({@code client-*.bin}, {@link DataOutputStream} encoding, big-endian), a sequence of records:
 * <pre>
 *   'R' name:UTF callStartNanos:long receivedNanos:long first:long count:long stride:long   a range received
 *   'F' name:UTF requested:long received:long code:UTF                                      a call that failed
 *   'S' name:UTF n:int id:long × n                                                           IDs a stub handed out
 * </pre>
 * Times are nanoseconds since the run's epoch ({@code run.txt}), on the harness's monotonic clock.
 *
 * <p>Threads: gRPC callbacks and the client's worker write concurrently; every record is written under
 * {@code lock}, so records never interleave.
 */
@ThreadSafe
final class Recorder implements AutoCloseable {
  static final byte RANGE = 'R';
  static final byte FAILED_CALL = 'F';
  static final byte SERVED = 'S';

  private final Object lock = new Object();
  private final RunClock clock;

  @GuardedBy("lock") private final DataOutputStream out;
  @GuardedBy("lock") private boolean closed;

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

  void range(String sequence, long callStartNanos, long first, long count, long stride) {
    long received = clock.nanos();
    synchronized (lock) {
      if (closed) {
        return;
      }
      try {
        out.writeByte(RANGE);
        out.writeUTF(sequence);
        out.writeLong(callStartNanos);
        out.writeLong(received);
        out.writeLong(first);
        out.writeLong(count);
        out.writeLong(stride);
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

  void served(String sequence, long[] ids, int n) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      try {
        out.writeByte(SERVED);
        out.writeUTF(sequence);
        out.writeInt(n);
        for (int i = 0; i < n; i++) {
          out.writeLong(ids[i]);
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
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
