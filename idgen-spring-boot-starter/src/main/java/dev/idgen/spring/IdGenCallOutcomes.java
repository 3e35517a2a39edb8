package dev.idgen.spring;

import com.google.errorprone.annotations.Immutable;
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The outcome of the client's last {@code Allocate} call to each server (by channel authority) and for each
 * sequence: what the health indicator reports. A client interceptor, installed by the auto-configuration; it
 * records once per call (one per lease), never on the path of {@code IdSource.next()}.
 *
 * <p>Threads: any number; each record replaces the previous one of its key in a concurrent map.
 */
@ThreadSafe
public final class IdGenCallOutcomes implements ClientInterceptor {
  /** A call's final status, and when it ended. */
  @Immutable
  public record Outcome(Status.Code code, String description, Instant at) {
    /** Whether the server answered (anything but UNAVAILABLE or DEADLINE_EXCEEDED). */
    public boolean reached() {
      return code != Status.Code.UNAVAILABLE && code != Status.Code.DEADLINE_EXCEEDED;
    }

    /**
     * Whether the server refused the request with a status that retrying does not fix (the client's reasons
     * REJECTED and EXHAUSTED): the sequence does not exist, the client may not use it, it is exhausted.
     */
    public boolean refused() {
      return switch (code) {
        case OK, UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, ABORTED, RESOURCE_EXHAUSTED -> false;
        default -> true;
      };
    }

    @Override
    public String toString() {
      return code + (description == null ? "" : ": " + description) + " at " + at;
    }
  }

  private final Clock clock;
  private final ConcurrentMap<String, Outcome> servers = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, Outcome> sequences = new ConcurrentHashMap<>();

  /** Records with the system clock. */
  public IdGenCallOutcomes() {
    this(Clock.systemUTC());
  }

  IdGenCallOutcomes(Clock clock) {
    this.clock = clock;
  }

  /**
   * The last outcome per server (channel authority, e.g. {@code idgen-1:7070}), sorted by server.
   *
   * @return a snapshot
   */
  public Map<String, Outcome> servers() {
    return new TreeMap<>(servers);
  }

  /**
   * The last outcome per sequence, sorted by sequence.
   *
   * @return a snapshot
   */
  public Map<String, Outcome> sequences() {
    return new TreeMap<>(sequences);
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    ClientCall<Q, R> call = next.newCall(method, options);
    if (!method.getFullMethodName().equals(IdGenGrpc.getAllocateMethod().getFullMethodName())) {
      return call;
    }
    String server = next.authority();
    return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
      /** Set by sendMessage, read in onClose, which gRPC runs after it. */
      private volatile String sequence;

      @Override
      public void start(Listener<R> listener, Metadata headers) {
        super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<R>(listener) {
          @Override
          public void onClose(Status status, Metadata trailers) {
            Outcome o = new Outcome(status.getCode(), status.getDescription(), clock.instant());
            // A call the client cancelled itself (it closed, or gave up a request) says nothing of the server.
            if (status.getCode() != Status.Code.CANCELLED) {
              servers.put(server, o);
              String s = sequence;
              if (s != null) {
                sequences.put(s, o);
              }
            }
            super.onClose(status, trailers);
          }
        }, headers);
      }

      @Override
      public void sendMessage(Q message) {
        if (message instanceof AllocateRequest request) {
          sequence = request.getSequence();
        }
        super.sendMessage(message);
      }
    };
  }
}
