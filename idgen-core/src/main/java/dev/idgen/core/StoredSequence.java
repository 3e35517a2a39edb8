package dev.idgen.core;

import com.google.errorprone.annotations.Immutable;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A sequence as its store keeps it: the definition, when it was created (if the store recorded that: empty
 * for a sequence created before the store kept the time, or by a store that keeps none), and its life
 * since: the definition's {@code version} (1 at creation, raised by every change: {@code UpdateSequence},
 * {@code DeleteSequence}, {@code UndeleteSequence}; the API's etag), and when it was deleted, until when it
 * can be restored, and whether it was purged (a tombstone that keeps its name taken for good).
 */
@Immutable
public record StoredSequence(SequenceDefinition definition, Optional<Instant> createTime, long version,
    Optional<Instant> deleteTime, Optional<Instant> expireTime, boolean purged) {
  /** The version of a sequence never changed since its creation (and of rows written before versions). */
  public static final long FIRST_VERSION = 1;

  public StoredSequence {
    Objects.requireNonNull(definition, "definition");
    Objects.requireNonNull(createTime, "createTime");
    Objects.requireNonNull(deleteTime, "deleteTime");
    Objects.requireNonNull(expireTime, "expireTime");
    if (version < FIRST_VERSION) {
      throw new IllegalArgumentException("version: " + version + " (expected: >= 1)");
    }
    if (deleteTime.isPresent() != expireTime.isPresent() || (purged && deleteTime.isEmpty())) {
      throw new IllegalArgumentException("sequence '" + definition.name() + "': deleteTime " + deleteTime
          + ", expireTime " + expireTime + ", purged " + purged + " (expected: both times or neither; purged"
          + " only when deleted)");
    }
  }

  /** A live sequence never changed since its creation. */
  public StoredSequence(SequenceDefinition definition, Optional<Instant> createTime) {
    this(definition, createTime, FIRST_VERSION, Optional.empty(), Optional.empty(), false);
  }

  /** A definition without a creation time. */
  public static StoredSequence of(SequenceDefinition definition) {
    return new StoredSequence(definition, Optional.empty());
  }

  /** Whether it is deleted (purged or not). */
  public boolean deleted() {
    return deleteTime.isPresent();
  }

  /** The API's etag: the version, in decimal. */
  public String etag() {
    return Long.toString(version);
  }

  /** This sequence with another definition, the next version. */
  public StoredSequence redefined(SequenceDefinition next) {
    return new StoredSequence(next, createTime, version + 1, deleteTime, expireTime, purged);
  }

  /** This sequence deleted at {@code at}, restorable until {@code expire}, the next version. */
  public StoredSequence deletedAt(Instant at, Instant expire) {
    return new StoredSequence(definition, createTime, version + 1, Optional.of(at), Optional.of(expire), false);
  }

  /** This sequence restored (live again), the next version. */
  public StoredSequence undeleted() {
    return new StoredSequence(definition, createTime, version + 1, Optional.empty(), Optional.empty(), false);
  }

  /** This deleted sequence purged (a tombstone), the next version. */
  public StoredSequence purgedNow() {
    return new StoredSequence(definition, createTime, version + 1, deleteTime, expireTime, true);
  }

  /** Whether this and {@code other} say the same of the sequence, versions aside. */
  public boolean sameAs(StoredSequence other) {
    return definition.equals(other.definition) && deleteTime.equals(other.deleteTime)
        && expireTime.equals(other.expireTime) && purged == other.purged;
  }

  /**
   * Checks, for a store about to write it, that this is the next version of {@code stored}: the same name, ID
   * space, stripes and ordering, a max that did not fall, the version one up. The store's last line of defence
   * (the allocator refuses such changes before, with their reasons).
   *
   * @throws IllegalArgumentException if not
   */
  public void checkReplaces(StoredSequence stored) {
    SequenceDefinition from = stored.definition();
    SequenceDefinition to = definition;
    if (!to.name().equals(from.name()) || to.start() != from.start() || to.stripes() != from.stripes()
        || to.ordering() != from.ordering() || to.max() < from.max() || version != stored.version() + 1) {
      throw new IllegalArgumentException("sequence '" + from.name() + "': " + this + " cannot replace " + stored
          + " (the ID space must stay, max only rise, the version go up by one)");
    }
  }
}
