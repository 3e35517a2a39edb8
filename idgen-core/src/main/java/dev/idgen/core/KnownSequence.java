package dev.idgen.core;

import com.google.errorprone.annotations.ThreadSafe;

/**
 * What an {@link Allocator} knows of a sequence it has loaded at some point, kept after the sequence is
 * unloaded: its definition (as last read: an update replaces it, but never changes its ID space, which is all
 * that a response's stamp and the floor check need) and the highest floor this allocator has applied to it.
 * A server stamps ranges from the definition and checks each range against the floor just before sending
 * it, whether or not the sequence is loaded at that moment.
 *
 * <p>Thread-safe: the floor only rises, by a compare-and-set loop; reading it, or the definition, is one
 * volatile read.
 */
@ThreadSafe
public final class KnownSequence {
  private volatile SequenceDefinition definition;
  private final java.util.concurrent.atomic.AtomicLong floor = new java.util.concurrent.atomic.AtomicLong(Long.MIN_VALUE);

  public KnownSequence(SequenceDefinition definition) {
    this.definition = definition;
  }

  public SequenceDefinition definition() {
    return definition;
  }

  /** The highest floor applied here: no ID at or below it may be handed out. {@link Long#MIN_VALUE}: none. */
  public long floor() {
    return floor.get();
  }

  public void redefine(SequenceDefinition newDefinition) {
    this.definition = newDefinition;
  }

  public void raise(long newFloor) {
    floor.accumulateAndGet(newFloor, Math::max);
  }
}
