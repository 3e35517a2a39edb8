package dev.idgen.core.internal.lifecycle;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.OwnerRecord;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceDeletedException;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.SequenceState;
import dev.idgen.core.StoredSequence;
import dev.idgen.core.internal.allocation.Runtimes;
import dev.idgen.core.internal.allocation.SequenceRuntime;
import dev.idgen.core.internal.allocation.StripePool;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What the admin API reads of sequences for an {@link dev.idgen.core.Allocator}: one sequence as the store has it now
 * ({@link #current}, which the changes and the reservations start from), one definition, pages of them, and
 * one sequence described with this server's reserve ({@link dev.idgen.core.Allocator#describe}). Nothing here loads a
 * sequence or takes a reserve.
 *
 * <p>Threads: no state of its own; any number of threads may call. {@link #current} and {@link #describe} read
 * where changes are decided ({@link RangeStore#findCurrent}: at {@code SERIAL} on Cassandra), so that an etag or
 * a deletion is never older than a change that returned; {@link #definition} answers from the loaded runtime
 * when there is one, and the pages from the store's ordinary reads, as a listing may be a moment behind.
 */
@ThreadSafe
public final class SequenceReads {
  private final RangeStore store;
  private final Runtimes runtimes;
  /** Throws {@link dev.idgen.core.StoreUnavailableException} once the allocator is closed. */
  private final Runnable checkOpen;

  public SequenceReads(RangeStore store, Runtimes runtimes, Runnable checkOpen) {
    this.store = store;
    this.runtimes = runtimes;
    this.checkOpen = checkOpen;
  }

  /** The sequence as the store has it now; {@link SequenceNotFoundException} if none. */
  StoredSequence current(String name) {
    SequenceDefinition.checkName(name);
    checkOpen.run();
    return findCurrent(name);
  }

  private StoredSequence findCurrent(String name) {
    return store.findCurrent(name).orElseThrow(() -> new SequenceNotFoundException("sequence '" + name
        + "' does not exist (sequences are created explicitly with CreateSequence)"));
  }

  /** See {@link dev.idgen.core.Allocator#definition}. */
  public SequenceDefinition definition(String name) {
    SequenceRuntime rt = runtimes.get(name);
    return rt != null ? rt.definition : runtimes.stored(name).definition();
  }

  /** See {@link dev.idgen.core.Allocator#list}. */
  public List<SequenceDefinition> list(String afterName, int limit) {
    checkPage(afterName, limit);
    return store.list(afterName, limit);
  }

  /** See {@link dev.idgen.core.Allocator#listStored(String, int, boolean)}. */
  public List<StoredSequence> listStored(String afterName, int limit, boolean showDeleted) {
    List<StoredSequence> out = new ArrayList<>();
    String after = afterName;
    // Bounded: each round reads a page of the store, and ends the listing or moves past it.
    for (;;) {
      List<StoredSequence> page = listStored(after, limit);
      for (StoredSequence s : page) {
        if (!s.purged() && (showDeleted || !s.deleted())) {
          out.add(s);
          if (out.size() == limit) {
            return out;
          }
        }
      }
      if (page.size() < limit) {
        return out;
      }
      after = page.get(page.size() - 1).definition().name();
    }
  }

  /** See {@link dev.idgen.core.Allocator#listStored(String, int)}. */
  public List<StoredSequence> listStored(String afterName, int limit) {
    checkPage(afterName, limit);
    return store.listStored(afterName, limit);
  }

  /** See {@link dev.idgen.core.Allocator#describe}. */
  public Described describe(String sequence) {
    SequenceRuntime rt = runtimes.get(sequence);
    // From the store, not the runtime: the etag and a deletion are read where they are decided.
    SequenceDefinition.checkName(sequence);
    StoredSequence stored = findCurrent(sequence);
    if (stored.purged()) {
      throw new SequenceDeletedException(stored);
    }
    SequenceDefinition def = stored.definition();
    long reserve = 0;
    if (rt != null) {
      for (StripePool pool : rt.pools) {
        reserve += pool.available();
      }
    }
    // A strict sequence's owner row, as the store has it now (a full view reads the store anyway).
    Optional<OwnerRecord> owner = def.strict() ? store.owner(def) : Optional.empty();
    return new Described(stored, store.state(def), reserve, owner);
  }

  /** Refuses a page size below 1 ({@link InvalidRequestException}). */
  static void checkPageSize(int limit) {
    if (limit < 1) {
      throw new InvalidRequestException("page size " + limit + " (expected: >= 1)");
    }
  }

  private static void checkPage(String afterName, int limit) {
    checkPageSize(limit);
    if (!afterName.isEmpty()) {
      SequenceDefinition.checkName(afterName);
    }
  }

  /** What {@link #describe} read: the allocator's {@code SequenceView}, field for field. */
  public record Described(StoredSequence stored, SequenceState state, long serverReserve,
      Optional<OwnerRecord> owner) {}
}
