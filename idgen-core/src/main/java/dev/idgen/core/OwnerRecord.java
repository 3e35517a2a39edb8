package dev.idgen.core;

import com.google.errorprone.annotations.Immutable;
import java.util.Objects;
import java.util.UUID;

/**
 * The owner row of a {@link Ordering#STRICT} sequence, as its store keeps it: which server owns the
 * sequence ({@code server}, the process {@code incarnation}, and the gRPC {@code target} other servers
 * forward to), under which fencing {@code epoch}, and the row's {@code version}, which every write
 * changes (a renewal too), so that a contender can tell whether the owner is still renewing.
 *
 * <p>The epoch only grows: a take-over writes {@code epoch + 1}, a renewal keeps it. The store fences
 * the sequence's pool with it ({@link RangeStore#reserveStrict}), so that a deposed owner can take
 * nothing from the pool once its successor has taken from it.
 */
@Immutable
public record OwnerRecord(String server, UUID incarnation, String target, long epoch, UUID version) {
  public OwnerRecord {
    Objects.requireNonNull(server, "server");
    Objects.requireNonNull(incarnation, "incarnation");
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(version, "version");
    if (epoch < 1) {
      throw new IllegalArgumentException("epoch: " + epoch + " (expected: >= 1)");
    }
  }

  /** Whether this row names the process {@code incarnation}. */
  public boolean isOwnedBy(UUID incarnation) {
    return this.incarnation.equals(incarnation);
  }
}
