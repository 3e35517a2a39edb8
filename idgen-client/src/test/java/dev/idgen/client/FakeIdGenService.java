package dev.idgen.client;

import com.google.protobuf.Duration;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A correct fake {@code IdGen} server over a {@link FakeBackend}, with switches: fail with a status
 * (always, or the next n calls), hold calls until released, hang (never answer), split each answer
 * into several ranges, and stamp ranges with a {@code valid_for}. It counts calls and cancellations
 * and records the counts asked for.
 */
final class FakeIdGenService extends IdGenGrpc.IdGenImplBase {
  private final FakeBackend backend;

  final AtomicInteger calls = new AtomicInteger();
  final AtomicInteger cancellations = new AtomicInteger();
  final Queue<Long> requestedCounts = new ConcurrentLinkedQueue<>();

  private volatile Status failAlways;
  private volatile Status failNextStatus;
  private final AtomicInteger failNextTimes = new AtomicInteger();
  private volatile boolean hang;
  private volatile boolean hold;
  private final List<Runnable> held = new ArrayList<>();
  private volatile int pieces = 1;
  private volatile java.time.Duration validFor;

  FakeIdGenService(FakeBackend backend) {
    this.backend = backend;
  }

  /** Every call fails with {@code status} (null: back to normal). */
  FakeIdGenService failAlways(Status status) {
    this.failAlways = status;
    return this;
  }

  /** The next {@code times} calls fail with {@code status}. */
  FakeIdGenService failNext(int times, Status status) {
    this.failNextStatus = status;
    this.failNextTimes.set(times);
    return this;
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
    List<Runnable> toRun;
    synchronized (held) {
      hold = false;
      toRun = new ArrayList<>(held);
      held.clear();
    }
    toRun.forEach(Runnable::run);
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

  @Override
  public void allocate(AllocateRequest request, StreamObserver<IdRange> responses) {
    calls.incrementAndGet();
    requestedCounts.add(request.getCount());
    ((ServerCallStreamObserver<IdRange>) responses).setOnCancelHandler(cancellations::incrementAndGet);
    Status failure = failAlways;
    if (failure == null && failNextTimes.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      failure = failNextStatus;
    }
    if (failure != null) {
      responses.onError(failure.asRuntimeException());
      return;
    }
    if (hang) {
      return;
    }
    synchronized (held) {
      if (hold) {
        held.add(() -> answer(request, responses));
        return;
      }
    }
    answer(request, responses);
  }

  private void answer(AllocateRequest request, StreamObserver<IdRange> responses) {
    String name = request.getSequence();
    if (!backend.exists(name)) {
      responses.onError(Status.NOT_FOUND.withDescription("no sequence named '" + name + "'").asRuntimeException());
      return;
    }
    if (request.getCount() < 1) {
      responses.onError(Status.INVALID_ARGUMENT.withDescription("count: " + request.getCount()).asRuntimeException());
      return;
    }
    List<FakeBackend.Leased> ranges = backend.allocate(name, request.getCount(), pieces);
    java.time.Duration valid = validFor;
    long delivered = 0;
    for (FakeBackend.Leased r : ranges) {
      IdRange.Builder range = IdRange.newBuilder().setFirst(r.first()).setCount(r.count()).setStride(r.stride());
      if (valid != null) {
        range.setValidFor(Duration.newBuilder().setSeconds(valid.getSeconds()).setNanos(valid.getNano()));
      }
      responses.onNext(range.build());
      delivered += r.count();
    }
    if (delivered < request.getCount()) {
      responses.onError(Status.RESOURCE_EXHAUSTED
          .withDescription("sequence '" + name + "' reached its max; delivered " + delivered + " of "
              + request.getCount())
          .asRuntimeException());
      return;
    }
    responses.onCompleted();
  }
}
