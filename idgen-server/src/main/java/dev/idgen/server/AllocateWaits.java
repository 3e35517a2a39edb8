package dev.idgen.server;

import com.google.errorprone.annotations.ThreadSafe;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads on which Allocate calls that cannot be served from memory wait (for a refill, a sequence's
 * first load, the store). A cached pool: a waiting call holds its thread for at most
 * {@code idgen.allocator.max-wait}, and there are as many of them as calls that found the reserve empty at
 * once, so the pool grows with an outage and shrinks after it; calls served from memory never come here.
 *
 * <p>Thread-safe. Closed after the gRPC server has drained, with the other components.
 */
@ThreadSafe
final class AllocateWaits implements Executor, ServerComponent {
  private final AtomicInteger threads = new AtomicInteger();
  private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "idgen-allocate-wait-" + threads.incrementAndGet());
    t.setDaemon(true);
    return t;
  });

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
    return "allocate waits";
  }
}
