package dev.idgen.server.api;

import dev.idgen.api.v1.ErrorReason;
import dev.idgen.core.AdvanceNotConfirmedException;
import dev.idgen.core.ChangeNotConfirmedException;
import dev.idgen.core.ChangeRefusedException;
import dev.idgen.core.FloorAtMaxException;
import dev.idgen.core.IdGenException;
import dev.idgen.core.IdRange;
import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.NotOwnerException;
import dev.idgen.core.RangeAboveMaxException;
import dev.idgen.core.ReservationRefusedException;
import dev.idgen.core.SequenceAlreadyExistsException;
import dev.idgen.core.SequenceChangedException;
import dev.idgen.core.SequenceDeletedException;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.server.status.ErrorStatus;
import dev.idgen.server.transport.WorkerPool;
import io.grpc.Deadline;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.RejectedExecutionException;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where exceptions become gRPC statuses.
 *
 * <p>Each {@link IdGenException} is an outcome the caller can act on: it maps to one
 * {@link ErrorReason}, hence one status code, with the exception's message as the description (the
 * core's messages name the sequence, the field and the limit) and the same facts as {@code ErrorInfo}
 * metadata, for programs ({@link ErrorStatus}). Anything else is a bug of ours: the caller gets INTERNAL
 * with a generic description, which leaks no internals, and the exception is logged here, once, at ERROR
 * with its stack trace.
 *
 * <p>Stateless; thread-safe.
 */
final class StatusMapper {

  private static final Logger log = LoggerFactory.getLogger(StatusMapper.class);

  static final String INTERNAL_DESCRIPTION = "internal error in idgen-server (logged on the server)";

  /**
   * What a failed call was about: the request field that names its sequence ({@code sequence} in
   * AllocateRequest, {@code name} elsewhere) and the name the request gave ("" if none).
   */
  record Subject(String nameField, String sequence) {
    static final Subject NONE = new Subject("name", "");

    static Subject allocate(String sequence) {
      return new Subject("sequence", sequence);
    }

    static Subject admin(String name) {
      return new Subject("name", name);
    }
  }

  private StatusMapper() {}

  /**
   * The status for {@code error}, thrown by a call about {@code subject} whose deadline is
   * {@code deadline} (null: none), as an exception whose trailers carry the details. A store timeout
   * that happened because the call's own deadline passed is DEADLINE_EXCEEDED, as the proto documents,
   * rather than UNAVAILABLE.
   */
  static StatusRuntimeException toException(Throwable error, @Nullable Deadline deadline, Subject subject) {
    if (error instanceof StatusRuntimeException e) {
      return e;
    }
    if (error instanceof StatusException e) {
      return e.getStatus().asRuntimeException(e.getTrailers());
    }
    String message = error.getMessage();
    if (error instanceof InvalidRequestException e) {
      return invalid(e, subject);
    }
    if (error instanceof SequenceNotFoundException) {
      return withSequence(ErrorStatus.of(ErrorReason.SEQUENCE_NOT_FOUND, message), subject).exception();
    }
    if (error instanceof SequenceDeletedException e) {
      ErrorStatus status = ErrorStatus.of(ErrorReason.SEQUENCE_DELETED, message).put("sequence", e.sequence())
          .put("deleteTime", e.deleteTime().toString()).put("expireTime", e.expireTime().toString());
      if (e.purged()) {
        status.put("purged", "true");
      }
      return status.exception();
    }
    if (error instanceof SequenceChangedException e) {
      return ErrorStatus.of(ErrorReason.ETAG_MISMATCH, message).put("sequence", e.sequence())
          .put("etag", e.currentEtag()).exception();
    }
    if (error instanceof ChangeRefusedException e) {
      ErrorReason reason = switch (e.kind()) {
        case MAX_DECREASE -> ErrorReason.MAX_DECREASE;
        case FIELD_IMMUTABLE -> ErrorReason.FIELD_IMMUTABLE;
        case NOT_DELETED -> ErrorReason.SEQUENCE_NOT_DELETED;
        case PURGE_BEFORE_EXPIRY -> ErrorReason.PURGE_BEFORE_EXPIRY;
      };
      ErrorStatus status = ErrorStatus.of(reason, message).put("sequence", e.sequence());
      if (!e.field().isEmpty() && reason != ErrorReason.SEQUENCE_NOT_DELETED
          && reason != ErrorReason.PURGE_BEFORE_EXPIRY) {
        status.put("field", e.field());
      }
      return status.exception();
    }
    if (error instanceof ChangeNotConfirmedException e) {
      // In force in the store; the same call again completes it: a retry is the remedy.
      return ErrorStatus.of(ErrorReason.CHANGE_NOT_CONFIRMED, message).put("sequence", e.sequence())
          .put("unconfirmed", String.join(",", e.unconfirmed())).exception();
    }
    if (error instanceof SequenceAlreadyExistsException) {
      return withSequence(ErrorStatus.of(ErrorReason.SEQUENCE_ALREADY_EXISTS, message), subject).exception();
    }
    if (error instanceof SequenceExhaustedException e) {
      ErrorStatus status = ErrorStatus.of(ErrorReason.SEQUENCE_EXHAUSTED, message)
          .put("sequence", e.sequence())
          .put("max", e.max());
      if (e.requested() > 0) {
        status.put("requested", e.requested())
            .put("delivered", IdRange.total(e.delivered()));
      }
      return status.exception();
    }
    if (error instanceof FloorAtMaxException e) {
      return ErrorStatus.of(ErrorReason.FLOOR_AT_MAX, message)
          .put("sequence", e.sequence()).put("floor", e.floor()).put("max", e.max()).exception();
    }
    if (error instanceof RangeAboveMaxException e) {
      return ErrorStatus.of(ErrorReason.RESERVATION_ABOVE_MAX, message)
          .put("sequence", e.sequence()).put("max", e.max()).put("requested", e.requested())
          .put("remaining", e.remaining()).exception();
    }
    if (error instanceof ReservationRefusedException e) {
      ErrorStatus status = ErrorStatus.of(switch (e.why()) {
        case STRIPED -> ErrorReason.RESERVATION_STRIPED;
        case REQUEST_ID_REUSED -> ErrorReason.REQUEST_ID_REUSED;
      }, message).put("sequence", e.sequence());
      e.metadata().forEach(status::put);
      return status.exception();
    }
    if (error instanceof AdvanceNotConfirmedException e) {
      // The floor is in force; advancing again to it completes the confirmation: a retry is the remedy.
      return ErrorStatus.of(ErrorReason.ADVANCE_NOT_CONFIRMED, message)
          .put("sequence", e.sequence()).put("floor", e.floor())
          .put("unconfirmed", String.join(",", e.unconfirmed())).exception();
    }
    if (error instanceof NotOwnerException e) {
      return notOwner(e, false, subject);
    }
    if (error instanceof StoreUnavailableException) {
      if (deadline != null && deadline.isExpired()) {
        return withSequence(ErrorStatus.of(ErrorReason.RESERVE_WAIT_TIMED_OUT,
            "the call's deadline passed while waiting for a reserve: " + message), subject).exception();
      }
      return withSequence(ErrorStatus.of(ErrorReason.STORE_UNAVAILABLE, message), subject).exception();
    }
    if (error instanceof RejectedExecutionException e) {
      return WorkerPool.refusal(e); // the worker pool is full, or the server stopping
    }
    // A new IdGenException subclass without a mapping, or a bug: either way ours to fix, not the caller's.
    log.error("Unexpected error while serving a call; the caller gets INTERNAL", error);
    return ErrorStatus.of(ErrorReason.INTERNAL_ERROR, INTERNAL_DESCRIPTION).exception();
  }

  /**
   * A call of a strict sequence this server may not serve: NOT_OWNER for a call another server forwarded
   * here (it looks the owner up again), OWNER_UNAVAILABLE for a client's (nobody can serve it now).
   */
  static StatusRuntimeException notOwner(NotOwnerException e, boolean forwarded, Subject subject) {
    ErrorStatus status = ErrorStatus.of(forwarded ? ErrorReason.NOT_OWNER : ErrorReason.OWNER_UNAVAILABLE,
        e.getMessage());
    e.ownerTarget().ifPresent(owner -> status.put("owner", owner));
    // Never 0: a client that retries at once would only find the same state.
    status.retryAfter(e.retryAfter().compareTo(MIN_OWNER_RETRY) < 0 ? MIN_OWNER_RETRY : e.retryAfter());
    return withSequence(status, subject).exception();
  }

  private static final java.time.Duration MIN_OWNER_RETRY = java.time.Duration.ofMillis(100);

  private static StatusRuntimeException invalid(InvalidRequestException e, Subject subject) {
    String field = e.field();
    ErrorReason reason = switch (field) {
      case "name" -> ErrorReason.INVALID_SEQUENCE_NAME;
      case "count" -> e.limit().isPresent() ? ErrorReason.COUNT_ABOVE_LIMIT : ErrorReason.INVALID_COUNT;
      case "start" -> ErrorReason.INVALID_START;
      case "max" -> ErrorReason.INVALID_MAX;
      case "stripes" -> ErrorReason.INVALID_STRIPES;
      case "node_block_size" -> ErrorReason.INVALID_NODE_BLOCK_SIZE;
      case "dc_block_size" -> ErrorReason.INVALID_DC_BLOCK_SIZE;
      case "ordering" -> ErrorReason.INVALID_ORDERING;
      case "home_datacenter" -> ErrorReason.INVALID_HOME_DATACENTER;
      case "page_size" -> ErrorReason.INVALID_PAGE_SIZE;
      case "page_token" -> ErrorReason.INVALID_PAGE_TOKEN;
      case "request_id" -> ErrorReason.INVALID_REQUEST_ID;
      case "update_mask" -> ErrorReason.INVALID_UPDATE_MASK;
      default -> ErrorReason.INVALID_REQUEST;
    };
    ErrorStatus status = ErrorStatus.of(reason, e.getMessage());
    if (reason == ErrorReason.INVALID_SEQUENCE_NAME) {
      return status.badField(subject.nameField()).exception(); // the name itself is in the message only
    }
    if (reason != ErrorReason.INVALID_REQUEST) {
      status.badField(field);
    }
    e.limit().ifPresent(limit -> status.put("limit", limit));
    return withSequence(status, subject).exception();
  }

  /**
   * Adds the call's sequence as metadata, if its name is valid: metadata is for programs, and an
   * invalid name (of any length, any characters) is echoed in the message only.
   */
  private static ErrorStatus withSequence(ErrorStatus status, Subject subject) {
    String name = subject.sequence();
    if (name.isEmpty()) {
      return status;
    }
    try {
      SequenceDefinition.checkName(name);
    } catch (InvalidRequestException e) {
      return status;
    }
    return status.put("sequence", name);
  }
}
