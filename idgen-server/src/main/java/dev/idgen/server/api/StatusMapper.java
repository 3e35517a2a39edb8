package dev.idgen.server.api;

import dev.idgen.core.AdvanceNotConfirmedException;
import dev.idgen.core.IdGenException;
import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.SequenceAlreadyExistsException;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.StoreUnavailableException;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where exceptions become gRPC statuses.
 *
 * <p>Each {@link IdGenException} is an outcome the caller can act on: it maps to its status code with the
 * exception's message as the description (the core's messages name the sequence, the field and the
 * limit). Anything else is a bug of ours: the caller gets INTERNAL with a generic description, which
 * leaks no internals, and the exception is logged here, once, at ERROR with its stack trace.
 */
final class StatusMapper {

  private static final Logger log = LoggerFactory.getLogger(StatusMapper.class);

  static final String INTERNAL_DESCRIPTION = "internal error in idgen-server (logged on the server)";

  private StatusMapper() {}

  /**
   * The status for {@code error}, thrown by a call whose deadline is {@code deadline} (null: none).
   * A store timeout that happened because the call's own deadline passed is DEADLINE_EXCEEDED, as the
   * proto documents, rather than UNAVAILABLE.
   */
  static Status toStatus(Throwable error, @Nullable Deadline deadline) {
    if (error instanceof StatusRuntimeException e) {
      return e.getStatus();
    }
    if (error instanceof StatusException e) {
      return e.getStatus();
    }
    if (error instanceof InvalidRequestException) {
      return Status.INVALID_ARGUMENT.withDescription(error.getMessage());
    }
    if (error instanceof SequenceNotFoundException) {
      return Status.NOT_FOUND.withDescription(error.getMessage());
    }
    if (error instanceof SequenceAlreadyExistsException) {
      return Status.ALREADY_EXISTS.withDescription(error.getMessage());
    }
    if (error instanceof SequenceExhaustedException) {
      return Status.RESOURCE_EXHAUSTED.withDescription(error.getMessage());
    }
    if (error instanceof AdvanceNotConfirmedException) {
      // The floor is in force; advancing again to it completes the confirmation: a retry is the remedy.
      return Status.UNAVAILABLE.withDescription(error.getMessage());
    }
    if (error instanceof StoreUnavailableException) {
      if (deadline != null && deadline.isExpired()) {
        return Status.DEADLINE_EXCEEDED.withDescription(
            "the call's deadline passed while waiting for a reserve: " + error.getMessage());
      }
      return Status.UNAVAILABLE.withDescription(error.getMessage());
    }
    // A new IdGenException subclass without a mapping, or a bug: either way ours to fix, not the caller's.
    log.error("Unexpected error while serving a call; the caller gets INTERNAL", error);
    return Status.INTERNAL.withDescription(INTERNAL_DESCRIPTION);
  }

  /** {@link #toStatus} as an exception to pass to {@code StreamObserver.onError}. */
  static StatusRuntimeException toException(Throwable error, @Nullable Deadline deadline) {
    return toStatus(error, deadline).asRuntimeException();
  }
}
