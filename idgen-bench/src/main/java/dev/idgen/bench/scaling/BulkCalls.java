package dev.idgen.bench.scaling;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.cli.DurationConverter;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * One unary-like call per sequence PREFIX-FROM … PREFIX-(FROM+COUNT−1), with at most {@code --concurrency}
 * in flight (one blocking call per worker thread), each retried after {@code UNAVAILABLE} or
 * {@code DEADLINE_EXCEEDED} (a busy server, a store that is slow to answer) up to {@value #ATTEMPTS} times,
 * and the whole bounded by {@code --timeout}. Prints one line, {@code seconds=… done=… existed=…
 * failed=…}, for the scripts to read; progress goes to stderr every 10 s.
 */
abstract class BulkCalls implements Callable<Integer> {

  /** Enough for a server that has just started to reach its Cassandra (about a minute of back-offs). */
  private static final int ATTEMPTS = 20;

  @Option(names = "--target", required = true, paramLabel = "HOST:PORT", description = "The server (plaintext).")
  String target;

  @Option(names = "--prefix", required = true, description = "Sequence names: PREFIX-0, PREFIX-1, ...")
  String prefix;

  @Option(names = "--from", defaultValue = "0", description = "The first index. Default: ${DEFAULT-VALUE}.")
  int from;

  @Option(names = "--count", required = true, description = "How many sequences.")
  int count;

  @Option(names = "--concurrency", defaultValue = "32",
      description = "Calls in flight at once. Default: ${DEFAULT-VALUE}.")
  int concurrency;

  @Option(names = "--timeout", defaultValue = "30m", converter = DurationConverter.class,
      description = "Give up (exit 1) after this long. Default: ${DEFAULT-VALUE}.")
  Duration timeout;

  @Spec
  CommandSpec spec;

  /** Done, or the sequence existed already (create only). */
  enum Outcome { DONE, EXISTED }

  /** The call for one sequence; throws StatusRuntimeException. */
  abstract Outcome call(ManagedChannel channel, String name);

  /** What the progress lines call the work. */
  abstract String verb();

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (count < 0 || from < 0 || concurrency < 1) {
      err.println("--count and --from must be >= 0, --concurrency >= 1");
      err.flush();
      return 2;
    }
    // A few connections, so that the calls spread over the server's event loops.
    int channels = Math.max(1, Math.min(4, concurrency / 8));
    ManagedChannel[] chans = new ManagedChannel[channels];
    for (int i = 0; i < channels; i++) {
      chans[i] = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    }
    AtomicInteger next = new AtomicInteger(from);
    AtomicLong done = new AtomicLong();
    AtomicLong existed = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    AtomicReference<String> firstFailure = new AtomicReference<>();
    long t0 = System.nanoTime();
    long deadline = t0 + timeout.toNanos();
    int end = from + count;
    ExecutorService workers = Executors.newFixedThreadPool(concurrency, r -> {
      Thread t = new Thread(r, "scaling-" + verb());
      t.setDaemon(true);
      return t;
    });
    try {
      for (int w = 0; w < concurrency; w++) {
        ManagedChannel channel = chans[w % channels];
        workers.execute(() -> {
          for (int i = next.getAndIncrement(); i < end && System.nanoTime() < deadline;
              i = next.getAndIncrement()) {
            String name = prefix + "-" + i;
            try {
              if (withRetries(channel, name, deadline) == Outcome.EXISTED) {
                existed.incrementAndGet();
              } else {
                done.incrementAndGet();
              }
            } catch (StatusRuntimeException e) {
              failed.incrementAndGet();
              firstFailure.compareAndSet(null, name + ": " + e.getStatus());
            }
          }
        });
      }
      workers.shutdown();
      while (!workers.awaitTermination(10, TimeUnit.SECONDS)) {
        err.printf("%s: %,d of %,d after %.0f s%n", verb(), done.get() + existed.get() + failed.get(), count,
            (System.nanoTime() - t0) / 1e9);
        err.flush();
      }
    } finally {
      workers.shutdownNow();
      for (ManagedChannel c : chans) {
        c.shutdownNow();
      }
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    long finished = done.get() + existed.get() + failed.get();
    out.printf("seconds=%.1f done=%d existed=%d failed=%d%n", seconds, done.get(), existed.get(), failed.get());
    out.flush();
    if (firstFailure.get() != null) {
      err.println("first failure: " + firstFailure.get());
    }
    if (finished < count) {
      err.printf("%s: timed out after %s with %,d of %,d done%n", verb(), timeout, finished, count);
    }
    err.flush();
    return failed.get() == 0 && finished == count ? 0 : 1;
  }

  private Outcome withRetries(ManagedChannel channel, String name, long deadline) {
    for (int attempt = 1; ; attempt++) {
      try {
        return call(channel, name);
      } catch (StatusRuntimeException e) {
        Status.Code code = e.getStatus().getCode();
        boolean retryable = code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED;
        if (!retryable || attempt >= ATTEMPTS || System.nanoTime() > deadline) {
          throw e;
        }
        // Random back-off, growing: the busy server (or store) gets time to drain.
        long cap = Math.min(5_000, 100L << attempt);
        try {
          Thread.sleep(ThreadLocalRandom.current().nextLong(cap / 2, cap + 1));
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  /** {@code create}: CreateSequence for each name; an existing sequence counts as existed. */
  @Command(name = "create", mixinStandardHelpOptions = true,
      description = "Create sequences PREFIX-FROM ... PREFIX-(FROM+COUNT-1) through a server, several at once.")
  static final class Create extends BulkCalls {
    @Option(names = "--stripes", description = "Stripes of each sequence (default: the server's).")
    Integer stripes;

    @Option(names = "--node-block-size", description = "node_block_size of each sequence (default: the server's).")
    Long nodeBlockSize;

    @Override
    Outcome call(ManagedChannel channel, String name) {
      CreateSequenceRequest.Builder request = CreateSequenceRequest.newBuilder().setName(name);
      if (stripes != null) {
        request.setStripes(stripes);
      }
      if (nodeBlockSize != null) {
        request.setNodeBlockSize(nodeBlockSize);
      }
      try {
        SequenceAdminGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
            .createSequence(request.build());
        return Outcome.DONE;
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() == Status.Code.ALREADY_EXISTS) {
          return Outcome.EXISTED;
        }
        throw e;
      }
    }

    @Override
    String verb() {
      return "create";
    }
  }

  /** {@code touch}: one Allocate of one ID from each sequence, which loads it into the server. */
  @Command(name = "touch", mixinStandardHelpOptions = true,
      description = "Allocate one ID from each of PREFIX-FROM ... PREFIX-(FROM+COUNT-1), several at once: "
          + "each sequence is loaded into the server.")
  static final class Touch extends BulkCalls {
    @Override
    Outcome call(ManagedChannel channel, String name) {
      Iterator<IdRange> ranges = IdGenGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
          .allocate(AllocateRequest.newBuilder().setSequence(name).setCount(1).build());
      while (ranges.hasNext()) {
        ranges.next();
      }
      return Outcome.DONE;
    }

    @Override
    String verb() {
      return "touch";
    }
  }
}
