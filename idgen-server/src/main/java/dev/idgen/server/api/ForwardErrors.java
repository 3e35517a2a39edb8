package dev.idgen.server.api;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.core.Allocator;
import dev.idgen.server.status.ErrorStatus;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.Optional;

/**
 * What a failed forwarded call means: whether the owner was misrouted (not the owner any more, or not
 * reachable: the callers may look again), and the status its callers see, with the retry delay. A failure
 * that is not idgen's own answer tells the allocator to read the owner row again.
 *
 * <p>Threads: no state of its own; the allocator is thread-safe.
 */
@ThreadSafe
final class ForwardErrors {
  private final Allocator allocator;

  ForwardErrors(Allocator allocator) {
    this.allocator = allocator;
  }

  /** The owner refused the call as not its own, or could not be reached at all. */
  static boolean misrouted(Throwable t) {
    Optional<String> reason = reason(t);
    return reason.map(r -> r.equals(ErrorReason.NOT_OWNER.name()))
        .orElse(Status.fromThrowable(t).getCode() == Status.Code.UNAVAILABLE);
  }

  /** What callers see when the forwarded call of {@code sequence} to the owner at {@code target} failed. */
  StatusRuntimeException failure(Throwable t, String sequence, String target) {
    Status status = Status.fromThrowable(t);
    Metadata trailers = Status.trailersFromThrowable(t);
    Optional<String> reason = reason(t);
    if (reason.isPresent() && !reason.get().equals(ErrorReason.NOT_OWNER.name())) {
      // idgen's own answer (NOT_FOUND, OUT_OF_RANGE, OWNER_UNAVAILABLE, SERVER_BUSY ...): as it is.
      return status.asRuntimeException(trailers);
    }
    // Not the owner any more, or not reachable (dead, cut off, stopped): the next call reads the owner
    // row again before it forwards anywhere.
    allocator.ownerRefused(sequence, target);
    Duration retry = reason.isPresent() ? Duration.ofMillis(100) : allocator.ownerLease().dividedBy(4);
    return ErrorStatus.of(ErrorReason.OWNER_UNAVAILABLE, "sequence '" + sequence + "' is strict, and its owner "
            + target + " could not serve the forwarded call: " + status.getCode() + " "
            + status.getDescription())
        .put("sequence", sequence).put("owner", target).retryAfter(retry).exception();
  }

  /** The ErrorInfo reason of an idgen error status, if it has one. */
  static Optional<String> reason(Throwable t) {
    com.google.rpc.Status details = StatusProto.fromThrowable(t);
    if (details == null) {
      return Optional.empty();
    }
    for (com.google.protobuf.Any any : details.getDetailsList()) {
      if (any.is(com.google.rpc.ErrorInfo.class)) {
        try {
          com.google.rpc.ErrorInfo info = any.unpack(com.google.rpc.ErrorInfo.class);
          if (ErrorStatus.DOMAIN.equals(info.getDomain())) {
            return Optional.of(info.getReason());
          }
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
          return Optional.empty();
        }
      }
    }
    return Optional.empty();
  }
}
