package dev.idgen.server.transport;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.inject.Inject;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.lifecycle.ServerComponent;
import dev.idgen.server.status.ErrorStatus;
import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The threads for work that may block, kept off the network threads that serve calls (see
 * {@code GrpcModule}): Allocate calls that must wait for a reserve (a refill, a sequence's first load, the
 * store) and every {@code SequenceAdmin} call (store reads and writes).
 *
 * <p>Bounded, so that a pile-up (the store frozen under thousands of callers) costs neither thousands of
 * threads nor unbounded memory: at most {@link #MAX_THREADS} threads, and at most
 * {@code idgen.limits.max-waiting-calls} tasks in all (running or queued). A task over the bound is
 * refused at once with {@link Saturated}, which the services answer with {@code UNAVAILABLE} (the client
 * stub retries elsewhere); a queued Allocate still honours its deadline when it gets a thread. Calls
 * served from memory never come here.
 *
 * <p>Thread-safe. Closed after the gRPC server has drained, with the other components.
 */
@ThreadSafe
public final class WorkerPool implements Executor, ServerComponent {
  /** Threads at most: each waiting call holds one for at most {@code idgen.allocator.max-wait}. */
  static final int MAX_THREADS = 64;

  /** The RetryInfo delay of a refusal: short, since another server (or this one soon) can serve. */
  static final Duration REFUSAL_RETRY_DELAY = Duration.ofMillis(100);

  private final int maxTasks;
  private final AtomicInteger threads = new AtomicInteger();
  private final LongAdder refused = new LongAdder();
  private final ThreadPoolExecutor pool;

  @Inject
  WorkerPool(ServerSettings settings, MeterRegistry registry) {
    this(settings.maxWaitingCalls());
    Gauge.builder("idgen.waiting.calls", this, WorkerPool::busy)
        .description("Calls waiting for a reserve or the store now (running or queued for a worker thread)")
        .register(registry);
    FunctionCounter.builder("idgen.calls.refused", refused, LongAdder::sum)
        .description("Calls refused at once with UNAVAILABLE because idgen.limits.max-waiting-calls already wait")
        .tag("reason", "busy")
        .register(registry);
  }

  WorkerPool(int maxTasks) {
    this.maxTasks = maxTasks;
    int threadCount = Math.min(MAX_THREADS, maxTasks);
    this.pool = new ThreadPoolExecutor(threadCount, threadCount, 30, TimeUnit.SECONDS,
        maxTasks > threadCount ? new LinkedBlockingQueue<>(maxTasks - threadCount) : new SynchronousQueue<>(),
        r -> {
          Thread t = new Thread(r, "idgen-worker-" + threads.incrementAndGet());
          t.setDaemon(true);
          return t;
        }, (task, executor) -> {
          if (executor.isShutdown()) {
            throw new RejectedExecutionException("the server is shutting down");
          }
          refused.increment();
          throw new Saturated(maxTasks);
        });
    pool.allowCoreThreadTimeOut(true); // idle: no threads
  }

  /**
   * @throws Saturated if {@code idgen.limits.max-waiting-calls} tasks already run or wait
   * @throws RejectedExecutionException if the pool is closed
   */
  @Override
  public void execute(Runnable task) {
    pool.execute(task);
  }

  /**
   * The status for a task the pool refused, for the caller to retry elsewhere: {@code SERVER_BUSY} when
   * the bound is reached, {@code SERVER_SHUTTING_DOWN} once the pool is closed (both UNAVAILABLE).
   */
  public static StatusRuntimeException refusal(RejectedExecutionException e) {
    if (e instanceof Saturated s) {
      return ErrorStatus.of(ErrorReason.SERVER_BUSY, s.getMessage()).put("limit", s.maxTasks)
          .retryAfter(REFUSAL_RETRY_DELAY).exception();
    }
    return ErrorStatus.of(ErrorReason.SERVER_SHUTTING_DOWN, "the server is shutting down")
        .retryAfter(REFUSAL_RETRY_DELAY).exception();
  }

  /** Tasks running or queued now. */
  public int busy() {
    return pool.getActiveCount() + pool.getQueue().size();
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

  /** The bound was reached: the message says which and what to do. */
  public static final class Saturated extends RejectedExecutionException {
    private static final long serialVersionUID = 1L;

    private final int maxTasks;

    Saturated(int maxTasks) {
      super("the server is busy: " + maxTasks + " calls already wait for a reserve or the store"
          + " (idgen.limits.max-waiting-calls); retry later or on another server");
      this.maxTasks = maxTasks;
    }
  }
}
