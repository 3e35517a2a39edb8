package dev.idgen.core;

import java.time.Instant;

/**
 * The sequence was deleted ({@code DeleteSequence}): nothing is handed out of it, nor can it be advanced or
 * changed, until {@code UndeleteSequence} restores it (before its expire time, unless it was purged). The
 * server answers NOT_FOUND, as AIP-164 asks of a soft-deleted resource, with its own reason.
 */
public final class SequenceDeletedException extends IdGenException {
  private static final long serialVersionUID = 1L;

  private final String sequence;
  private final Instant deleteTime;
  private final Instant expireTime;
  private final boolean purged;

  public SequenceDeletedException(StoredSequence stored) {
    super(message(stored));
    this.sequence = stored.definition().name();
    this.deleteTime = stored.deleteTime().orElseThrow();
    this.expireTime = stored.expireTime().orElseThrow();
    this.purged = stored.purged();
  }

  private static String message(StoredSequence s) {
    String name = s.definition().name();
    if (s.purged()) {
      return "sequence '" + name + "' was deleted at " + s.deleteTime().orElseThrow() + " and purged; its name"
          + " is never used again (so that none of its IDs is handed out twice): create a sequence of another name";
    }
    return "sequence '" + name + "' was deleted at " + s.deleteTime().orElseThrow() + "; UndeleteSequence"
        + " restores it until " + s.expireTime().orElseThrow();
  }

  public String sequence() {
    return sequence;
  }

  public Instant deleteTime() {
    return deleteTime;
  }

  public Instant expireTime() {
    return expireTime;
  }

  public boolean purged() {
    return purged;
  }
}
