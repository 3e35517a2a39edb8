package dev.idgen.server.status;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import dev.idgen.api.v1.ErrorReason;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Builds an error status that a program can act on: the gRPC code of its {@link ErrorReason}, the
 * message, and a {@code google.rpc.Status} in the {@code grpc-status-details-bin} trailer with
 * <ul>
 *   <li>{@code ErrorInfo}: domain {@value #DOMAIN}, the reason's name, and the metadata put here;
 *   <li>{@code RetryInfo} on every {@code UNAVAILABLE} ({@link #DEFAULT_RETRY_DELAY} unless set);
 *   <li>{@code BadRequest} with one field violation, when {@link #badField} names the field.
 * </ul>
 * Each reason has one code ({@link #codeOf}), so a reason and its code never disagree.
 *
 * <p>A builder, used by one thread: {@code ErrorStatus.of(reason, message).put("sequence", s).exception()}.
 * The exception it returns is immutable; close a call with its {@code getStatus()} and
 * {@code getTrailers()}.
 */
public final class ErrorStatus {
  /** {@code ErrorInfo.domain} of every idgen error. */
  public static final String DOMAIN = "idgen.dev";
  /** The {@code RetryInfo} delay of an {@code UNAVAILABLE} that sets none: about a store's recovery. */
  public static final Duration DEFAULT_RETRY_DELAY = Duration.ofSeconds(1);

  private final ErrorReason reason;
  private final String message;
  private final Map<String, String> metadata = new LinkedHashMap<>();
  private Duration retryDelay = DEFAULT_RETRY_DELAY;
  private String field;

  private ErrorStatus(ErrorReason reason, String message) {
    this.reason = reason;
    this.message = message;
  }

  /** An error for {@code reason}, with {@code message} as the status description. */
  public static ErrorStatus of(ErrorReason reason, String message) {
    if (reason == ErrorReason.ERROR_REASON_UNSPECIFIED || reason == ErrorReason.UNRECOGNIZED) {
      throw new IllegalArgumentException("reason: " + reason);
    }
    return new ErrorStatus(reason, message);
  }

  /** Adds an {@code ErrorInfo} metadata entry; keys are lowerCamelCase. */
  @CanIgnoreReturnValue
  public ErrorStatus put(String key, String value) {
    metadata.put(key, value);
    return this;
  }

  /** Adds a number as {@code ErrorInfo} metadata, in decimal. */
  @CanIgnoreReturnValue
  public ErrorStatus put(String key, long value) {
    return put(key, Long.toString(value));
  }

  /** The {@code RetryInfo} delay; ignored unless the code is {@code UNAVAILABLE}. */
  @CanIgnoreReturnValue
  public ErrorStatus retryAfter(Duration delay) {
    this.retryDelay = delay;
    return this;
  }

  /**
   * The request field at fault: a {@code BadRequest} violation of it (described by the message) and a
   * {@code field} metadata entry.
   */
  @CanIgnoreReturnValue
  public ErrorStatus badField(String field) {
    this.field = field;
    return put("field", field);
  }

  /** The status as an exception, its trailers holding the details. */
  public StatusRuntimeException exception() {
    Status.Code code = codeOf(reason);
    com.google.rpc.Status.Builder status = com.google.rpc.Status.newBuilder()
        .setCode(code.value())
        .setMessage(message)
        .addDetails(Any.pack(ErrorInfo.newBuilder()
            .setReason(reason.name())
            .setDomain(DOMAIN)
            .putAllMetadata(metadata)
            .build()));
    if (code == Status.Code.UNAVAILABLE) {
      status.addDetails(Any.pack(RetryInfo.newBuilder()
          .setRetryDelay(com.google.protobuf.Duration.newBuilder()
              .setSeconds(retryDelay.getSeconds())
              .setNanos(retryDelay.getNano()))
          .build()));
    }
    if (field != null) {
      status.addDetails(Any.pack(BadRequest.newBuilder()
          .addFieldViolations(BadRequest.FieldViolation.newBuilder().setField(field).setDescription(message))
          .build()));
    }
    return StatusProto.toStatusRuntimeException(status.build());
  }

  /** Closes a server call with this error, details included. */
  public static void close(io.grpc.ServerCall<?, ?> call, StatusRuntimeException error) {
    Metadata trailers = error.getTrailers();
    call.close(error.getStatus(), trailers != null ? trailers : new Metadata());
  }

  /** The one gRPC code each reason is sent with. */
  public static Status.Code codeOf(ErrorReason reason) {
    return switch (reason) {
      case INVALID_SEQUENCE_NAME, INVALID_COUNT, COUNT_ABOVE_LIMIT, INVALID_START, INVALID_MAX,
          INVALID_STRIPES, INVALID_NODE_BLOCK_SIZE, INVALID_DC_BLOCK_SIZE, INVALID_PAGE_SIZE,
          INVALID_PAGE_TOKEN, MALFORMED_REQUEST, INVALID_REQUEST, INVALID_ORDERING,
          INVALID_HOME_DATACENTER, INVALID_REQUEST_ID, INVALID_UPDATE_MASK -> Status.Code.INVALID_ARGUMENT;
      case SEQUENCE_NOT_FOUND, SEQUENCE_DELETED -> Status.Code.NOT_FOUND;
      case ETAG_MISMATCH -> Status.Code.ABORTED;
      case SEQUENCE_ALREADY_EXISTS -> Status.Code.ALREADY_EXISTS;
      case SEQUENCE_EXHAUSTED, RESERVATION_ABOVE_MAX -> Status.Code.OUT_OF_RANGE;
      case FLOOR_AT_MAX, RESERVATION_STRIPED, REQUEST_ID_REUSED, FIELD_IMMUTABLE, MAX_DECREASE, SEQUENCE_NOT_DELETED,
          PURGE_BEFORE_EXPIRY -> Status.Code.FAILED_PRECONDITION;
      case STORE_UNAVAILABLE, ADVANCE_NOT_CONFIRMED, SERVER_BUSY, SERVER_SHUTTING_DOWN, OWNER_UNAVAILABLE,
          NOT_OWNER, RANGES_WITHDRAWN, CHANGE_NOT_CONFIRMED -> Status.Code.UNAVAILABLE;
      case RESERVE_WAIT_TIMED_OUT, CALL_TOO_LONG -> Status.Code.DEADLINE_EXCEEDED;
      case UNAUTHENTICATED -> Status.Code.UNAUTHENTICATED;
      case PERMISSION_DENIED -> Status.Code.PERMISSION_DENIED;
      case INTERNAL_ERROR -> Status.Code.INTERNAL;
      case ERROR_REASON_UNSPECIFIED, UNRECOGNIZED -> Status.Code.UNKNOWN;
    };
  }
}
