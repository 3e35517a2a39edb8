package dev.idgen.server.http;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import com.google.rpc.BadRequest;
import com.google.rpc.DebugInfo;
import com.google.rpc.ErrorInfo;
import com.google.rpc.Help;
import com.google.rpc.LocalizedMessage;
import com.google.rpc.PreconditionFailure;
import com.google.rpc.QuotaFailure;
import com.google.rpc.RequestInfo;
import com.google.rpc.ResourceInfo;
import com.google.rpc.RetryInfo;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpHeaders;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.ServerErrorHandler;
import com.linecorp.armeria.server.ServiceConfig;
import com.linecorp.armeria.server.ServiceRequestContext;
import com.linecorp.armeria.server.grpc.UnframedGrpcErrorHandler;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.server.status.ErrorStatus;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import java.util.Base64;
import javax.annotation.Nullable;

/**
 * Every error of the HTTP port as {@code google.rpc.Status} JSON ({@code code}, {@code message},
 * {@code details} with their {@code @type}), under the HTTP status of its code (AIP-193's map, {@link #httpStatus}).
 * Two sources: a call that the service ends with an error ({@link #callErrors}: the details are those the gRPC
 * port sends in its trailers), and a request that never reaches a call ({@link #requestErrors}: a body that is
 * not JSON, a path with no route, a wrong method), mapped the other way, from the HTTP status to a code.
 *
 * <p>Thread-safe: stateless.
 */
@ThreadSafe
final class HttpErrors {

  /** The detail types a status may carry, so that JSON names their fields rather than bytes. */
  private static final JsonFormat.Printer JSON = JsonFormat.printer()
      .omittingInsignificantWhitespace() // one line, as the answers of the calls
      .usingTypeRegistry(JsonFormat.TypeRegistry.newBuilder()
          .add(ErrorInfo.getDescriptor())
          .add(RetryInfo.getDescriptor())
          .add(BadRequest.getDescriptor())
          .add(PreconditionFailure.getDescriptor())
          .add(QuotaFailure.getDescriptor())
          .add(ResourceInfo.getDescriptor())
          .add(RequestInfo.getDescriptor())
          .add(DebugInfo.getDescriptor())
          .add(Help.getDescriptor())
          .add(LocalizedMessage.getDescriptor())
          .build());

  private static final String GRPC_STATUS = "grpc-status";
  private static final String GRPC_STATUS_DETAILS_BIN = "grpc-status-details-bin";

  private HttpErrors() {}

  /** The HTTP status of a gRPC code: google.rpc.Code's mapping (AIP-193), as Google's HTTP APIs answer. */
  static HttpStatus httpStatus(Status.Code code) {
    return switch (code) {
      case OK -> HttpStatus.OK;
      case CANCELLED -> HttpStatus.CLIENT_CLOSED_REQUEST; // 499
      case INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE -> HttpStatus.BAD_REQUEST;
      case DEADLINE_EXCEEDED -> HttpStatus.GATEWAY_TIMEOUT;
      case NOT_FOUND -> HttpStatus.NOT_FOUND;
      case ALREADY_EXISTS, ABORTED -> HttpStatus.CONFLICT;
      case PERMISSION_DENIED -> HttpStatus.FORBIDDEN;
      case UNAUTHENTICATED -> HttpStatus.UNAUTHORIZED;
      case RESOURCE_EXHAUSTED -> HttpStatus.TOO_MANY_REQUESTS;
      case UNIMPLEMENTED -> HttpStatus.NOT_IMPLEMENTED;
      case UNAVAILABLE -> HttpStatus.SERVICE_UNAVAILABLE;
      case UNKNOWN, INTERNAL, DATA_LOSS -> HttpStatus.INTERNAL_SERVER_ERROR;
    };
  }

  /** The code of a request refused before any call: the inverse of {@link #httpStatus}, where it is one. */
  static Status.Code code(HttpStatus status) {
    return switch (status.code()) {
      case 400, 411, 413, 414, 415, 431 -> Status.Code.INVALID_ARGUMENT;
      case 401 -> Status.Code.UNAUTHENTICATED;
      case 403 -> Status.Code.PERMISSION_DENIED;
      case 404 -> Status.Code.NOT_FOUND;
      case 405, 501 -> Status.Code.UNIMPLEMENTED;
      case 408, 504 -> Status.Code.DEADLINE_EXCEEDED;
      case 409 -> Status.Code.ABORTED;
      case 429 -> Status.Code.RESOURCE_EXHAUSTED;
      case 503 -> Status.Code.UNAVAILABLE;
      default -> status.isServerError() ? Status.Code.INTERNAL : Status.Code.UNKNOWN;
    };
  }

  /** A call's error: its status and the details of its trailers, as the gRPC port would send them. */
  static UnframedGrpcErrorHandler callErrors() {
    return (ctx, status, response) -> {
      com.google.rpc.Status proto = details(response);
      if (proto == null || proto.getCode() != status.getCode().value()) {
        proto = com.google.rpc.Status.newBuilder()
            .setCode(status.getCode().value())
            .setMessage(status.getDescription() == null ? status.getCode().name() : status.getDescription())
            .build();
      }
      return json(httpStatus(status.getCode()), proto).toHttpResponse();
    };
  }

  /** The trailers' {@code grpc-status-details-bin}, decoded; null if there is none or it does not parse. */
  @Nullable
  private static com.google.rpc.Status details(AggregatedHttpResponse response) {
    HttpHeaders trailers = response.trailers().isEmpty() ? response.headers() : response.trailers();
    String bin = trailers.get(GRPC_STATUS_DETAILS_BIN);
    if (bin == null || bin.isEmpty()) {
      return null;
    }
    try {
      return com.google.rpc.Status.parseFrom(Base64.getDecoder().decode(bin));
    } catch (InvalidProtocolBufferException | IllegalArgumentException e) {
      return null; // the code and message of the status still go out
    }
  }

  /** Requests that no call answers: the same JSON, with a message that says what to change. */
  static ServerErrorHandler requestErrors() {
    return new ServerErrorHandler() {
      @Nullable
      @Override
      public HttpResponse onServiceException(ServiceRequestContext ctx, Throwable cause) {
        return null; // Armeria's default turns it into a status, which renderStatus writes
      }

      @Nullable
      @Override
      public AggregatedHttpResponse renderStatus(@Nullable ServiceRequestContext ctx, ServiceConfig config,
          @Nullable RequestHeaders headers, HttpStatus status, @Nullable String description,
          @Nullable Throwable cause) {
        return json(status, requestError(headers, status, description, cause));
      }
    };
  }

  static com.google.rpc.Status requestError(@Nullable RequestHeaders headers, HttpStatus status,
      @Nullable String description, @Nullable Throwable cause) {
    String request = headers == null ? "the request" : headers.method() + " " + headers.path();
    Status.Code code = code(status);
    if (status.code() == 400) {
      // The transcoder could not read the body as JSON: its parser's words say where.
      String why = cause == null ? description : rootMessage(cause);
      return StatusProto.fromThrowable(ErrorStatus.of(ErrorReason.MALFORMED_REQUEST,
              request + ": the body is not a JSON object of the request's fields (" + why + "). Send"
                  + " Content-Type: application/json and a body such as {\"count\": 10}; docs/http.md lists each"
                  + " route's fields")
          .exception());
    }
    String message = switch (status.code()) {
      case 404 -> "no HTTP/JSON route for " + request + ": docs/http.md lists the routes (e.g. POST"
          + " /v1/sequences/{sequence}:allocate)";
      case 405 -> request + ": this path takes another method; docs/http.md lists each route's method";
      case 413 -> request + ": the body is larger than idgen.limits.max-inbound-message-size";
      case 415 -> request + ": send the body as Content-Type: application/json";
      default -> request + ": " + (description != null ? description : status.reasonPhrase());
    };
    return com.google.rpc.Status.newBuilder().setCode(code.value()).setMessage(message).build();
  }

  private static String rootMessage(Throwable cause) {
    Throwable t = cause;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    // Jackson appends the source's description on a line of its own: the first line says what and where.
    int newline = message.indexOf('\n');
    return (newline < 0 ? message : message.substring(0, newline)).trim();
  }

  private static AggregatedHttpResponse json(HttpStatus status, com.google.rpc.Status proto) {
    String body;
    try {
      body = JSON.print(proto);
    } catch (InvalidProtocolBufferException e) {
      // A detail of a type not in the registry: the code and the message still go out.
      body = "{\"code\":" + proto.getCode() + ",\"message\":\"" + escape(proto.getMessage()) + "\"}";
    }
    return AggregatedHttpResponse.of(
        ResponseHeaders.builder(status)
            .contentType(MediaType.JSON_UTF_8)
            .addInt(GRPC_STATUS, proto.getCode())
            .set(HttpHeaderNames.CACHE_CONTROL, "no-store")
            .build(),
        com.linecorp.armeria.common.HttpData.ofUtf8(body + "\n"));
  }

  private static String escape(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }
}
