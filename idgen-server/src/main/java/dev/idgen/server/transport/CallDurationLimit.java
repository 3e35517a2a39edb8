package dev.idgen.server.transport;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.api.v1.ErrorReason;
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
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

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

  /** The production timer: one daemon thread. */
  static final class SchedulerTimer implements Timer, ServerComponent {
    private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "idgen-call-deadline");
      t.setDaemon(true);
      return t;
    });

    SchedulerTimer() {
      // Almost every call cancels its timer within milliseconds; without this, each cancelled task would
      // stay queued for the whole max-call-duration (30 s × tens of thousands of calls/s).
      scheduler.setRemoveOnCancelPolicy(true);
    }

    @Override
    public Runnable schedule(Runnable task, Duration delay) {
      ScheduledFuture<?> future = scheduler.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
      return () -> future.cancel(false);
    }

    @Override
    public void start() {}

    @Override
    public void close() {
      scheduler.shutdownNow();
    }

    @Override
    public String toString() {
      return "call deadline timer";
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
