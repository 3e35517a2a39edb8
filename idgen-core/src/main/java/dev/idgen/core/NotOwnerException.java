package dev.idgen.core;

import java.time.Duration;
import java.util.Optional;
import javax.annotation.Nullable;

/**
 * An allocation on a {@link Ordering#STRICT} sequence that this server may not serve: another server
 * owns the sequence ({@link #ownerTarget()} says where to forward the call), or nobody can serve it now
 * (the owner stopped renewing and its lease has not expired yet, or the home datacenter is elsewhere
 * and unknown). Nothing was handed out. {@link #retryAfter()} says when a retry may succeed.
 */
public final class NotOwnerException extends IdGenException {
  private static final long serialVersionUID = 1L;

  private final String sequence;
  @Nullable private final String ownerTarget;
  private final Duration retryAfter;

  public NotOwnerException(String sequence, @Nullable String ownerTarget, Duration retryAfter, String message) {
    super(message);
    this.sequence = sequence;
    this.ownerTarget = ownerTarget;
    this.retryAfter = retryAfter;
  }

  public String sequence() {
    return sequence;
  }

  /** The gRPC target of the live owner to forward to; empty while nobody can serve the sequence. */
  public Optional<String> ownerTarget() {
    return Optional.ofNullable(ownerTarget);
  }

  /** How long to wait before a retry may find an owner. */
  public Duration retryAfter() {
    return retryAfter;
  }
}
