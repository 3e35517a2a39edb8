package dev.idgen.server.transport;

import com.google.common.util.concurrent.MoreExecutors;
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.server.status.ErrorStatus;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a service's calls from the network thread to the {@link WorkerPool}. The server runs every call on
 * the Netty event loop that read it (no hand-off per call: see {@code GrpcModule}); the services whose
 * handlers block on the store ({@code SequenceAdmin}) are wrapped with this, so that a slow store never
 * stalls a network thread.
 *
 * <p>Thread-safe. gRPC's promise to a call's listener holds: its callbacks run one at a time and in order
 * (on a sequential executor per call), in the call's {@link Context}. A callback that throws closes the call
 * with INTERNAL, as an exception would have on gRPC's own executor (with UNKNOWN), instead of leaving it open.
 */
@ThreadSafe
public final class OffloadInterceptor implements ServerInterceptor {
  private static final Logger log = LoggerFactory.getLogger(OffloadInterceptor.class);

  private final Executor workers;

  OffloadInterceptor(Executor workers) {
    this.workers = workers;
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
      ServerCallHandler<Q, A> next) {
    // Starting the call is cheap (the stub's handler only asks for the request); the work is in the callbacks.
    ServerCall.Listener<Q> delegate = next.startCall(call, headers);
    Executor serial = MoreExecutors.newSequentialExecutor(workers);
    Context context = Context.current();
    return new ServerCall.Listener<>() {
      private void run(Runnable callback) {
        Runnable task = context.wrap(() -> {
          try {
            callback.run();
          } catch (RuntimeException e) {
            log.error("Unexpected error in {}; the caller gets INTERNAL",
                call.getMethodDescriptor().getFullMethodName(), e);
            ErrorStatus.close(call, ErrorStatus.of(ErrorReason.INTERNAL_ERROR, "internal error").exception());
          }
        });
        try {
          serial.execute(task);
        } catch (RejectedExecutionException e) {
          ErrorStatus.close(call, WorkerPool.refusal(e));
        }
      }

      @Override
      public void onMessage(Q message) {
        run(() -> delegate.onMessage(message));
      }

      @Override
      public void onHalfClose() {
        run(delegate::onHalfClose);
      }

      @Override
      public void onCancel() {
        run(delegate::onCancel);
      }

      @Override
      public void onComplete() {
        run(delegate::onComplete);
      }

      @Override
      public void onReady() {
        run(delegate::onReady);
      }
    };
  }
}
