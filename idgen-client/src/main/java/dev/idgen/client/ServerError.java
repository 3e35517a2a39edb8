package dev.idgen.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;

/**
 * What a failed {@code Allocate} means for a source, decided on the server's {@code ErrorInfo} reason
 * (domain {@value #DOMAIN}), not on the status code: a code is shared with gRPC's own failures and with
 * proxies (a proxy's rate limit is {@code RESOURCE_EXHAUSTED}), a reason is idgen's alone. A status
 * without idgen's details (gRPC, a proxy, a server older than 0.2) falls back to its code.
 *
 * <p>Immutable.
 */
final class ServerError {
  static final String DOMAIN = "idgen.dev";

  /** What the source does about it. */
  enum Outcome {
    /** The sequence reached its max: the source is done for good. */
    EXHAUSTED,
    /** The lease asked for more than the server's per-call limit: ask again for at most {@link #limit()}. */
    CLAMP,
    /** A failure that passes: retry after a back-off, on another server if there is one. */
    RETRY,
    /** Retrying the same request does not help: report it to the callers. */
    REJECT
  }

  private final Status status;
  private final Outcome outcome;
  private final long limit;
  private final long retryDelayNanos;

  private ServerError(Status status, Outcome outcome, long limit, long retryDelayNanos) {
    this.status = status;
    this.outcome = outcome;
    this.limit = limit;
    this.retryDelayNanos = retryDelayNanos;
  }

  /** Classifies the failure of a call that asked for {@code requested} IDs. */
  static ServerError of(Throwable t, long requested) {
    Status status = Status.fromThrowable(t);
    ErrorInfo info = null;
    long retryDelay = -1;
    com.google.rpc.Status details = StatusProto.fromThrowable(t);
    if (details != null) {
      for (Any any : details.getDetailsList()) {
        try {
          if (any.is(ErrorInfo.class)) {
            ErrorInfo e = any.unpack(ErrorInfo.class);
            if (DOMAIN.equals(e.getDomain())) {
              info = e;
            }
          } else if (any.is(RetryInfo.class)) {
            com.google.protobuf.Duration d = any.unpack(RetryInfo.class).getRetryDelay();
            if (d.getSeconds() >= 0 && d.getNanos() >= 0 && d.getSeconds() < 3600) {
              retryDelay = d.getSeconds() * 1_000_000_000L + d.getNanos();
            }
          }
        } catch (InvalidProtocolBufferException e) {
          // A malformed detail is ignored: the code still says enough.
        }
      }
    }
    if (info != null) {
      switch (info.getReason()) {
        case "SEQUENCE_EXHAUSTED" -> {
          return new ServerError(status, Outcome.EXHAUSTED, -1, retryDelay);
        }
        case "COUNT_ABOVE_LIMIT" -> {
          long limit = parse(info.getMetadataOrDefault("limit", ""));
          // A limit that would not shrink the request cannot be acted on (a loop otherwise).
          return new ServerError(status, limit >= 1 && limit < requested ? Outcome.CLAMP : Outcome.REJECT,
              limit, retryDelay);
        }
        // OWNER_UNAVAILABLE: a strict sequence's owner is being taken over (its lease has to run out
        // first, RetryInfo says about how long); NOT_OWNER: only when a caller forwards calls itself.
        // Both pass like a store that is down, and any server may answer the retry. RANGES_WITHDRAWN: an
        // advance overtook the call's ranges before they were sent; the retry gets IDs above the floor.
        case "STORE_UNAVAILABLE", "SERVER_BUSY", "SERVER_SHUTTING_DOWN", "RESERVE_WAIT_TIMED_OUT",
            "CALL_TOO_LONG", "OWNER_UNAVAILABLE", "NOT_OWNER", "RANGES_WITHDRAWN" -> {
          return new ServerError(status, Outcome.RETRY, -1, retryDelay);
        }
        default -> {
          // A reason this client does not know, or one that the code decides alike: the code decides.
        }
      }
    }
    return new ServerError(status, byCode(status, info != null), -1, retryDelay);
  }

  private static Outcome byCode(Status status, boolean idgenDetails) {
    return switch (status.getCode()) {
      // CANCELLED here is not the client's (it cancels only on close): a server that stopped mid-call.
      case UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED, ABORTED -> Outcome.RETRY;
      case OUT_OF_RANGE -> Outcome.EXHAUSTED;
      // idgen never sends it since 0.2: gRPC's size and flow limits, or a proxy's rate limit, which pass.
      // A server older than 0.2 sent it, without details, for an exhausted sequence, saying so.
      case RESOURCE_EXHAUSTED -> !idgenDetails && isOldExhaustion(status) ? Outcome.EXHAUSTED : Outcome.RETRY;
      default -> Outcome.REJECT;
    };
  }

  /** The message of a 0.1 server's exhausted sequence: "sequence 'x' is exhausted: no ID is left ...". */
  private static boolean isOldExhaustion(Status status) {
    String description = status.getDescription();
    return description != null && description.contains("' is exhausted: no ID is left");
  }

  private static long parse(String s) {
    try {
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  Status status() {
    return status;
  }

  Outcome outcome() {
    return outcome;
  }

  /** For {@link Outcome#CLAMP}: the server's per-call limit. */
  long limit() {
    return limit;
  }

  /** The server's {@code RetryInfo} delay in nanoseconds; -1 if it sent none. */
  long retryDelayNanos() {
    return retryDelayNanos;
  }
}
