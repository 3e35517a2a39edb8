package dev.idgen.core.internal.lifecycle;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.RangeStore;
import dev.idgen.core.Reservation;
import dev.idgen.core.ReservationRefusedException;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceDeletedException;
import dev.idgen.core.StoredSequence;
import dev.idgen.core.internal.Daemons;
import java.util.List;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ranges reserved for one caller ({@link dev.idgen.core.Allocator#reserveRange}), and the record of them
 * ({@link dev.idgen.core.Allocator#reservations}).
 *
 * <p>Threads: no state of its own; any number of threads may call. A reservation is taken in the store, from
 * above everything any server or datacenter holds ({@link RangeStore#reserveRange}), and its request id makes a
 * retry return the same range, so nothing here races with allocation on any server, nor needs confirming. It
 * starts from the sequence as the store has it now ({@link SequenceReads#current}), so that a deletion or a
 * raised max counts at once, not once a runtime has applied it.
 */
@ThreadSafe
public final class RangeReservations {
  /** The allocator's logger: the reservation line was its own, and operators may filter by it. */
  private static final Logger log = LoggerFactory.getLogger(Daemons.ALLOCATOR_LOG);

  private final RangeStore store;
  private final SequenceReads reads;

  public RangeReservations(RangeStore store, SequenceReads reads) {
    this.store = store;
    this.reads = reads;
  }

  /** See {@link dev.idgen.core.Allocator#reserveRange}. */
  public Reservation reserveRange(String sequence, long count, String requestId, String reservedBy) {
    SequenceDefinition.checkName(sequence);
    if (count < 1) {
      throw InvalidRequestException.ofField("count", "count " + count + " for sequence '" + sequence
          + "' (expected: at least 1)");
    }
    String id = requestId.isEmpty() ? UUID.randomUUID().toString() : Reservation.checkRequestId(requestId);
    // As the store has it now, not as a runtime or a local read may still have it: a sequence deleted a
    // moment ago reserves nothing more. Its max is the newest too, so a raised max counts at once.
    StoredSequence stored = reads.current(sequence);
    if (stored.deleted()) {
      throw new SequenceDeletedException(stored);
    }
    SequenceDefinition def = stored.definition();
    if (def.stripes() != 1) {
      throw ReservationRefusedException.striped(def);
    }
    Reservation r = store.reserveRange(def, count, id, Reservation.boundedReservedBy(reservedBy));
    log.info("reservation sequence={} first={} last={} count={} request_id={} reserved_by={} replayed={}",
        sequence, r.first(), r.last(), r.count(), r.requestId(), r.reservedBy(), r.replayed());
    return r;
  }

  /** See {@link dev.idgen.core.Allocator#reservations}. */
  public List<Reservation> reservations(String sequence, long afterFirst, int limit) {
    SequenceDefinition.checkName(sequence);
    SequenceReads.checkPageSize(limit);
    StoredSequence stored = reads.current(sequence);
    if (stored.purged()) {
      throw new SequenceDeletedException(stored); // as GetSequence: a tombstone shows nothing
    }
    return store.reservations(stored.definition(), afterFirst, limit);
  }
}
