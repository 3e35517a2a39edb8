package dev.idgen.server.http;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.protobuf.Message;
import com.linecorp.armeria.common.grpc.GrpcJsonMarshaller;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.server.status.ErrorStatus;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import javax.annotation.Nullable;

/**
 * Armeria's JSON marshaller, but a request it cannot read becomes {@link Malformed}, which
 * {@link #status} turns into INVALID_ARGUMENT [MALFORMED_REQUEST] naming the type, as the gRPC port's
 * request parsing guard does. Without it, a field of the wrong type (a word for {@code count}) ends the call
 * UNKNOWN, a 500.
 *
 * <p>Thread-safe: the marshaller it wraps is.
 */
@ThreadSafe
final class RequestJson implements GrpcJsonMarshaller {

  private final GrpcJsonMarshaller json;

  RequestJson(GrpcJsonMarshaller json) {
    this.json = json;
  }

  /** A request body that is JSON but not the request message. */
  static final class Malformed extends IOException {
    private static final long serialVersionUID = 1L;

    Malformed(String message, Throwable cause) {
      super(message, cause);
    }
  }

  @Override
  public <T> void serializeMessage(MethodDescriptor.Marshaller<T> marshaller, T message, OutputStream os)
      throws IOException {
    json.serializeMessage(marshaller, message, os);
  }

  @Override
  public <T> T deserializeMessage(MethodDescriptor.Marshaller<T> marshaller, InputStream is) throws IOException {
    try {
      return json.deserializeMessage(marshaller, is);
    } catch (IOException | RuntimeException e) {
      String type = marshaller instanceof MethodDescriptor.PrototypeMarshaller<T> p
          && p.getMessagePrototype() instanceof Message m ? m.getDescriptorForType().getFullName() : "request";
      throw new Malformed("the body is not a valid " + type + " in JSON (" + e.getMessage() + "). Check each"
          + " field's name and type: int64 fields take a number or a string of digits, e.g. {\"count\": 10};"
          + " docs/http.md lists each route's fields", e);
    }
  }

  /**
   * The status of a call that {@link Malformed} ended, its details added to {@code trailers}; null for any
   * other cause (Armeria's own mapping then applies).
   */
  @Nullable
  static Status status(@Nullable Throwable cause, Metadata trailers) {
    for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof Malformed malformed) {
        StatusRuntimeException e = ErrorStatus.of(ErrorReason.MALFORMED_REQUEST, malformed.getMessage()).exception();
        if (e.getTrailers() != null) {
          trailers.merge(e.getTrailers());
        }
        return e.getStatus();
      }
    }
    return null;
  }
}
