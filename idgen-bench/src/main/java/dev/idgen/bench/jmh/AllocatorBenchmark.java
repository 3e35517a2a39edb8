package dev.idgen.bench.jmh;

import dev.idgen.core.Allocator;
import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.store.embedded.EmbeddedRangeStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The allocator core without gRPC: {@code Allocator.allocate(seq, count)} on the embedded store (SQLite,
 * fsync'd reservations, refilled in the background), one call per operation. Multiply the ops/s by
 * {@code count} for IDs/s.
 *
 * <pre>java -jar idgen-bench/target/idgen-bench-*-benchmarks.jar AllocatorBenchmark [-p count=1,100]
 *     [-p nodeBlockSize=10000] [-t 10]</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 3, time = 5)
@Fork(1)
@State(Scope.Benchmark)
public class AllocatorBenchmark {

  private static final Duration WAIT = Duration.ofSeconds(5);

  /** IDs per call. */
  @Param({"1", "100"})
  public long count;

  /** The sequence's node_block_size: the largest block the allocator reserves at once. */
  @Param({"10000"})
  public long nodeBlockSize;

  private Path dir;
  private EmbeddedRangeStore store;
  private Allocator allocator;

  @Setup(Level.Trial)
  public void start() {
    dir = TempDirs.create("idgen-bench-allocator-");
    store = EmbeddedRangeStore.open(dir);
    allocator = Allocator.builder(store).build();
    allocator.create(new SequenceDefinition("bench", SequenceDefinition.DEFAULT_START,
        SequenceDefinition.DEFAULT_MAX, 1, nodeBlockSize,
        Math.max(nodeBlockSize, SequenceDefinition.DEFAULT_DC_BLOCK_SIZE)));
  }

  @TearDown(Level.Trial)
  public void stop() {
    System.out.println();
    System.out.println("allocator stats: " + allocator.stats());
    allocator.close();
    store.close();
    TempDirs.delete(dir);
  }

  @Benchmark
  public List<IdRange> allocate() {
    return allocator.allocate("bench", count, WAIT);
  }
}
