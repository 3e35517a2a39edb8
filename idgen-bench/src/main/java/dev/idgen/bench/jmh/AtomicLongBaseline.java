package dev.idgen.bench.jmh;

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
 * The physical limit for {@link ClientNextBenchmark}: a plain shared {@link AtomicLong#getAndIncrement()}
 * from the same numbers of threads.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 3, time = 5)
@Fork(1)
@State(Scope.Benchmark)
public class AtomicLongBaseline {

  private final AtomicLong next = new AtomicLong(1);

  @Benchmark
  @Threads(1)
  public long atomicLong_1thread() {
    return next.getAndIncrement();
  }

  @Benchmark
  @Threads(10)
  public long atomicLong_10threads() {
    return next.getAndIncrement();
  }
}
