package dev.idgen.server;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.google.inject.Inject;
import com.google.inject.Singleton;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.core.Allocator;
import dev.idgen.core.SequenceExhaustedException;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code idgen.v1.IdGen}: allocation. Each call asks the {@link Allocator} for its IDs, waiting for a
 * reserve no longer than {@code idgen.allocator.max-wait} nor past the call's deadline, then streams the
 * ranges and the final status.
 *
 * <p>Thread-safe: it holds no per-call state; each call's stream is a {@link RangeStream}.
 */
@ThreadSafe
@Singleton
final class IdGenService extends IdGenGrpc.IdGenImplBase {

  private static final Logger log = LoggerFactory.getLogger(IdGenService.class);

  private final Allocator allocator;
  private final Duration maxWait;
  private final LongConsumer abandoned;

  @Inject
  IdGenService(Allocator allocator, ServerSettings settings, IdGenMetrics metrics) {
    this(allocator, settings, metrics::abandonedInCall);
  }

  IdGenService(Allocator allocator, ServerSettings settings) {
    this(allocator, settings, ids -> {});
  }

  private IdGenService(Allocator allocator, ServerSettings settings, LongConsumer abandoned) {
    this.allocator = allocator;
    this.maxWait = settings.maxWait();
    this.abandoned = abandoned;
  }

  @Override
  public void allocate(AllocateRequest request, StreamObserver<IdRange> responses) {
    Deadline deadline = Context.current().getDeadline();
    List<dev.idgen.core.IdRange> ranges;
    Status status;
    try {
      ranges = allocator.allocate(request.getSequence(), request.getCount(), waitBudget(deadline));
      status = Status.OK;
    } catch (SequenceExhaustedException e) {
      // What was obtained before the end of the space is the caller's: it goes out before the error.
      ranges = e.delivered();
      status = StatusMapper.toStatus(e, deadline);
    } catch (RuntimeException e) {
      ranges = List.of();
      status = StatusMapper.toStatus(e, deadline);
    }
    new RangeStream(request.getSequence(), (ServerCallStreamObserver<IdRange>) responses, ranges, status,
        abandoned).start();
  }

  /** How long the allocator may wait for a reserve: max-wait, or less if the deadline comes first. */
  Duration waitBudget(@Nullable Deadline deadline) {
    if (deadline == null) {
      return maxWait;
    }
    long left = deadline.timeRemaining(TimeUnit.NANOSECONDS);
    if (left <= 0) {
      return Duration.ZERO;
    }
    Duration untilDeadline = Duration.ofNanos(left);
    return untilDeadline.compareTo(maxWait) < 0 ? untilDeadline : maxWait;
  }

  /**
   * Sends an allocation's ranges as fast as the client's flow control allows, then its status.
   *
   * <p>gRPC runs a call's callbacks (the handler, {@code onReady}, {@code onCancel}) one at a time, but
   * not always on the same thread, so the cursor is guarded anyway; the lock is never held while waiting.
   * IDs of a call that the client cancels, or that the server closes early (the call-duration limit), are
   * abandoned, never handed out again (a gap), and reported to {@code abandoned}.
   */
  @ThreadSafe
  static final class RangeStream {
    private final String sequence;
    private final ServerCallStreamObserver<IdRange> call;
    private final List<dev.idgen.core.IdRange> ranges;
    private final Status status;
    private final LongConsumer abandoned;
    private final Object lock = new Object();

    @GuardedBy("lock")
    private int next;

    @GuardedBy("lock")
    private boolean finished;

    RangeStream(String sequence, ServerCallStreamObserver<IdRange> call,
        List<dev.idgen.core.IdRange> ranges, Status status) {
      this(sequence, call, ranges, status, ids -> {});
    }

    RangeStream(String sequence, ServerCallStreamObserver<IdRange> call,
        List<dev.idgen.core.IdRange> ranges, Status status, LongConsumer abandoned) {
      this.sequence = sequence;
      this.call = call;
      this.ranges = ranges;
      this.status = status;
      this.abandoned = abandoned;
    }

    /** Registers the handlers (which must happen before the service method returns) and sends. */
    void start() {
      call.setOnCancelHandler(this::cancelled);
      call.setOnReadyHandler(this::drain);
      try {
        // Also runs when the server closed the call early (the call-duration limit).
        call.setOnCloseHandler(this::cancelled);
      } catch (UnsupportedOperationException e) {
        // An observer without close notifications (a test's): cancellation is still seen.
      }
      drain();
    }

    private void drain() {
      synchronized (lock) {
        while (!finished && next < ranges.size() && call.isReady()) {
          call.onNext(SequenceMessages.toProto(ranges.get(next++)));
        }
        if (!finished && next == ranges.size()) {
          finished = true;
          if (status.isOk()) {
            call.onCompleted();
          } else {
            call.onError(status.asRuntimeException());
          }
        }
      }
    }

    private void cancelled() {
      int unsent;
      long ids = 0;
      synchronized (lock) {
        if (finished) {
          return;
        }
        finished = true;
        unsent = ranges.size() - next;
        for (int i = next; i < ranges.size(); i++) {
          ids += ranges.get(i).count();
        }
      }
      if (unsent > 0) {
        abandoned.accept(ids);
        log.debug("Allocate on '{}' ended before its stream was sent; {} of its ranges ({} IDs) abandoned",
            sequence, unsent, ids);
      }
    }
  }
}
