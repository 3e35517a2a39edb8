package dev.idgen.core;

import com.google.errorprone.annotations.Immutable;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A sequence as its store keeps it: the definition, and when it was created, if the store recorded that
 * (empty for a sequence created before the store kept the time, or by a store that keeps none).
 */
@Immutable
public record StoredSequence(SequenceDefinition definition, Optional<Instant> createTime) {
  public StoredSequence {
    Objects.requireNonNull(definition, "definition");
    Objects.requireNonNull(createTime, "createTime");
  }

  /** A definition without a creation time. */
  public static StoredSequence of(SequenceDefinition definition) {
    return new StoredSequence(definition, Optional.empty());
  }
}
