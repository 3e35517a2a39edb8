package dev.idgen.core;

/**
 * What an {@link Allocator} knows of a sequence it has loaded at some point, kept after the sequence is
 * unloaded: its definition (as last read: an update replaces it, but never changes its ID space, which is all
 * that a response's stamp and the floor check need) and the highest floor this allocator has applied to it.
 * A server stamps ranges from the definition and checks each range against the floor just before sending
 * it, whether or not the sequence is loaded at that moment.
 *
 * <p>Thread-safe: reading the floor, or the definition, is one volatile read. The allocator alone changes them
 * (the floor only rises).
 */
public interface KnownSequence {
  SequenceDefinition definition();

  /** The highest floor applied here: no ID at or below it may be handed out. {@link Long#MIN_VALUE}: none. */
  long floor();
}
