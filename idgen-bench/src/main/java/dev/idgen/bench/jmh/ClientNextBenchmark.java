package dev.idgen.bench.jmh;

import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdSource;
import dev.idgen.client.IdSourceStats;
import dev.idgen.server.EmbeddedBenchServer;
import io.grpc.ManagedChannel;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Scenario 3: the client stub's {@link IdSource#next()} from 1 and from 10 threads, against the real
 * daemon (production Guice modules, the real allocator, the embedded store) in the same JVM over an
 * in-process gRPC transport, with the client's default lease settings. Beside it, the physical limit:
 * a plain {@link AtomicLong#getAndIncrement()} from the same numbers of threads.
 *
 * <p>After each trial the source's stats are printed: {@code waits} must stay 0 (no caller waited for
 * a lease) and {@code failedCalls} 0.
 *
 * <pre>java -jar idgen-bench/target/idgen-bench-*-benchmarks.jar ClientNextBenchmark</pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 3, time = 5)
@Fork(1)
public class ClientNextBenchmark {

  /** The server, a client and one source, shared by every thread of a trial. */
  @State(Scope.Benchmark)
  public static class Live {
    Path dir;
    EmbeddedBenchServer server;
    ManagedChannel channel;
    IdGenClient client;
    IdSource source;

    @Setup(Level.Trial)
    public void start() {
      dir = TempDirs.create("idgen-bench-client-");
      server = EmbeddedBenchServer.inProcess(dir);
      channel = server.inProcessChannel();
      SequenceAdminGrpc.newBlockingStub(channel)
          .createSequence(CreateSequenceRequest.newBuilder().setName("bench").build());
      client = IdGenClient.builder().channel(channel).name("bench").build();
      source = client.sequence("bench");
    }

    @TearDown(Level.Trial)
    public void stop() {
      IdSourceStats stats = source.stats();
      System.out.println();
      System.out.println("client stats: " + stats);
      client.close();
      channel.shutdownNow();
      server.close();
      TempDirs.delete(dir);
    }
  }

  /** The physical limit: one shared counter. */
  @State(Scope.Benchmark)
  public static class Counter {
    final AtomicLong next = new AtomicLong(1);
  }

  @Benchmark
  @Threads(1)
  public long next_1thread(Live live) {
    return live.source.next();
  }

  @Benchmark
  @Threads(10)
  public long next_10threads(Live live) {
    return live.source.next();
  }

  @Benchmark
  @Threads(1)
  public long atomicLong_1thread(Counter counter) {
    return counter.next.getAndIncrement();
  }

  @Benchmark
  @Threads(10)
  public long atomicLong_10threads(Counter counter) {
    return counter.next.getAndIncrement();
  }
}
