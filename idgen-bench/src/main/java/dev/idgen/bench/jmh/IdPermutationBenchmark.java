package dev.idgen.bench.jmh;

import dev.idgen.client.format.CheckDigit;
import dev.idgen.client.format.IdFormat;
import dev.idgen.client.format.IdPermutation;
import dev.idgen.client.format.IdPresets;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
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
 * {@link IdPermutation#apply} and {@link IdPermutation#invert} from one thread, on consecutive IDs as a sequence
 * hands them out: on {@code [1, 2^31 - 1]} (the target: 50M calls/s) and on the JavaScript-safe range
 * {@code [1, 2^53 - 1]}. Both ranges nearly fill their domain (2^31 and 2^53), so a call runs the rounds about
 * once; a range just above a power of two would run them about twice. {@code format} is {@link IdFormat#format} with a prefix, padding, a Damm check digit and the
 * permutation: it allocates its string.
 *
 * <pre>java -jar idgen-bench/target/idgen-bench-*-benchmarks.jar IdPermutationBenchmark</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 3, time = 5)
@Fork(1)
@State(Scope.Thread)
public class IdPermutationBenchmark {

  private static final byte[] KEY = "a benchmark key, not a secret".getBytes(StandardCharsets.US_ASCII);

  private final IdPermutation int32 = IdPermutation.create(1, IdPresets.INT32_MAX, KEY);
  private final IdPermutation javascriptSafe = IdPermutation.create(1, IdPresets.JAVASCRIPT_SAFE_MAX, KEY);
  private final IdFormat orders = IdFormat.builder().prefix("ORD-").zeroPad(10).checkDigit(CheckDigit.DAMM)
      .permutation(int32).build();
  private long next = 1;

  /** The next ID, from 1 up to 2^31 - 1 and round again. */
  private long nextId() {
    long id = next;
    next = id == IdPresets.INT32_MAX ? 1 : id + 1;
    return id;
  }

  @Benchmark
  @Threads(1)
  public long apply_int32() {
    return int32.apply(nextId());
  }

  @Benchmark
  @Threads(1)
  public long invert_int32() {
    return int32.invert(nextId());
  }

  @Benchmark
  @Threads(1)
  public long apply_javascriptSafe() {
    return javascriptSafe.apply(nextId());
  }

  @Benchmark
  @Threads(1)
  public String format_int32() {
    return orders.format(nextId());
  }
}
