package dev.idgen.bench.jmh;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Where the stub's {@code next()} loses against {@link AtomicLongBaseline} from one thread, taken apart on models of
 * its shape (the stub's lease class is package-private, so these are copies of its shape, not the stub):
 *
 * <ul>
 *   <li>{@code atomicLong}: {@code AtomicLongBaseline}'s own shape: one field load, then the locked add;
 *   <li>{@code atomicLongBehindVolatile}: the same add, on a counter read first from a volatile field of another
 *       object: the one more dependent load that {@code next()} makes (the benchmark's source, then its
 *       {@code current} lease) before its add can start;
 *   <li>{@code leaseBehindVolatile}: the whole shape of {@code next()}: the lease read from a volatile field, the
 *       add on its counter, the bounds check, the refill-mark check and {@code first + i * stride};
 *   <li>{@code leaseHeld}: the same work on a lease held in a final field: the checks and arithmetic without the
 *       extra load.
 * </ul>
 *
 * <p>Why these: the locked add stops later loads until it is done, so a load that the next add's address depends on
 * could add its latency to every call, while work after the add that the next call does not depend on overlaps.
 * What they measured is in BENCHMARKS.md ("Strict forwarding over a stream (tried, reverted), and the stub's fast
 * path taken apart").
 *
 * <pre>java -jar idgen-bench/target/idgen-bench-*-benchmarks.jar FastPathShapeBenchmark</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 3, time = 5)
@Fork(1)
@State(Scope.Benchmark)
public class FastPathShapeBenchmark {

  /** The shape of the stub's lease: an immutable range and the atomic index of its next ID. */
  static final class Lease {
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
    @SuppressWarnings("unused")
    private volatile long taken;

    Lease(long first, long stride, long count, long refillAt) {
      this.first = first;
      this.stride = stride;
      this.count = count;
      this.refillAt = refillAt;
    }

    long take(long n) {
      return (long) TAKEN.getAndAdd(this, n);
    }
  }

  /** What the benchmark holds as the stub's source: a volatile reference to what the add works on. */
  static final class Source {
    volatile AtomicLong counter = new AtomicLong(1);
    // Never used up in a run (2^62 IDs), no refill mark reached.
    volatile Lease current = new Lease(1, 1, 1L << 62, -1);
  }

  private final AtomicLong counter = new AtomicLong(1);
  private final Source source = new Source();
  private final Lease held = new Lease(1, 1, 1L << 62, -1);

  @Benchmark
  @Threads(1)
  public long atomicLong() {
    return counter.getAndIncrement();
  }

  @Benchmark
  @Threads(1)
  public long atomicLongBehindVolatile() {
    return source.counter.getAndIncrement();
  }

  @Benchmark
  @Threads(1)
  public long leaseBehindVolatile() {
    return next(source.current);
  }

  @Benchmark
  @Threads(1)
  public long leaseHeld() {
    return next(held);
  }

  private static long next(Lease l) {
    long i = l.take(1);
    if (i < l.count) {
      if (i == l.refillAt) {
        return -2; // never in a run: the stub would check whether to request the next lease here
      }
      return l.first + i * l.stride;
    }
    return -1; // never in a run: the stub's slow path
  }
}
