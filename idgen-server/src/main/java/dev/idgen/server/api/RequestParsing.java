package dev.idgen.server.api;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.protobuf.Message;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.server.status.ErrorStatus;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers a request whose bytes are not a valid message of its method's request type with
 * {@code INVALID_ARGUMENT} and a message that names the type and the parse error (reason
 * {@code MALFORMED_REQUEST}, the type in the metadata; no {@code BadRequest}: no one field is at fault).
 *
 * <p>Why: gRPC parses the request before any interceptor sees it; when parsing fails it closes the call with
 * {@code UNKNOWN "Application error processing RPC"}, which tells the caller nothing, and logs a SEVERE stack
 * trace for what is the client's mistake. {@link #guard} rebuilds a service with request marshallers that
 * never throw: on a parse failure they return {@code null} and leave the error in a thread-local, and an
 * outermost listener, which gRPC calls on the same thread right after parsing, closes the call with the
 * error and drops the call's remaining events. The service's name, methods and schema descriptor (for
 * reflection) are unchanged.
 *
 * <p>Thread-safe: the thread-local holds the error only between a parse and the {@code onMessage} that
 * follows it on the same thread.
 */
@ThreadSafe
public final class RequestParsing {
  private static final Logger log = LoggerFactory.getLogger(RequestParsing.class);
  private static final ThreadLocal<String> LAST_ERROR = new ThreadLocal<>();

  private RequestParsing() {}

  /** The service, its requests parsed as described above. */
  public static ServerServiceDefinition guard(ServerServiceDefinition service) {
    ServiceDescriptor original = service.getServiceDescriptor();
    List<ServerMethodDefinition<?, ?>> methods = new ArrayList<>();
    ServiceDescriptor.Builder descriptor = ServiceDescriptor.newBuilder(original.getName())
        .setSchemaDescriptor(original.getSchemaDescriptor());
    for (ServerMethodDefinition<?, ?> method : service.getMethods()) {
      ServerMethodDefinition<?, ?> guarded = guard(method);
      descriptor.addMethod(guarded.getMethodDescriptor());
      methods.add(guarded);
    }
    ServerServiceDefinition.Builder builder = ServerServiceDefinition.builder(descriptor.build());
    methods.forEach(builder::addMethod);
    return builder.build();
  }

  private static <Q, A> ServerMethodDefinition<Q, A> guard(ServerMethodDefinition<Q, A> definition) {
    MethodDescriptor<Q, A> method = definition.getMethodDescriptor();
    String type = typeName(method);
    MethodDescriptor<Q, A> lenient = method.toBuilder(
        LenientMarshaller.of(method.getRequestMarshaller(), type), method.getResponseMarshaller()).build();
    return ServerMethodDefinition.create(lenient, new GuardedHandler<>(definition.getServerCallHandler(),
        method.getFullMethodName(), type));
  }

  /** Closes a call whose request did not parse; otherwise the service's own handler. */
  private static final class GuardedHandler<Q, A> implements ServerCallHandler<Q, A> {
    private final ServerCallHandler<Q, A> handler;
    private final String methodName;
    private final String type;

    GuardedHandler(ServerCallHandler<Q, A> handler, String methodName, String type) {
      this.handler = handler;
      this.methodName = methodName;
      this.type = type;
    }

    @Override
    public ServerCall.Listener<Q> startCall(ServerCall<Q, A> call, Metadata headers) {
      ServerCall.Listener<Q> delegate = handler.startCall(call, headers);
      return new SimpleForwardingServerCallListener<Q>(delegate) {
        private boolean refused; // gRPC calls a listener one event at a time

        @Override
        public void onMessage(Q message) {
          if (message != null) {
            super.onMessage(message);
            return;
          }
          String error = LAST_ERROR.get();
          LAST_ERROR.remove();
          refused = true;
          log.debug("refused {}: {}", methodName, error);
          ErrorStatus.close(call, ErrorStatus.of(ErrorReason.MALFORMED_REQUEST, error).put("type", type)
              .exception());
        }

        @Override
        public void onHalfClose() {
          if (!refused) {
            super.onHalfClose();
          }
        }

        @Override
        public void onReady() {
          if (!refused) {
            super.onReady();
          }
        }
      };
    }
  }

  private static String typeName(MethodDescriptor<?, ?> method) {
    if (method.getRequestMarshaller() instanceof MethodDescriptor.PrototypeMarshaller<?> p
        && p.getMessagePrototype() instanceof Message m) {
      return m.getDescriptorForType().getFullName();
    }
    return "request of " + method.getFullMethodName();
  }

  /** The method's own marshaller, but a parse failure yields {@code null} and the error in the thread-local. */
  private static class LenientMarshaller<T> implements MethodDescriptor.Marshaller<T> {
    private final MethodDescriptor.Marshaller<T> strict;
    private final String type;

    LenientMarshaller(MethodDescriptor.Marshaller<T> strict, String type) {
      this.strict = strict;
      this.type = type;
    }

    /**
     * Keeps a protobuf marshaller's prototype visible: the HTTP/JSON transcoding (dev.idgen.server.http) finds
     * the request type through it.
     */
    static <T> LenientMarshaller<T> of(MethodDescriptor.Marshaller<T> strict, String type) {
      if (strict instanceof MethodDescriptor.PrototypeMarshaller<T> p) {
        return new LenientPrototypeMarshaller<>(p, type);
      }
      return new LenientMarshaller<>(strict, type);
    }

    @Override
    public InputStream stream(T value) {
      return strict.stream(value);
    }

    @Override
    public T parse(InputStream stream) {
      try {
        return strict.parse(stream);
      } catch (RuntimeException e) {
        Throwable cause = e.getCause() != null ? e.getCause() : e;
        LAST_ERROR.set("the request is not a valid " + type + " message (" + cause.getMessage() + ")");
        return null;
      }
    }
  }

  /** A {@link LenientMarshaller} of a protobuf message type, which it names. */
  private static final class LenientPrototypeMarshaller<T> extends LenientMarshaller<T>
      implements MethodDescriptor.PrototypeMarshaller<T> {
    private final MethodDescriptor.PrototypeMarshaller<T> prototype;

    LenientPrototypeMarshaller(MethodDescriptor.PrototypeMarshaller<T> strict, String type) {
      super(strict, type);
      this.prototype = strict;
    }

    @Override
    public T getMessagePrototype() {
      return prototype.getMessagePrototype();
    }

    @Override
    public Class<T> getMessageClass() {
      return prototype.getMessageClass();
    }
  }
}
