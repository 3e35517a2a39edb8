package dev.idgen.core.internal.lifecycle;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.ChangeNotConfirmedException;
import dev.idgen.core.ChangeRefusedException;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceAlreadyExistsException;
import dev.idgen.core.SequenceChangedException;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceDeletedException;
import dev.idgen.core.SequenceUpdate;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.StoredSequence;
import dev.idgen.core.WallClock;
import dev.idgen.core.internal.Daemons;
import dev.idgen.core.internal.allocation.Runtimes;
import dev.idgen.core.internal.floors.FloorSync;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A sequence's life for an {@link dev.idgen.core.Allocator}: creating it, and changing its definition afterwards
 * ({@link dev.idgen.core.Allocator#update}, {@link dev.idgen.core.Allocator#delete} with its purge, {@link dev.idgen.core.Allocator#undelete}).
 *
 * <p>How a change reaches every server: it is decided in the store, by one compare-and-set on the stored
 * version (the etag), which then appends a {@link dev.idgen.core.FloorLog#DEFINITION_CHANGED} entry to every datacenter's floor
 * log ({@link RangeStore#redefine}). That is the log every server's {@link FloorSync} already reads every
 * floor-refresh interval, in one read whatever the number of sequences, and whose confirmations an advance waits
 * for; the entry's floor is below every ID, so a server that knows nothing of definition changes applies a floor
 * that drops nothing. A server that reads the entry reads the sequence again where changes are decided
 * ({@link Runtimes#redefine}) and, if its runtime was made from another definition, unloads it as an idle sweep
 * does, before it confirms that log version; it confirms only once its read shows the entry's version (a read
 * that fails confirms nothing, and is tried again next cycle), and gives the old reserve back afterwards. This server applies it at once, also where no floor sync runs (one process on the store); then
 * the call waits for every live server's confirmation ({@link FloorSync#confirm}), and a server that cannot
 * confirm stops serving by itself before its announcement expires, as for an advance. Where some live server
 * did not confirm in time, {@link ChangeNotConfirmedException} says so: the change is in force in the store,
 * and the same call again (it finds nothing to change, and only logs it again) completes it.
 *
 * <p>Threads: no state of its own; any number of threads may call, here or on other servers. Two changes of one
 * sequence race in the store's compare-and-set: the one that read a version that is no longer current fails
 * with {@link SequenceChangedException} and changes nothing. A change races with allocation only through the
 * runtime it replaces: a call inside the old runtime keeps what it took (a change never moves a position's ID:
 * the ID space stays, {@code max} only rises), and a call after it left the map loads the new definition or
 * finds the sequence deleted; a server that has not applied a raise yet merely stops early at the old max. It
 * races with an idle unload of the same runtime through the runtimes' map: whichever removes the runtime first
 * unloads it, once. And a load whose store read is older than a change applied here reads again where changes
 * are decided ({@link Runtimes#load}), so a server never goes back to a definition it has seen replaced.
 */
@ThreadSafe
public final class DefinitionChanges {
  /** The allocator's logger: these lines were its own, and operators may filter by it. */
  private static final Logger log = LoggerFactory.getLogger(Daemons.ALLOCATOR_LOG);

  private final RangeStore store;
  private final SequenceReads reads;
  private final Runtimes runtimes;
  private final FloorSync sync;
  private final long confirmTimeoutNanos;
  /** The clock of delete times, and how long a deleted sequence stays restorable. */
  private final WallClock wall;
  private final Duration undeleteWindow;

  public DefinitionChanges(RangeStore store, SequenceReads reads, Runtimes runtimes, FloorSync sync,
      long confirmTimeoutNanos, WallClock wall, Duration undeleteWindow) {
    this.store = store;
    this.reads = reads;
    this.runtimes = runtimes;
    this.sync = sync;
    this.confirmTimeoutNanos = confirmTimeoutNanos;
    this.wall = wall;
    this.undeleteWindow = undeleteWindow;
  }

  /**
   * See {@link dev.idgen.core.Allocator#create}; the caller checked that the allocator is open. No floor log entry: a new
   * sequence is loaded nowhere yet.
   */
  public SequenceDefinition create(SequenceDefinition definition) {
    try {
      store.create(definition);
    } catch (SequenceAlreadyExistsException e) {
      Optional<StoredSequence> existing;
      try {
        existing = store.findStored(definition.name());
      } catch (RuntimeException readFailed) {
        throw e;
      }
      if (existing.isPresent() && existing.get().deleted()) {
        StoredSequence d = existing.get();
        // A deleted name is never reused: its stores' positions map to its own IDs, which it handed out.
        throw new SequenceAlreadyExistsException("sequence '" + definition.name() + "' already exists: it was"
            + " deleted at " + d.deleteTime().orElseThrow() + (d.purged() ? " and purged" : " (UndeleteSequence"
            + " restores it until " + d.expireTime().orElseThrow() + ")") + ", and the name of a deleted"
            + " sequence is never used again, so that none of its IDs is handed out twice; choose another name");
      }
      throw e;
    }
    return definition;
  }

  /** See {@link dev.idgen.core.Allocator#update}. */
  public StoredSequence update(String name, @Nullable String etag, SequenceUpdate update) {
    StoredSequence current = reads.current(name);
    if (current.deleted()) {
      throw new SequenceDeletedException(current);
    }
    checkEtag(current, etag);
    SequenceDefinition next = update.applyTo(current.definition());
    return change(current, next.equals(current.definition()) ? current : current.redefined(next),
        "its new definition");
  }

  /** See {@link dev.idgen.core.Allocator#delete}. */
  public StoredSequence delete(String name, @Nullable String etag, boolean purge) {
    StoredSequence current = reads.current(name);
    if (current.purged()) {
      throw new SequenceDeletedException(current);
    }
    if (purge) {
      return purge(name, current, etag);
    }
    if (current.deleted()) {
      change(current, current, "its deletion"); // completes a delete that was not confirmed everywhere
      throw new SequenceDeletedException(current);
    }
    checkEtag(current, etag);
    Instant at = Instant.ofEpochMilli(wall.millis());
    return change(current, current.deletedAt(at, at.plus(undeleteWindow)), "its deletion");
  }

  /** A deleted sequence, past its expire time, becomes a tombstone. */
  private StoredSequence purge(String name, StoredSequence current, @Nullable String etag) {
    if (!current.deleted()) {
      throw new ChangeRefusedException(ChangeRefusedException.Kind.NOT_DELETED, name, "purge", "sequence '" + name
          + "' is not deleted: only a deleted sequence can be purged, after its expire time (DeleteSequence"
          + " first, without purge)");
    }
    Instant expire = current.expireTime().orElseThrow();
    if (wall.millis() < expire.toEpochMilli()) {
      throw new ChangeRefusedException(ChangeRefusedException.Kind.PURGE_BEFORE_EXPIRY, name, "purge",
          "sequence '" + name + "' can be purged from " + expire + " on (its expire time); until then"
          + " UndeleteSequence can restore it");
    }
    checkEtag(current, etag);
    return change(current, current.purgedNow(), "its purge");
  }

  /** See {@link dev.idgen.core.Allocator#undelete}. */
  public StoredSequence undelete(String name, @Nullable String etag) {
    StoredSequence current = reads.current(name);
    if (current.purged()) {
      throw new SequenceDeletedException(current);
    }
    if (!current.deleted()) {
      change(current, current, "its restoration");
      throw new ChangeRefusedException(ChangeRefusedException.Kind.NOT_DELETED, name, "", "sequence '" + name
          + "' is not deleted: there is nothing to restore");
    }
    checkEtag(current, etag);
    return change(current, current.undeleted(), "its restoration");
  }

  private static void checkEtag(StoredSequence current, @Nullable String etag) {
    if (etag != null && !etag.isEmpty() && !etag.equals(current.etag())) {
      throw new SequenceChangedException(current.definition().name(), etag, current.etag());
    }
  }

  /**
   * Writes {@code next} in place of {@code current} (or, when they are the same, only logs it again), applies
   * it here, then waits until every live server has confirmed it.
   */
  private StoredSequence change(StoredSequence current, StoredSequence next, String what) {
    String name = current.definition().name();
    AdvanceReceipt receipt = store.redefine(current, next);
    try {
      runtimes.redefine(name, next.version()); // this server at once, also where no floor sync runs
    } catch (StoreUnavailableException e) {
      if (!sync.enabled()) {
        throw e;
      }
      // This server's floor sync reads it again below, and names this server if it still cannot.
    }
    long unusedLeases = sync.confirm(receipt, System.nanoTime() + confirmTimeoutNanos, 0,
        pending -> new ChangeNotConfirmedException(name, what, pending));
    if (!next.sameAs(current)) {
      log.info("sequence '{}' changed: {} (etag {}), applied by every live server", name, describeChange(current,
          next), next.etag());
    }
    return next;
  }

  private static String describeChange(StoredSequence from, StoredSequence to) {
    if (from.deleted() != to.deleted()) {
      return to.deleted() ? "deleted, restorable until " + to.expireTime().orElseThrow() : "restored";
    }
    if (to.purged() && !from.purged()) {
      return "purged";
    }
    SequenceDefinition a = from.definition();
    SequenceDefinition b = to.definition();
    return "max " + a.max() + " -> " + b.max() + ", node_block_size " + a.nodeBlockSize() + " -> "
        + b.nodeBlockSize() + ", dc_block_size " + a.dcBlockSize() + " -> " + b.dcBlockSize();
  }
}
