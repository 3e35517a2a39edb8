package dev.idgen.client;

import com.google.protobuf.Duration;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A correct fake {@code IdGen} server over a {@link FakeBackend}, with switches: fail with a status
 * (always, or the next n calls), hold calls until released (or fail them), hang (never answer), stream a
 * call's ranges and hold its completion, split each answer
 * into several ranges, stamp ranges with a {@code valid_for} or an {@code ordering}, refuse counts above
 * a per-call limit, and answer errors as a server before 0.2 did (codes only, exhaustion as RESOURCE_EXHAUSTED). Its own
 * errors carry the details a 0.2 server sends ({@link #error}). It counts calls and cancellations and
 * records the counts asked for; given a {@link FakeTicker} ({@link #clock}), it records when each range's
 * call arrived and can make calls take time on it ({@link #latencies}).
 */
final class FakeIdGenService extends IdGenGrpc.IdGenImplBase {
  private final FakeBackend backend;

  final AtomicInteger calls = new AtomicInteger();
  final AtomicInteger cancellations = new AtomicInteger();
  final Queue<Long> requestedCounts = new ConcurrentLinkedQueue<>();
  /**
   * With a {@link #clock}: the ticker reading when the call that leased each range arrived (the client
   * reads its "sent" time just before, on the same ticker), by the range's first ID.
   */
  final ConcurrentNavigableMap<Long, Long> leasedAt = new ConcurrentSkipListMap<>();

  private volatile StatusRuntimeException failAlways;
  private volatile StatusRuntimeException failNextStatus;
  private volatile long maxIdsPerCall = Long.MAX_VALUE;
  private volatile boolean legacyErrors;
  private final AtomicInteger failNextTimes = new AtomicInteger();
  private final AtomicInteger answerFirst = new AtomicInteger();
  private volatile boolean hang;
  private volatile boolean hold;
  /** Calls held by {@link #hold()}: each answers, or fails with the error it is given. */
  private final List<Consumer<StatusRuntimeException>> held = new ArrayList<>();
  private volatile boolean holdCompletions;
  private final List<Runnable> heldCompletions = new ArrayList<>();
  private volatile int pieces = 1;
  private volatile java.time.Duration validFor;
  private volatile Ordering ordering = Ordering.ORDERING_UNSPECIFIED;
  private volatile FakeTicker clock;
  private final Queue<java.time.Duration> latencies = new ConcurrentLinkedQueue<>();

  FakeIdGenService(FakeBackend backend) {
    this.backend = backend;
  }

  /** Every call fails with {@code status}, without details (null: back to normal). */
  FakeIdGenService failAlways(Status status) {
    return failAlways(status == null ? null : status.asRuntimeException());
  }

  /** Every call fails with {@code error}, details and all (null: back to normal). */
  FakeIdGenService failAlways(StatusRuntimeException error) {
    this.failAlways = error;
    return this;
  }

  /** The next {@code times} calls fail with {@code status}, without details. */
  FakeIdGenService failNext(int times, Status status) {
    return failNext(times, status.asRuntimeException());
  }

  /** The next {@code times} calls fail with {@code error}, details and all. */
  FakeIdGenService failNext(int times, StatusRuntimeException error) {
    return failNext(0, times, error);
  }

  /** The next {@code answered} calls are answered as usual, then {@code times} calls fail with {@code error}. */
  FakeIdGenService failNext(int answered, int times, StatusRuntimeException error) {
    this.failNextStatus = error;
    this.answerFirst.set(answered);
    this.failNextTimes.set(times);
    return this;
  }

  /** Counts above {@code limit} fail as a server's {@code idgen.limits.max-ids-per-call} makes them. */
  FakeIdGenService maxIdsPerCall(long limit) {
    this.maxIdsPerCall = limit;
    return this;
  }

  /** Errors as a server before 0.2 sent them: no details, exhaustion as RESOURCE_EXHAUSTED. */
  FakeIdGenService legacyErrors(boolean legacy) {
    this.legacyErrors = legacy;
    return this;
  }

  /** An error as an idgen 0.2 server sends it: the code, the message, and an ErrorInfo. */
  static StatusRuntimeException error(Status.Code code, String reason, String message, String... metadata) {
    ErrorInfo.Builder info = ErrorInfo.newBuilder().setDomain("idgen.dev").setReason(reason);
    for (int i = 0; i < metadata.length; i += 2) {
      info.putMetadata(metadata[i], metadata[i + 1]);
    }
    return StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
        .setCode(code.value()).setMessage(message).addDetails(Any.pack(info.build())).build());
  }

  /** {@link #error} with a {@code RetryInfo} of {@code retryDelay}, as idgen sends on UNAVAILABLE. */
  static StatusRuntimeException error(Status.Code code, String reason, java.time.Duration retryDelay,
      String message, String... metadata) {
    com.google.rpc.Status status = StatusProto.fromThrowable(error(code, reason, message, metadata));
    RetryInfo retry = RetryInfo.newBuilder().setRetryDelay(Duration.newBuilder()
        .setSeconds(retryDelay.getSeconds()).setNanos(retryDelay.getNano())).build();
    return StatusProto.toStatusRuntimeException(status.toBuilder().addDetails(Any.pack(retry)).build());
  }

  /** Calls are accepted and never answered (until the client cancels them). */
  FakeIdGenService hang(boolean hang) {
    this.hang = hang;
    return this;
  }

  /** Calls wait until {@link #release()}. */
  FakeIdGenService hold() {
    this.hold = true;
    return this;
  }

  /** Answers the held calls, and the next ones at once. */
  void release() {
    List<Consumer<StatusRuntimeException>> toRun;
    synchronized (held) {
      hold = false;
      toRun = new ArrayList<>(held);
      held.clear();
    }
    toRun.forEach(c -> c.accept(null));
  }

  /** Answers the calls held so far, and keeps holding the next ones (a call each answer leads to, too). */
  void answerHeld() {
    endHeld(null);
  }

  /** Fails the calls held so far with {@code error}, and keeps holding the next ones. */
  void failHeld(Status error) {
    endHeld(error.asRuntimeException());
  }

  private void endHeld(StatusRuntimeException error) {
    List<Consumer<StatusRuntimeException>> toRun;
    synchronized (held) {
      toRun = new ArrayList<>(held);
      held.clear();
    }
    toRun.forEach(c -> c.accept(error));
  }

  /** How many calls are held now (they are held once the call has got that far). */
  int heldCalls() {
    synchronized (held) {
      return held.size();
    }
  }

  /**
   * From now on a call streams its ranges as usual and then waits, not completed, until
   * {@link #completeHeld()}: the client has the IDs, and its call is still open.
   */
  FakeIdGenService holdCompletions() {
    this.holdCompletions = true;
    return this;
  }

  /** Completes the calls whose completion is held, and the next ones at once. */
  void completeHeld() {
    List<Runnable> toRun;
    synchronized (heldCompletions) {
      holdCompletions = false;
      toRun = new ArrayList<>(heldCompletions);
      heldCompletions.clear();
    }
    toRun.forEach(Runnable::run);
  }

  /** How many calls streamed their ranges and wait to be completed. */
  int heldCompletions() {
    synchronized (heldCompletions) {
      return heldCompletions.size();
    }
  }

  /** Each answer is streamed as {@code pieces} ranges. */
  FakeIdGenService splitInto(int pieces) {
    this.pieces = pieces;
    return this;
  }

  /**
   * Stamps every range answered from now on (held calls included) with this {@code valid_for}; null:
   * leave it unset, as an older server does.
   */
  FakeIdGenService validFor(java.time.Duration validFor) {
    this.validFor = validFor;
    return this;
  }

  /**
   * Stamps every range answered from now on (held calls included) with this ordering, as a server of
   * 0.2 does ({@code ORDERING_UNSPECIFIED}, the default: leave it unset, as an older server does).
   */
  FakeIdGenService ordering(Ordering ordering) {
    this.ordering = ordering;
    return this;
  }

  /** Records in {@link #leasedAt} when each range's call arrived, on {@code ticker}. */
  FakeIdGenService clock(FakeTicker ticker) {
    this.clock = ticker;
    return this;
  }

  /**
   * The next calls take these times, one each, on the {@link #clock}'s ticker: the call advances it
   * before it answers (later calls take none). Their ranges then arrive that much after they were sent.
   */
  FakeIdGenService latencies(java.time.Duration... times) {
    latencies.addAll(List.of(times));
    return this;
  }

  @Override
  public void allocate(AllocateRequest request, StreamObserver<IdRange> responses) {
    calls.incrementAndGet();
    requestedCounts.add(request.getCount());
    FakeTicker ticker = clock;
    long arrived = ticker == null ? 0 : ticker.nanos();
    java.time.Duration latency = latencies.poll();
    if (latency != null) {
      ticker.advance(latency);
    }
    ((ServerCallStreamObserver<IdRange>) responses).setOnCancelHandler(cancellations::incrementAndGet);
    StatusRuntimeException failure = failAlways;
    if (failure == null && answerFirst.getAndUpdate(n -> Math.max(0, n - 1)) == 0
        && failNextTimes.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      failure = failNextStatus;
    }
    if (failure != null) {
      responses.onError(failure);
      return;
    }
    if (hang) {
      return;
    }
    synchronized (held) {
      if (hold) {
        held.add(error -> {
          if (error == null) {
            answer(request, responses, ticker, arrived);
          } else {
            responses.onError(error);
          }
        });
        return;
      }
    }
    answer(request, responses, ticker, arrived);
  }

  private void answer(AllocateRequest request, StreamObserver<IdRange> responses, FakeTicker ticker, long arrived) {
    String name = request.getSequence();
    if (!backend.exists(name)) {
      responses.onError(Status.NOT_FOUND.withDescription("no sequence named '" + name + "'").asRuntimeException());
      return;
    }
    if (request.getCount() < 1 || request.getCount() > maxIdsPerCall) {
      String message = "count " + request.getCount() + " (expected: 1 to " + maxIdsPerCall + ")";
      responses.onError(legacyErrors || request.getCount() < 1
          ? Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException()
          : error(Status.Code.INVALID_ARGUMENT, "COUNT_ABOVE_LIMIT", message, "field", "count",
              "sequence", name, "limit", Long.toString(maxIdsPerCall)));
      return;
    }
    List<FakeBackend.Leased> ranges = backend.allocate(name, request.getCount(), pieces);
    java.time.Duration valid = validFor;
    Ordering stamp = ordering;
    long delivered = 0;
    for (FakeBackend.Leased r : ranges) {
      if (ticker != null) {
        leasedAt.put(r.first(), arrived);
      }
      IdRange.Builder range = IdRange.newBuilder().setFirst(r.first()).setCount(r.count()).setStride(r.stride())
          .setOrdering(stamp);
      if (valid != null) {
        range.setValidFor(Duration.newBuilder().setSeconds(valid.getSeconds()).setNanos(valid.getNano()));
      }
      responses.onNext(range.build());
      delivered += r.count();
    }
    if (delivered < request.getCount()) {
      String message = "sequence '" + name + "' is exhausted: no ID is left at or below its max (delivered "
          + delivered + " of the " + request.getCount() + " requested)";
      responses.onError(legacyErrors ? Status.RESOURCE_EXHAUSTED.withDescription(message).asRuntimeException()
          : error(Status.Code.OUT_OF_RANGE, "SEQUENCE_EXHAUSTED", message, "sequence", name,
              "requested", Long.toString(request.getCount()), "delivered", Long.toString(delivered)));
      return;
    }
    synchronized (heldCompletions) {
      if (holdCompletions) {
        heldCompletions.add(responses::onCompleted);
        return;
      }
    }
    responses.onCompleted();
  }
}
