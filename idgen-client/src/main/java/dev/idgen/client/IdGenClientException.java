package dev.idgen.client;

import io.grpc.Status;
import java.util.Objects;
import java.util.Optional;

/**
 * Why an {@link IdSource} could not hand out IDs. The one exception type of the client: unchecked,
 * naming the sequence, with a {@link #reason()} to act on and, when a server answered, its gRPC
 * {@link #status()}. {@link IllegalArgumentException} and {@link IllegalStateException} remain for
 * programming errors (a malformed name, a closed client asked for a new source).
 *
 * <p>Each throw is a new instance created on the caller's thread, so its stack trace shows the
 * caller; the server's failure, when there is one, is its {@linkplain #getCause() cause}.
 */
public final class IdGenClientException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** What went wrong, in terms a caller can act on. */
  public enum Reason {
    /**
     * A server answered the lease request with a status that retrying does not fix, reported at once
     * without retry: {@code NOT_FOUND} (no such sequence), {@code PERMISSION_DENIED},
     * {@code UNAUTHENTICATED}, {@code INVALID_ARGUMENT}, or another unexpected status. (A lease larger
     * than a server's per-call limit is not one: the source asks again for the limit the server
     * names.) {@link #status()} is the server's status. It
     * is reported to the callers waiting when it arrives or, if none was, to the next caller that
     * finds the source empty; callers after that make the source ask again.
     */
    REJECTED,
    /**
     * The sequence reached its maximum: {@code OUT_OF_RANGE} with the reason
     * {@code SEQUENCE_EXHAUSTED} ({@code RESOURCE_EXHAUSTED} from servers before 0.2, which is otherwise
     * retried: it is also gRPC's and proxies' code for passing limits). Every ID leased before was
     * handed out first; the source stays exhausted and fails at once from then on.
     */
    EXHAUSTED,
    /**
     * The source had nothing left and no lease arrived within the client's wait deadline, typically
     * because no server was reachable ({@code UNAVAILABLE}) or answered in time
     * ({@code DEADLINE_EXCEEDED}); those, like {@code CANCELLED} by a stopping server and
     * {@code ABORTED}, are retried in the background, on another server when there is one.
     * {@link #status()} is the last such failure, if there was one.
     */
    TIMED_OUT,
    /** The client was closed, before or while the caller waited. */
    CLOSED,
    /** The caller's thread was interrupted while it waited; its interrupt status is set again. */
    INTERRUPTED
  }

  /** The sequence that could not hand out IDs. */
  private final String sequence;
  /** Why. */
  private final Reason reason;
  /** The gRPC status behind the failure, if any (not serialized: {@link Status} is not serializable). */
  private final transient Status status;

  IdGenClientException(String sequence, Reason reason, Status status, String message, Throwable cause) {
    super("sequence '" + sequence + "': " + message, cause);
    this.sequence = Objects.requireNonNull(sequence, "sequence");
    this.reason = Objects.requireNonNull(reason, "reason");
    this.status = status;
  }

  /**
   * Returns an exception as an {@link IdSource} of the library throws it, for the test kit's sources
   * ({@code idgen-test}) and for tests of code that handles these failures. The library's own sources
   * create theirs internally.
   *
   * @param sequence the sequence's name
   * @param reason why no IDs could be handed out
   * @param status the gRPC status behind the failure; required for {@link Reason#REJECTED} and
   *     {@link Reason#EXHAUSTED} (as {@link #status()} promises), else may be {@code null}
   * @param message what happened, in words a person can act on; the exception's message is
   *     {@code sequence '<sequence>': <message>}
   * @return a new exception, with no cause
   * @throws NullPointerException if {@code sequence}, {@code reason} or {@code message} is null, or
   *     {@code status} is null for a reason that requires one
   */
  public static IdGenClientException of(String sequence, Reason reason, Status status, String message) {
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(message, "message");
    if (reason == Reason.REJECTED || reason == Reason.EXHAUSTED) {
      Objects.requireNonNull(status, () -> "status (required for reason " + reason + ")");
    }
    return new IdGenClientException(sequence, reason, status, message, null);
  }

  /**
   * Returns the name of the sequence that could not hand out IDs.
   *
   * @return the sequence's name
   */
  public String sequence() {
    return sequence;
  }

  /**
   * Returns why no IDs could be handed out.
   *
   * @return the reason
   */
  public Reason reason() {
    return reason;
  }

  /**
   * Returns the gRPC status a server (or the gRPC runtime) answered with: always present for
   * {@link Reason#REJECTED} and {@link Reason#EXHAUSTED}, the last retried failure (if any) for
   * {@link Reason#TIMED_OUT}, absent otherwise.
   *
   * @return the status behind this exception, if there is one
   */
  public Optional<Status> status() {
    return Optional.ofNullable(status);
  }
}
