package dev.idgen.chaos;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Records every range of every {@code Allocate} call on a channel, as the client receives it (with the
 * {@code ordering} it is stamped with), and every call that ends without delivering all it asked for. Client
 * stubs and raw callers both talk through it, so the record is taken at the one place where IDs enter a
 * client, whatever the client then does with them.
 *
 * <p>Each range is stamped with the time its call started: a call started after an {@code AdvanceSequence}
 * returned was necessarily served after it, so its ranges must lie above the floor. (The time a range is
 * processed by the client is not proof: a range sent just before the advance returned may be read after it.)
 *
 * <p>On a strict client's channels ({@code wholeCalls}) it also records each call whole when it closes
 * ({@link Recorder#call}): the time just before it was started, the time its status arrived, its outcome and
 * its ranges, for the checker's ordering check of strict sequences.
 */
final class RecordingInterceptor implements ClientInterceptor {
  private final Recorder recorder;
  private final int server;
  private final boolean wholeCalls;

  /** Records into {@code recorder} the calls of a channel to server slot {@code server}. */
  RecordingInterceptor(Recorder recorder, int server) {
    this(recorder, server, false);
  }

  /** As above, and each call whole too if {@code wholeCalls} (a strict client's channel). */
  RecordingInterceptor(Recorder recorder, int server, boolean wholeCalls) {
    this.recorder = recorder;
    this.server = server;
    this.wholeCalls = wholeCalls;
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
      // The call's ranges (wholeCalls only), {first, count, stride} triples in ranges[0..n), and how many of
      // them did not say ORDERING_STRICT. Only the listener's callbacks touch them, and gRPC runs a call's
      // callbacks one after the other (a serializing executor: each happens-before the next).
      private long[] ranges = new long[6];
      private int n;
      private int unmarked;

      @Override
      public void start(Listener<RespT> listener, Metadata headers) {
        // Before the call starts, so before its request can be sent: "started after X" is then certain.
        startNanos = recorder.clock().nanos();
        recorder.callStarted();
        super.start(new SimpleForwardingClientCallListener<>(listener) {
          @Override
          public void onMessage(RespT message) {
            IdRange range = (IdRange) message;
            received.addAndGet(range.getCount());
            // With its stamp: the checker holds every range of a strict sequence to ORDERING_STRICT, whoever
            // asked (a stub caches a range that says per-server).
            recorder.stampedRange(sequence, server, startNanos, recorder.clock().nanos(), range.getFirst(),
                range.getCount(), range.getStride(), range.getOrderingValue());
            if (wholeCalls) {
              if (n + 3 > ranges.length) {
                ranges = Arrays.copyOf(ranges, 2 * ranges.length);
              }
              ranges[n++] = range.getFirst();
              ranges[n++] = range.getCount();
              ranges[n++] = range.getStride();
              if (range.getOrdering() != Ordering.ORDERING_STRICT) {
                unmarked++;
              }
            }
            super.onMessage(message);
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            // After the call's last range and its status: "completed before Y started" is then certain.
            long endNanos = recorder.clock().nanos();
            try {
              if (!status.isOk() || received.get() != requested) {
                recorder.failedCall(sequence, requested, received.get(), status.getCode().name());
              }
              if (wholeCalls) {
                recorder.call(sequence, server, startNanos, endNanos, outcome(status, trailers), unmarked,
                    Arrays.copyOf(ranges, n));
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

  /** {@code OK}, or the status code and, if the server gave one, idgen's ErrorInfo reason ({@code CODE:REASON}). */
  static String outcome(Status status, Metadata trailers) {
    if (status.isOk()) {
      return "OK";
    }
    String code = status.getCode().name();
    com.google.rpc.Status details = trailers == null ? null : StatusProto.fromStatusAndTrailers(status, trailers);
    if (details != null) {
      for (Any any : details.getDetailsList()) {
        if (any.is(ErrorInfo.class)) {
          try {
            String reason = any.unpack(ErrorInfo.class).getReason();
            if (!reason.isEmpty()) {
              return code + ":" + reason;
            }
          } catch (InvalidProtocolBufferException e) {
            // the code says enough
          }
        }
      }
    }
    return code;
  }
}
