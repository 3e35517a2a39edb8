package dev.idgen.server.transport;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.server.lifecycle.ServerComponent;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads for work that may block, kept off the network threads that serve calls (see
 * {@code GrpcModule}): Allocate calls that must wait for a reserve (a refill, a sequence's first load, the
 * store) and every {@code SequenceAdmin} call (store reads and writes). A cached pool: a waiting Allocate
 * holds its thread for at most {@code idgen.allocator.max-wait}, so the pool grows with an outage and
 * shrinks after it; calls served from memory never come here.
 *
 * <p>Thread-safe. Closed after the gRPC server has drained, with the other components.
 */
@ThreadSafe
public final class WorkerPool implements Executor, ServerComponent {
  private final AtomicInteger threads = new AtomicInteger();
  private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "idgen-worker-" + threads.incrementAndGet());
    t.setDaemon(true);
    return t;
  });

  WorkerPool() {}

  @Override
  public void execute(Runnable task) {
    pool.execute(task);
  }

  @Override
  public void start() {}

  @Override
  public void close() {
    pool.shutdownNow();
  }

  @Override
  public String toString() {
    return "worker pool";
  }
}
