package dev.idgen.server.api;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.google.inject.Inject;
import com.google.inject.Singleton;
import dev.idgen.api.v1.AllocateRangesResponse;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.core.Allocator;
import dev.idgen.core.KnownSequence;
import dev.idgen.core.NotOwnerException;
import dev.idgen.core.Route;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.Ticker;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.metrics.IdGenMetrics;
import dev.idgen.server.status.ErrorStatus;
import dev.idgen.server.transport.WorkerPool;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
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
 * <p>Threads: the gRPC module ({@code GrpcModule}) runs Allocate calls on the network thread that read
 * them (no hand-off to a worker per call, which cost more than the allocation itself). The allocator
 * answers each call once ({@link Allocator#route}, which never blocks): a call whose IDs are in memory is
 * served right there; only a call that must wait for a refill
 * or touch the store (a sequence not loaded yet, a request larger than the reserve, an error to report)
 * moves to the {@link WorkerPool}, so that a slow store never stalls a network thread. A call of a strict
 * sequence that another server owns is forwarded to it from the network thread ({@link StrictForwarder},
 * which never blocks); its answer completes the call on the forwarding channel's thread. The service holds
 * no per-call state; each call's stream is a {@link RangeStream}.
 */
@ThreadSafe
@Singleton
public final class IdGenService extends IdGenGrpc.IdGenImplBase {

  private static final Logger log = LoggerFactory.getLogger(IdGenService.class);

  private final Allocator allocator;
  /** Stamped on every range: how long a client may keep it (null: no limit). */
  @Nullable private final com.google.protobuf.Duration validFor;
  private final Duration maxWait;
  private final LongConsumer abandoned;
  private final Executor waits;
  /** Sends calls of strict sequences owned by another server there; null: never (tests of one server). */
  @Nullable private final StrictForwarder forwarder;

  @Inject
  IdGenService(Allocator allocator, ServerSettings settings, IdGenMetrics metrics, WorkerPool waits,
      StrictForwarder forwarder) {
    this(allocator, settings, metrics::abandonedInCall, waits, forwarder);
  }

  /** Without metrics; calls that must wait run on {@code waits}. */
  IdGenService(Allocator allocator, ServerSettings settings, Executor waits) {
    this(allocator, settings, ids -> {}, waits, null);
  }

  private IdGenService(Allocator allocator, ServerSettings settings, LongConsumer abandoned, Executor waits,
      @Nullable StrictForwarder forwarder) {
    this.forwarder = forwarder;
    this.allocator = allocator;
    this.validFor = allocator == null ? null : SequenceMessages.validFor(allocator.clientLeaseLifetime());
    this.maxWait = settings.maxWait();
    this.abandoned = abandoned;
    this.waits = waits;
  }

  @Override
  public void allocate(AllocateRequest request, StreamObserver<IdRange> responses) {
    RangeStream stream = new RangeStream(request.getSequence(), (ServerCallStreamObserver<IdRange>) responses,
        abandoned, validFor, allocator);
    stream.start();
    Context context = Context.current();
    // One answer from the allocator: IDs from memory, an owner to forward to from here (no worker thread:
    // the hot path of forwarding servers), or a worker that may wait.
    Route route = allocator.route(request.getSequence(), request.getCount(),
        forwarder != null && StrictForwarder.FORWARDED.get(context) == null);
    if (route instanceof Route.Served served) {
      stream.send(served.ranges(), null);
      return;
    }
    if (route instanceof Route.Forward owner) {
      forward(owner.target(), request, stream, context, true);
      return;
    }
    long arrived = System.nanoTime();
    try {
      waits.execute(context.wrap(() -> allocateWaiting(request, stream, context.getDeadline(), arrived, true)));
    } catch (RejectedExecutionException e) {
      // The worker pool's bound (the message says which) or a server shutting down: nothing handed out.
      stream.send(List.of(), WorkerPool.refusal(e));
    }
  }

  /**
   * Allocate in one answer, for HTTP/JSON (its transcoding serves unary methods only). The very same path as
   * {@link #allocate}: its stream goes to a {@link RangeCollector}, which is always ready, so the ranges are
   * checked (floor, valid_for) and collected at once, then sent as one message. The stream's hot path is
   * untouched. On an error, ranges already collected are not sent: a counted gap.
   */
  @Override
  public void allocateRanges(AllocateRequest request, StreamObserver<AllocateRangesResponse> responses) {
    allocate(request, new RangeCollector((ServerCallStreamObserver<AllocateRangesResponse>) responses, abandoned));
  }

  /**
   * The blocking path: may wait for a reserve, load the sequence, or report an error. {@code arrivedNanos}:
   * when the call arrived, so that the time it queued for a worker counts against max-wait too.
   */
  private void allocateWaiting(AllocateRequest request, RangeStream stream, @Nullable Deadline deadline,
      long arrivedNanos, boolean mayReroute) {
    if (stream.isCancelled()) {
      return; // the client gave up while the call waited for a thread: allocate nothing
    }
    boolean forwarded = StrictForwarder.FORWARDED.get() != null;
    Outcome outcome = allocateBlocking(request.getSequence(), request.getCount(),
        waitBudget(deadline, System.nanoTime() - arrivedNanos), deadline, forwarded);
    if (outcome.owner() != null) {
      forward(outcome.owner(), request, stream, Context.current(), mayReroute);
      return;
    }
    stream.send(outcome.ranges(), outcome.error());
  }

  /**
   * What the blocking path gives one call: ranges, then OK ({@code error} null) or an error; or, only when
   * {@code owner} is set, nothing yet: the call is to be forwarded there.
   */
  record Outcome(List<dev.idgen.core.IdRange> ranges, @Nullable StatusRuntimeException error,
      @Nullable String owner) {}

  /**
   * {@link Allocator#allocate} with its exceptions mapped to statuses. A strict sequence owned elsewhere gives
   * its owner, for a client's call ({@code forwarded} false) that this server may forward; NOT_OWNER for a
   * call that a server forwarded here.
   */
  Outcome allocateBlocking(String sequence, long count, Duration budget, @Nullable Deadline deadline,
      boolean forwarded) {
    StatusMapper.Subject subject = StatusMapper.Subject.allocate(sequence);
    try {
      return new Outcome(allocator.allocate(sequence, count, budget), null, null);
    } catch (NotOwnerException e) {
      if (!forwarded && forwarder != null && e.ownerTarget().isPresent()) {
        return new Outcome(List.of(), null, e.ownerTarget().get());
      }
      // A forwarded call reached a server that does not own the sequence (any more): the forwarding
      // server looks the owner up again. A client's call: nobody can serve it now, retry later.
      return new Outcome(List.of(), StatusMapper.notOwner(e, forwarded, subject), null);
    } catch (SequenceExhaustedException e) {
      // What was obtained before the end of the space is the caller's: it goes out before the error.
      return new Outcome(e.delivered(), StatusMapper.toException(e, deadline, subject), null);
    } catch (RuntimeException e) {
      return new Outcome(List.of(), StatusMapper.toException(e, deadline, subject), null);
    }
  }

  /**
   * Forwards to the owner. If the owner turns out to have moved (NOT_OWNER, or unreachable), the call is
   * tried once more here ({@code mayReroute}): it then reads the owner row again, and may find the sequence
   * released by a graceful stop (it takes it) or owned elsewhere (it forwards there once).
   */
  private void forward(String owner, AllocateRequest request, RangeStream stream, Context context,
      boolean mayReroute) {
    long arrived = System.nanoTime();
    Runnable reroute = !mayReroute ? null : () -> {
      try {
        waits.execute(context.wrap(() -> allocateWaiting(request, stream, context.getDeadline(), arrived, false)));
      } catch (RejectedExecutionException e) {
        stream.send(List.of(), WorkerPool.refusal(e));
      }
    };
    forwarder.forward(owner, request.getSequence(), request.getCount(), context.getDeadline(),
        StrictForwarder.CALLER_AUTHORIZATION.get(context), stream::send, reroute);
  }

  /**
   * How long the allocator may wait for a reserve: what is left of max-wait after the {@code waitedNanos}
   * the call already waited (for a worker thread), or less if the deadline comes first. Zero still serves
   * what is in memory; it only never waits.
   */
  Duration waitBudget(@Nullable Deadline deadline, long waitedNanos) {
    long budget = Math.max(0, maxWait.toNanos() - Math.max(0, waitedNanos));
    if (deadline != null) {
      budget = Math.min(budget, Math.max(0, deadline.timeRemaining(TimeUnit.NANOSECONDS)));
    }
    return Duration.ofNanos(budget);
  }

  /**
   * A stream of ranges that becomes one {@link AllocateRangesResponse}: it is always ready, so
   * {@link RangeStream} hands it every range at once; completion sends them, an error sends only the error
   * (the collected IDs are reported to {@code abandoned}). Cancellation and close handlers are the unary
   * call's. Not thread-safe by itself: {@link RangeStream} calls it under its lock.
   */
  static final class RangeCollector extends ServerCallStreamObserver<IdRange> {
    private final ServerCallStreamObserver<AllocateRangesResponse> call;
    private final LongConsumer abandoned;
    private final List<IdRange> ranges = new ArrayList<>();

    RangeCollector(ServerCallStreamObserver<AllocateRangesResponse> call, LongConsumer abandoned) {
      this.call = call;
      this.abandoned = abandoned;
    }

    @Override
    public void onNext(IdRange range) {
      ranges.add(range);
    }

    @Override
    public void onError(Throwable error) {
      long ids = 0;
      for (IdRange r : ranges) {
        ids += r.getCount();
      }
      if (ids > 0) {
        abandoned.accept(ids);
      }
      call.onError(error);
    }

    @Override
    public void onCompleted() {
      call.onNext(AllocateRangesResponse.newBuilder().addAllRanges(ranges).build());
      call.onCompleted();
    }

    @Override
    public boolean isReady() {
      return true; // collected in memory: one message goes out at the end, under the unary call's flow control
    }

    @Override
    public boolean isCancelled() {
      return call.isCancelled();
    }

    @Override
    public void setOnCancelHandler(Runnable handler) {
      call.setOnCancelHandler(handler);
    }

    @Override
    public void setOnCloseHandler(Runnable handler) {
      call.setOnCloseHandler(handler);
    }

    @Override
    public void setOnReadyHandler(Runnable handler) {
      // Always ready: RangeStream never waits for onReady.
    }

    @Override
    public void setCompression(String compression) {
      call.setCompression(compression);
    }

    @Override
    public void disableAutoInboundFlowControl() {
      call.disableAutoInboundFlowControl();
    }

    @Override
    public void request(int count) {
      call.request(count);
    }

    @Override
    public void setMessageCompression(boolean enable) {
      call.setMessageCompression(enable);
    }
  }

  /**
   * Sends an allocation's ranges as fast as the client's flow control allows, then its status.
   *
   * <p>Each range is checked just before it is sent: one at or below a floor that an AdvanceSequence set
   * since it was taken, or one older than its {@code valid_for} (the call started longer ago: a client that
   * reads slowly), is not sent, and neither is the rest; the call ends with UNAVAILABLE
   * ({@code RANGES_WITHDRAWN}) and the unsent IDs are a counted gap. So an advance's wait for client leases
   * also covers clients that call {@code Allocate} themselves and use what they read at once. The ranges
   * are stamped with the sequence's ordering from its definition, never from whether it is loaded here.
   *
   * <p>{@link #start} registers the call's handlers (which must happen before the service method returns);
   * {@link #send} hands over the outcome, on the network thread or later on a waiting thread. gRPC runs a
   * call's callbacks ({@code onReady}, {@code onCancel}) one at a time, but not on the sending thread, so
   * the cursor is guarded; the lock is never held while waiting. IDs of a call that the client cancels, or
   * that the server closes early (the call-duration limit), are abandoned, never handed out again (a gap),
   * and reported to {@code abandoned}.
   */
  @ThreadSafe
  static final class RangeStream {
    private final String sequence;
    private final ServerCallStreamObserver<IdRange> call;
    private final LongConsumer abandoned;
    @Nullable private final com.google.protobuf.Duration validFor;
    /** Asked, when the outcome is sent, whether the sequence is strict (its ranges say so); null: never. */
    @Nullable private final Allocator allocator;
    private final Object lock = new Object();

    /** Null until {@link #send}. */
    @GuardedBy("lock")
    @Nullable
    private List<dev.idgen.core.IdRange> ranges;

    /** The final status; null: OK. */
    @GuardedBy("lock")
    @Nullable
    private StatusRuntimeException error;

    @GuardedBy("lock")
    private int next;

    /** What the ranges say of their order; looked up once, when the first is sent. */
    @GuardedBy("lock")
    @Nullable
    private Ordering ordering;

    /** The sequence's definition and floor as the allocator knows them; looked up when the first is sent. */
    @GuardedBy("lock")
    @Nullable
    private KnownSequence known;

    /** The monotonic clock of the valid_for check; a seam for tests. */
    private final Ticker ticker;
    /** When the call started ({@link #ticker}): a client's lease of its ranges counts from before it. */
    private final long startNanos;
    /** {@code validFor} in nanoseconds; 0: none. */
    private final long validForNanos;

    @GuardedBy("lock")
    private boolean finished;

    RangeStream(String sequence, ServerCallStreamObserver<IdRange> call, LongConsumer abandoned,
        @Nullable com.google.protobuf.Duration validFor) {
      this(sequence, call, abandoned, validFor, null);
    }

    RangeStream(String sequence, ServerCallStreamObserver<IdRange> call, LongConsumer abandoned,
        @Nullable com.google.protobuf.Duration validFor, @Nullable Allocator allocator) {
      this(sequence, call, abandoned, validFor, allocator, Ticker.system());
    }

    RangeStream(String sequence, ServerCallStreamObserver<IdRange> call, LongConsumer abandoned,
        @Nullable com.google.protobuf.Duration validFor, @Nullable Allocator allocator, Ticker ticker) {
      this.ticker = ticker;
      this.startNanos = ticker.nanos();
      this.allocator = allocator;
      this.sequence = sequence;
      this.call = call;
      this.abandoned = abandoned;
      this.validFor = validFor;
      this.validForNanos = validFor == null ? 0
          : TimeUnit.SECONDS.toNanos(validFor.getSeconds()) + validFor.getNanos();
    }

    /** Registers the handlers; must be called before the service method returns. */
    void start() {
      call.setOnCancelHandler(this::cancelled);
      call.setOnReadyHandler(this::drain);
      try {
        // Also runs when the server closed the call early (the call-duration limit).
        call.setOnCloseHandler(this::cancelled);
      } catch (UnsupportedOperationException e) {
        // An observer without close notifications (a test's): cancellation is still seen.
      }
    }

    /** The call's outcome: these ranges, then OK ({@code error} null) or this error. Called once. */
    void send(List<dev.idgen.core.IdRange> ranges, @Nullable StatusRuntimeException error) {
      synchronized (lock) {
        this.ranges = ranges;
        this.error = error;
        if (finished) { // cancelled before the outcome was known: all of it is abandoned
          report(ranges, 0);
          return;
        }
        drainLocked(); // under the same lock: one lock per call served from memory, not two
      }
    }

    boolean isCancelled() {
      synchronized (lock) {
        return finished;
      }
    }

    private void drain() {
      synchronized (lock) {
        drainLocked();
      }
    }

    @GuardedBy("lock")
    private void drainLocked() {
      if (ranges == null) {
        return; // onReady before the outcome: send() drains
      }
      if (next < ranges.size() && ordering == null) {
        // From the definition: a sequence unloaded by the idle sweep while its range was in flight (a
        // forwarder's strict sequence, say) is still strict.
        known = allocator == null ? null : allocator.known(sequence);
        ordering = known != null && known.definition().strict() ? Ordering.ORDERING_STRICT
            : Ordering.ORDERING_PER_SERVER;
      }
      while (!finished && next < ranges.size() && call.isReady()) {
        dev.idgen.core.IdRange r = ranges.get(next);
        String withdrawn = withdrawn(r);
        if (withdrawn != null) {
          finished = true;
          report(ranges, next);
          call.onError(ErrorStatus.of(ErrorReason.RANGES_WITHDRAWN, withdrawn)
              .put("sequence", sequence).exception());
          return;
        }
        next++;
        call.onNext(SequenceMessages.toProto(r, validFor, ordering));
      }
      if (!finished && next == ranges.size()) {
        finished = true;
        if (error == null) {
          call.onCompleted();
        } else {
          call.onError(error); // its trailers carry the error details
        }
      }
    }

    /** Why {@code r} must not be sent now, or null if it may. */
    @GuardedBy("lock")
    @Nullable
    private String withdrawn(dev.idgen.core.IdRange r) {
      String belowFloor = belowFloor(sequence, known, r);
      if (belowFloor != null) {
        return belowFloor;
      }
      if (validForNanos > 0 && ticker.nanos() - startNanos >= validForNanos) {
        return "sequence '" + sequence + "': the call's remaining ranges waited longer than their valid_for ("
            + java.time.Duration.ofNanos(validForNanos) + ") for the client to read them, so they were dropped:"
            + " read the stream promptly, or ask for fewer IDs per call. Retry the call";
      }
      return null;
    }

    /**
     * Why {@code r} must not be sent: an AdvanceSequence moved the floor of {@code known} (what the allocator
     * knows of the sequence; null: nothing) to or above it after it was taken. Null if it may be sent.
     */
    @Nullable
    static String belowFloor(String sequence, @Nullable KnownSequence known, dev.idgen.core.IdRange r) {
      if (known != null && r.first() <= known.floor()) {
        return "sequence '" + sequence + "': an AdvanceSequence moved the floor to " + known.floor() + " after this"
            + " call's IDs were taken and before they were sent; they were dropped (nothing at or below a floor is"
            + " ever handed out). Retry the call";
      }
      return null;
    }

    private void cancelled() {
      synchronized (lock) {
        if (finished) {
          return;
        }
        finished = true;
        if (ranges != null) {
          report(ranges, next);
        }
      }
    }

    @GuardedBy("lock")
    private void report(List<dev.idgen.core.IdRange> all, int from) {
      long ids = 0;
      for (int i = from; i < all.size(); i++) {
        ids += all.get(i).count();
      }
      if (ids > 0) {
        abandoned.accept(ids);
        log.debug("Allocate on '{}' ended before its stream was sent; {} of its ranges ({} IDs) abandoned",
            sequence, all.size() - from, ids);
      }
    }
  }
}
