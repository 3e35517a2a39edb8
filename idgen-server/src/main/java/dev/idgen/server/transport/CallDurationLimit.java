package dev.idgen.server.transport;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.core.Ticker;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.lifecycle.ServerComponent;
import dev.idgen.server.status.ErrorStatus;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentLinkedQueue;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server-side deadline of a call ({@code idgen.limits.max-call-duration}): a call still open after
 * that long — a client that stopped reading its stream, say, while flow control holds the ranges back —
 * is closed with DEADLINE_EXCEEDED, whatever deadline the client set, so that it holds no server memory
 * or stream slot for ever. The handler learns it through its close handler; IDs not sent are a gap.
 *
 * <p>Thread-safe: the timer closes the call from its own thread, so every outbound operation of the call
 * goes through a lock, and none reaches the call once it is closed.
 */
@ThreadSafe
public final class CallDurationLimit implements ServerInterceptor {

  /** Runs a task after a delay; returns what cancels it. Injectable so that tests control time. */
  @FunctionalInterface
  public interface Timer {
    Runnable schedule(Runnable task, Duration delay);
  }

  /**
   * The production timer: one daemon thread that sweeps every {@link #TICK}, so a task runs between its delay
   * and its delay plus a tick (a limit of tens of seconds needs no better). Scheduling is one append to a
   * lock-free queue and cancelling one volatile write: every Allocate call schedules and cancels a task on an
   * event loop, and a {@code ScheduledThreadPoolExecutor} there took a lock, a heap insertion and a heap removal
   * per call (about 3 % of a server's samples under 1-ID calls in a JFR profile, BENCHMARKS.md).
   *
   * <p>Threads: any thread schedules and cancels; only the sweeping thread reads the queue, keeps the tasks
   * not yet due, and runs the due ones. A cancelled task drops its reference at once, so a call that ended
   * is not kept reachable until the next sweep.
   */
  static final class SweepingTimer implements Timer, ServerComponent {
    static final Duration TICK = Duration.ofMillis(250);
    private static final Logger log = LoggerFactory.getLogger(SweepingTimer.class);

    private final Ticker ticker;
    private final ConcurrentLinkedQueue<Task> added = new ConcurrentLinkedQueue<>();
    /** Tasks a sweep found neither cancelled nor due; only the sweeping thread touches it. */
    private final ArrayList<Task> waiting = new ArrayList<>();
    @Nullable private final Thread thread;
    private volatile boolean closed;

    /** With its sweeping thread, on the system ticker. */
    static SweepingTimer started() {
      return new SweepingTimer(Ticker.system(), true);
    }

    /** {@code withThread} false: nothing sweeps but {@link #sweep} calls (tests). */
    SweepingTimer(Ticker ticker, boolean withThread) {
      this.ticker = ticker;
      if (withThread) {
        thread = new Thread(this::sweepUntilClosed, "idgen-call-deadline");
        thread.setDaemon(true);
        thread.start();
      } else {
        thread = null;
      }
    }

    @Override
    public Runnable schedule(Runnable task, Duration delay) {
      Task t = new Task(task, ticker.nanos() + delay.toNanos());
      added.add(t);
      return t;
    }

    /** Runs the tasks due at ticker time {@code now}, and forgets the cancelled ones. */
    void sweep(long now) {
      for (Task t; (t = added.poll()) != null; ) {
        if (t.task != null) {
          waiting.add(t);
        }
      }
      int kept = 0;
      for (int i = 0; i < waiting.size(); i++) {
        Task t = waiting.get(i);
        Runnable r = t.task;
        if (r == null) {
          continue;
        }
        if (now - t.due >= 0) {
          t.task = null;
          try {
            r.run();
          } catch (RuntimeException e) {
            log.warn("a call-duration task failed", e);
          }
          continue;
        }
        waiting.set(kept++, t);
      }
      waiting.subList(kept, waiting.size()).clear();
    }

    /** Tasks scheduled and not yet cancelled, run or dropped by a sweep (tests). */
    int pending() {
      return (int) (added.stream().filter(t -> t.task != null).count()
          + waiting.stream().filter(t -> t.task != null).count());
    }

    private void sweepUntilClosed() {
      while (!closed) {
        try {
          Thread.sleep(TICK.toMillis());
        } catch (InterruptedException e) {
          return; // close()
        }
        sweep(ticker.nanos());
      }
    }

    @Override
    public void start() {}

    /** Stops sweeping: tasks not yet run never run (the server is stopping). */
    @Override
    public void close() {
      closed = true;
      if (thread != null) {
        thread.interrupt();
      }
    }

    @Override
    public String toString() {
      return "call deadline timer";
    }

    /** A scheduled task; running it cancels it. */
    private static final class Task implements Runnable {
      final long due;
      /** Null once cancelled or run. */
      @Nullable volatile Runnable task;

      Task(Runnable task, long due) {
        this.task = task;
        this.due = due;
      }

      @Override
      public void run() {
        task = null;
      }
    }
  }

  private final Duration max;
  private final Timer timer;

  CallDurationLimit(Duration max, Timer timer) {
    this.max = max;
    this.timer = timer;
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
      ServerCallHandler<Q, A> next) {
    if (max.isZero()) {
      return next.startCall(call, headers);
    }
    GuardedCall<Q, A> guarded = new GuardedCall<>(call);
    Runnable cancelTimer = timer.schedule(() -> guarded.closeIfOpen(ErrorStatus.of(ErrorReason.CALL_TOO_LONG,
        "the call was open longer than the server allows (idgen.limits.max-call-duration = "
            + ServerSettings.format(max) + "); read the stream promptly or ask for fewer IDs")
        .put("limit", ServerSettings.format(max)).exception()), max);
    return new SimpleForwardingServerCallListener<>(next.startCall(guarded, headers)) {
      @Override
      public void onComplete() {
        cancelTimer.run();
        super.onComplete();
      }

      @Override
      public void onCancel() {
        cancelTimer.run();
        super.onCancel();
      }
    };
  }

  /** A call whose outbound operations are serialized, and dropped once it is closed. */
  private static final class GuardedCall<Q, A> extends SimpleForwardingServerCall<Q, A> {
    private final Object lock = new Object();

    @GuardedBy("lock")
    private boolean closed;

    GuardedCall(ServerCall<Q, A> delegate) {
      super(delegate);
    }

    void closeIfOpen(StatusRuntimeException error) {
      synchronized (lock) {
        if (!closed) {
          closed = true;
          super.close(error.getStatus(), error.getTrailers() != null ? error.getTrailers() : new Metadata());
        }
      }
    }

    @Override
    public void close(Status status, Metadata trailers) {
      synchronized (lock) {
        if (!closed) {
          closed = true;
          super.close(status, trailers);
        }
      }
    }

    @Override
    public void sendHeaders(Metadata headers) {
      synchronized (lock) {
        if (!closed) {
          super.sendHeaders(headers);
        }
      }
    }

    @Override
    public void sendMessage(A message) {
      synchronized (lock) {
        if (!closed) {
          super.sendMessage(message);
        }
      }
    }

    @Override
    public void request(int numMessages) {
      synchronized (lock) {
        if (!closed) {
          super.request(numMessages);
        }
      }
    }

    @Override
    public boolean isReady() {
      synchronized (lock) {
        return !closed && super.isReady();
      }
    }
  }
}
