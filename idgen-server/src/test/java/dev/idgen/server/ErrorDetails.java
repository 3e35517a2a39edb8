package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The details of an error status, decoded as a client in any language would: the bytes of the
 * {@code grpc-status-details-bin} trailer parsed as {@code google.rpc.Status}, and each detail parsed by
 * its type URL (no {@code StatusProto}, no {@code Any.unpack}). Fails the test if the trailer is missing,
 * disagrees with the status, or holds a detail twice.
 */
public record ErrorDetails(Status.Code code, String message, ErrorInfo errorInfo, RetryInfo retryInfo,
    BadRequest badRequest) {

  static final Metadata.Key<byte[]> DETAILS =
      Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);
  private static final String TYPE = "type.googleapis.com/";

  /** Decodes the details of {@code status} from {@code trailers}. */
  public static ErrorDetails of(Status status, Metadata trailers) {
    assertThat(trailers).as("trailers of %s", status).isNotNull();
    byte[] bytes = trailers.get(DETAILS);
    assertThat(bytes).as("grpc-status-details-bin of %s", status).isNotNull();
    com.google.rpc.Status details;
    try {
      details = com.google.rpc.Status.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new AssertionError("grpc-status-details-bin is not a google.rpc.Status", e);
    }
    assertThat(details.getCode()).as("google.rpc.Status.code").isEqualTo(status.getCode().value());
    assertThat(details.getMessage()).as("google.rpc.Status.message").isEqualTo(status.getDescription());
    ErrorInfo info = null;
    RetryInfo retry = null;
    BadRequest bad = null;
    List<String> types = new ArrayList<>();
    for (Any any : details.getDetailsList()) {
      types.add(any.getTypeUrl());
      try {
        switch (any.getTypeUrl()) {
          case TYPE + "google.rpc.ErrorInfo" -> info = ErrorInfo.parseFrom(any.getValue());
          case TYPE + "google.rpc.RetryInfo" -> retry = RetryInfo.parseFrom(any.getValue());
          case TYPE + "google.rpc.BadRequest" -> bad = BadRequest.parseFrom(any.getValue());
          default -> throw new AssertionError("unexpected detail " + any.getTypeUrl());
        }
      } catch (InvalidProtocolBufferException e) {
        throw new AssertionError("detail " + any.getTypeUrl() + " does not parse", e);
      }
    }
    assertThat(types).as("detail types").doesNotHaveDuplicates();
    assertThat(info).as("ErrorInfo of %s", status).isNotNull();
    assertThat(info.getDomain()).isEqualTo("idgen.dev");
    // Every UNAVAILABLE says when to retry; nothing else does.
    assertThat(retry != null).as("RetryInfo present").isEqualTo(status.getCode() == Status.Code.UNAVAILABLE);
    return new ErrorDetails(status.getCode(), status.getDescription(), info, retry, bad);
  }

  /** The details of a failed call's exception. */
  public static ErrorDetails of(StatusRuntimeException e) {
    return of(e.getStatus(), e.getTrailers());
  }

  /** The details of a failed call's exception, from any throwable that carries it. */
  public static ErrorDetails of(Throwable t) {
    assertThat(t).isInstanceOf(StatusRuntimeException.class);
    return of((StatusRuntimeException) t);
  }

  public String reason() {
    return errorInfo.getReason();
  }

  public Map<String, String> metadata() {
    return errorInfo.getMetadataMap();
  }

  /** The one field violation of the BadRequest; fails if there is none. */
  public String badField() {
    assertThat(badRequest).as("BadRequest").isNotNull();
    assertThat(badRequest.getFieldViolationsList()).hasSize(1);
    BadRequest.FieldViolation v = badRequest.getFieldViolations(0);
    assertThat(v.getDescription()).isEqualTo(message);
    return v.getField();
  }

  /** RetryInfo's delay in milliseconds; fails if there is none. */
  public long retryDelayMillis() {
    assertThat(retryInfo).as("RetryInfo").isNotNull();
    com.google.protobuf.Duration d = retryInfo.getRetryDelay();
    return java.time.Duration.ofSeconds(d.getSeconds(), d.getNanos()).toMillis();
  }
}
