package dev.idgen.server.metrics;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdRange;
import dev.idgen.core.Allocator;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Counts Allocate calls by sequence and final status, and the IDs and leases they delivered
 * ({@code idgen_allocate_calls_total}, {@code idgen_ids_allocated_total}, {@code idgen_leases_total}).
 * It is the outermost interceptor of {@code idgen.v1.IdGen}, so calls refused by the access rules or cut
 * off by the call-duration limit are counted too; a call the client cancels counts as CANCELLED.
 *
 * <p>Sequences this server has not loaded are tagged {@value IdGenMetrics#OTHER_SEQUENCE}, so that made-up
 * names cannot create unbounded time series; {@link IdGenMetrics} folds loaded sequences beyond
 * {@code idgen.metrics.max-sequence-series} into it too.
 */
@ThreadSafe
public final class AllocateMetricsInterceptor implements ServerInterceptor {

  private final IdGenMetrics metrics;
  private final Allocator allocator;

  AllocateMetricsInterceptor(IdGenMetrics metrics, Allocator allocator) {
    this.metrics = metrics;
    this.allocator = allocator;
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
      ServerCallHandler<Q, A> next) {
    CallRecord record = new CallRecord();
    ServerCall<Q, A> counting = new SimpleForwardingServerCall<>(call) {
      @Override
      public void sendMessage(A message) {
        if (message instanceof IdRange range) {
          record.ids += range.getCount();
        }
        super.sendMessage(message);
      }

      @Override
      public void close(Status status, Metadata trailers) {
        record.end(status.getCode());
        super.close(status, trailers);
      }
    };
    return new SimpleForwardingServerCallListener<>(next.startCall(counting, headers)) {
      @Override
      public void onMessage(Q message) {
        if (message instanceof AllocateRequest request) {
          record.sequence = request.getSequence();
        }
        super.onMessage(message);
      }

      @Override
      public void onCancel() {
        record.end(Status.Code.CANCELLED);
        super.onCancel();
      }
    };
  }

  /** One call's tally; gRPC calls a call's methods one at a time, but not always on one thread. */
  private final class CallRecord {
    volatile String sequence = "";
    volatile long ids;
    private final AtomicBoolean ended = new AtomicBoolean();

    void end(Status.Code code) {
      if (ended.compareAndSet(false, true)) {
        String name = sequence;
        metrics.allocateCall(allocator.isLoaded(name) ? name : IdGenMetrics.OTHER_SEQUENCE, code, ids);
      }
    }
  }
}
