package dev.idgen.chaos;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Records every range of every {@code Allocate} call on a channel, as the client receives it, and every call
 * that ends without delivering all it asked for. Client stubs and raw callers both talk through it, so the
 * record is taken at the one place where IDs enter a client, whatever the client then does with them.
 *
 * <p>Each range is stamped with the time its call started: a call started after an {@code AdvanceSequence}
 * returned was necessarily served after it, so its ranges must lie above the floor. (The time a range is
 * processed by the client is not proof: a range sent just before the advance returned may be read after it.)
 */
final class RecordingInterceptor implements ClientInterceptor {
  private final Recorder recorder;
  private final int server;

  /** Records into {@code recorder} the calls of a channel to server slot {@code server}. */
  RecordingInterceptor(Recorder recorder, int server) {
    this.recorder = recorder;
    this.server = server;
  }

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
      CallOptions callOptions, Channel next) {
    ClientCall<ReqT, RespT> call = next.newCall(method, callOptions);
    if (!method.getFullMethodName().equals(IdGenGrpc.getAllocateMethod().getFullMethodName())) {
      return call;
    }
    return new SimpleForwardingClientCall<>(call) {
      private volatile String sequence = "?";
      private volatile long requested;
      private final AtomicLong received = new AtomicLong();
      private volatile long startNanos = recorder.clock().nanos();

      @Override
      public void start(Listener<RespT> listener, Metadata headers) {
        startNanos = recorder.clock().nanos();
        recorder.callStarted();
        super.start(new SimpleForwardingClientCallListener<>(listener) {
          @Override
          public void onMessage(RespT message) {
            IdRange range = (IdRange) message;
            received.addAndGet(range.getCount());
            recorder.range(sequence, server, startNanos, range.getFirst(), range.getCount(), range.getStride());
            super.onMessage(message);
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            try {
              if (!status.isOk() || received.get() != requested) {
                recorder.failedCall(sequence, requested, received.get(), status.getCode().name());
              }
            } finally {
              recorder.callClosed();
            }
            super.onClose(status, trailers);
          }
        }, headers);
      }

      @Override
      public void sendMessage(ReqT message) {
        AllocateRequest request = (AllocateRequest) message;
        sequence = request.getSequence();
        requested = request.getCount();
        super.sendMessage(message);
      }
    };
  }
}
