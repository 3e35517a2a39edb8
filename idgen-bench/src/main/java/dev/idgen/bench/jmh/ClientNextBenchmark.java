package dev.idgen.bench.jmh;

import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdSource;
import dev.idgen.client.IdSourceStats;
import dev.idgen.server.EmbeddedDaemon;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import java.nio.file.Path;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Scenario 3: the client stub's {@link IdSource#next()} from 1 and from 10 threads, against the real
 * daemon (production Guice modules, the real allocator, the embedded store) in the same JVM over an
 * in-process gRPC transport, with the client's default lease settings. The physical limit beside it is
 * {@link AtomicLongBaseline}.
 *
 * <p>After each trial the source's stats are printed: {@code waits} counts the times a caller found
 * the source empty and waited for a lease (the target is none), {@code failedCalls} failed leases.
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
    /**
     * The sequence's node_block_size: the most IDs the server reserves from the embedded store (one
     * fsync'd transaction) at once. The default, 10,000, caps the server's supply at this rate.
     */
    @Param({"10000", "1000000"})
    public long nodeBlockSize;

    /** The client's largest lease (its default, and the servers' default per-call limit: 1,000,000). */
    @Param({"1000000"})
    public long maxLeaseSize;

    Path dir;
    EmbeddedDaemon server;
    ManagedChannel channel;
    IdGenClient client;
    IdSource source;

    @Setup(Level.Trial)
    public void start() {
      dir = TempDirs.create("idgen-bench-client-");
      server = EmbeddedDaemon.inProcess(dir);
      // Default executor, like an application's channel.
      channel = InProcessChannelBuilder.forName(server.inProcessName()).build();
      SequenceAdminGrpc.newBlockingStub(channel)
          .createSequence(CreateSequenceRequest.newBuilder().setName("bench")
              .setNodeBlockSize(nodeBlockSize)
              .setDcBlockSize(Math.max(nodeBlockSize, 1_000_000))
              .build());
      client = IdGenClient.builder().channel(channel).name("bench").maxLeaseSize(maxLeaseSize).build();
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
}
