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
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
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
   * and its delay plus a tick (a limit of tens of seconds needs no better). Every Allocate call schedules a task
   * on its event loop and cancels it microseconds later, so what scheduling costs is paid per call: a
   * {@code ScheduledThreadPoolExecutor} there took a lock, a heap insertion and a heap removal per call (about 3 %
   * of a server's samples under 1-ID calls in a JFR profile), and one lock-free queue shared by every event loop
   * still cost 1.7 % (the queue's tail moving between cores on every append, and the sweeping thread reading
   * every task ever scheduled, each from another core's cache; BENCHMARKS.md).
   *
   * <p>So each scheduling thread has its own {@link Shard}: scheduling appends to it under its lock, which only the
   * sweep ever contends for (four times a second), and cancelling is one volatile write. The thread that appends
   * also drops its cancelled tasks whenever its shard has doubled since it last did, so a shard holds about twice
   * the tasks still open, and the sweep reads only those.
   *
   * <p>Threads: any thread schedules (into its own shard) and cancels; the sweeping thread visits every shard
   * under the shard's lock, keeps the tasks not yet due, and runs the due ones outside any lock. A cancelled
   * task drops its reference at once, so a call that ended is not kept reachable until the next compaction. A
   * shard whose thread has ended is forgotten once it is empty.
   */
  static final class SweepingTimer implements Timer, ServerComponent {
    static final Duration TICK = Duration.ofMillis(250);
    /** A shard never compacts below this size: compacting a handful of tasks costs more than keeping them. */
    private static final int MIN_COMPACT = 64;
    private static final Logger log = LoggerFactory.getLogger(SweepingTimer.class);

    private final Ticker ticker;
    private final CopyOnWriteArrayList<Shard> shards = new CopyOnWriteArrayList<>();
    private final ThreadLocal<Shard> own = ThreadLocal.withInitial(this::newShard);
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
      own.get().add(t);
      return t;
    }

    private Shard newShard() {
      Shard shard = new Shard(Thread.currentThread());
      shards.add(shard);
      return shard;
    }

    /** Runs the tasks due at ticker time {@code now}, and forgets the cancelled ones. */
    void sweep(long now) {
      List<Runnable> due = new ArrayList<>();
      for (Shard shard : shards) {
        // Whether its thread ended, read before the shard: a thread seen ended appended all it ever will, so an
        // empty shard then stays empty. Read after, a thread could append and end in between, and its task be lost.
        boolean ended = !shard.owner.isAlive();
        if (shard.takeDue(now, due) && ended) {
          shards.remove(shard);
        }
      }
      for (Runnable r : due) {
        try {
          r.run();
        } catch (RuntimeException e) {
          log.warn("a call-duration task failed", e);
        }
      }
    }

    /** Tasks scheduled and not yet cancelled or run (tests). */
    int pending() {
      int n = 0;
      for (Shard shard : shards) {
        n += shard.pending();
      }
      return n;
    }

    /** Shards this timer keeps (tests). */
    int shards() {
      return shards.size();
    }

    /** Tasks the shards hold, cancelled ones not yet dropped included (tests). */
    int held() {
      int n = 0;
      for (Shard shard : shards) {
        n += shard.held();
      }
      return n;
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

    /** The tasks one thread scheduled. */
    private static final class Shard {
      final Thread owner;

      @GuardedBy("this")
      private final ArrayList<Task> tasks = new ArrayList<>();

      /** The size at which {@link #add} drops the cancelled tasks. */
      @GuardedBy("this")
      private int compactAt = MIN_COMPACT;

      Shard(Thread owner) {
        this.owner = owner;
      }

      synchronized void add(Task t) {
        tasks.add(t);
        if (tasks.size() >= compactAt) {
          tasks.removeIf(Task::done);
          compactAt = Math.max(MIN_COMPACT, 2 * tasks.size());
        }
      }

      /** Moves the tasks due at {@code now} to {@code due}, drops the cancelled ones; true if none is left. */
      synchronized boolean takeDue(long now, List<Runnable> due) {
        int kept = 0;
        for (int i = 0; i < tasks.size(); i++) {
          Task t = tasks.get(i);
          Runnable r = t.task;
          if (r == null) {
            continue;
          }
          if (now - t.due >= 0) {
            t.task = null;
            due.add(r);
            continue;
          }
          tasks.set(kept++, t);
        }
        tasks.subList(kept, tasks.size()).clear();
        compactAt = Math.max(MIN_COMPACT, 2 * kept);
        return kept == 0;
      }

      synchronized int held() {
        return tasks.size();
      }

      synchronized int pending() {
        int n = 0;
        for (Task t : tasks) {
          n += t.done() ? 0 : 1;
        }
        return n;
      }
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

      boolean done() {
        return task == null;
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

  /**
   * A call whose outbound operations are serialized with the timer's close, and dropped once it is closed.
   * {@code closed} is written under the lock and read without it only where a stale value is harmless.
   */
  private static final class GuardedCall<Q, A> extends SimpleForwardingServerCall<Q, A> {
    private final Object lock = new Object();

    private volatile boolean closed;

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

    // request and isReady need no lock: gRPC lets any thread call request(n), and isReady only reads state
    // that the transport guards itself; a stale "ready" leads to a sendMessage, which the lock guards.

    @Override
    public void request(int numMessages) {
      if (!closed) {
        super.request(numMessages);
      }
    }

    @Override
    public boolean isReady() {
      return !closed && super.isReady();
    }
  }
}
