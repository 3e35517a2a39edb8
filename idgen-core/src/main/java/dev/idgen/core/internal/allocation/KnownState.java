package dev.idgen.core.internal.allocation;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.KnownSequence;
import dev.idgen.core.SequenceDefinition;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The allocator's own, changeable {@link KnownSequence}: an update replaces the definition, an advance raises
 * the floor. Callers outside the allocator see only the read-only interface.
 *
 * <p>Thread-safe: the floor only rises, by a compare-and-set loop; reading it, or the definition, is one
 * volatile read.
 */
@ThreadSafe
final class KnownState implements KnownSequence {
  private volatile SequenceDefinition definition;
  private final AtomicLong floor = new AtomicLong(Long.MIN_VALUE);

  KnownState(SequenceDefinition definition) {
    this.definition = definition;
  }

  @Override
  public SequenceDefinition definition() {
    return definition;
  }

  @Override
  public long floor() {
    return floor.get();
  }

  void redefine(SequenceDefinition newDefinition) {
    this.definition = newDefinition;
  }

  void raise(long newFloor) {
    floor.accumulateAndGet(newFloor, Math::max);
  }
}
