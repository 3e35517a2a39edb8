package dev.idgen.bench.loadgen;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A caller of raw {@code Allocate} that makes its next call from the previous call's completion
 * callback, on the channel's event loop (the channel runs callbacks directly): no thread hand-off per
 * call, so that the load generator spends its CPU on gRPC, not on waking threads (see BENCHMARKS.md,
 * "Profile"). Threads: one call at a time, so its counters are touched by one thread at a time, the event
 * loop of the call in flight (or the retry timer after a failure), each call's start ordered after the
 * previous call's end.
 */
final class AsyncAllocateCaller extends Caller implements StreamObserver<IdRange> {
  private final IdGenGrpc.IdGenStub stub;
  private final AllocateRequest[] requests;
  private final SequencePicker picker;
  private final long deadlineNanos;
  private final ScheduledExecutorService retryTimer;
  private final CountDownLatch stopped = new CountDownLatch(1);
  private long t0;
  private long received;

  AsyncAllocateCaller(Phase phase, IdGenGrpc.IdGenStub stub, AllocateRequest[] requests,
      SequencePicker picker, long deadlineNanos, ScheduledExecutorService retryTimer) {
    super(phase);
    this.stub = stub;
    this.requests = requests;
    this.picker = picker;
    this.deadlineNanos = deadlineNanos;
    this.retryTimer = retryTimer;
  }

  @Override
  void start() {
    if (phase.value == DONE) {
      stopped.countDown();
      return;
    }
    received = 0;
    t0 = System.nanoTime();
    stub.withDeadlineAfter(deadlineNanos, TimeUnit.NANOSECONDS).allocate(requests[picker.next()], this);
  }

  @Override
  public void onNext(IdRange range) {
    received += range.getCount();
  }

  @Override
  public void onError(Throwable t) {
    countError(Status.fromThrowable(t).getCode().name());
    retryTimer.schedule(this::start, ERROR_PAUSE_MILLIS, TimeUnit.MILLISECONDS);
  }

  @Override
  public void onCompleted() {
    recordCall(System.nanoTime() - t0, received);
    start();
  }

  @Override
  boolean await(long millis) throws InterruptedException {
    return stopped.await(millis, TimeUnit.MILLISECONDS);
  }
}
