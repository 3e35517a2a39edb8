package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.CasOutcomes.backoff;
import static dev.idgen.core.store.cassandra.CasOutcomes.global;
import static dev.idgen.core.store.cassandra.CasOutcomes.unavailable;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.Reservation;
import dev.idgen.core.ReservationRefusedException;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.store.cassandra.CasOutcomes.Attempts;
import dev.idgen.core.store.cassandra.CasOutcomes.CasResult;
import dev.idgen.core.store.cassandra.CassandraRangeStore.CasKind;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ranges reserved for one caller ({@code ReserveRange}): tables {@code reservation_requests} (one row per
 * (sequence, request id), at SERIAL) and {@code reservations} (one partition per sequence, its rows in ID
 * order, plain writes and reads at QUORUM).
 *
 * <p>A reservation is three steps, none of which can hand a range to two holders:
 * <ol>
 *   <li>the request row is read at SERIAL: a request id that already reserved gets that range again (a retry);
 *   <li>the range is taken from the global cursor ({@code GlobalTier.reserveRange}): from then on no datacenter
 *       can take it, and it is this call's or a gap;
 *   <li>the request row is written with {@code IF NOT EXISTS} at SERIAL. Two calls with one request id race here:
 *       the loser returns the winner's range, and its own is a counted gap. Then the listing row is written
 *       (idempotent; a retry writes it again, so a listing row lost to a crash comes back with the retry).
 * </ol>
 * A crash or a failure between two steps leaves the range a gap, never handed out: it left the global cursor
 * and nobody else holds it. A failure after the request row is in place fails the call with the request id in
 * its message: retrying with it returns the same range.
 *
 * <p>Threads: thread-safe and stateless; each operation's {@link Attempts} are confined to its thread.
 */
@ThreadSafe
final class ReservationTable {
  private static final Logger log = LoggerFactory.getLogger(CassandraRangeStore.class);

  private final CasOutcomes outcomes;
  private final GlobalTier globalTier;

  ReservationTable(CasOutcomes outcomes, GlobalTier globalTier) {
    this.outcomes = outcomes;
    this.globalTier = globalTier;
  }

  Reservation reserve(SequenceDefinition d, long count, String requestId, String reservedBy) {
    long deadline = outcomes.deadline();
    Optional<Reservation> existing = byRequest(d, requestId, deadline);
    if (existing.isPresent()) {
      return replay(existing.get(), count);
    }
    if (d.stripes() != 1) {
      throw ReservationRefusedException.striped(d);
    }
    long[] got = globalTier.reserveRange(d, count, deadline);
    // Cassandra keeps timestamps to the millisecond: the record returned is the record listed.
    Reservation mine = new Reservation(d.name(), requestId, d.idAt(0, got[0]), d.idAt(0, got[1] - 1), reservedBy,
        Instant.now().truncatedTo(ChronoUnit.MILLIS), false);
    Reservation recorded;
    try {
      recorded = record(mine, deadline);
    } catch (StoreUnavailableException e) {
      lost(mine, "its request row could not be written");
      throw new StoreUnavailableException("reserving " + count + " IDs of sequence '" + d.name() + "': the range "
          + mine.first() + " to " + mine.last() + " was taken from the global cursor, but its record could not be"
          + " written (" + e.getMessage() + "); those IDs are never handed out. Retry with request_id '" + requestId
          + "': if the record was written after all, the retry returns this range, otherwise a new one", e);
    }
    if (recorded.first() != mine.first()) {
      // Another call with this request id recorded its range first: that one is the request's, ours a gap.
      lost(mine, "another call with request id '" + requestId + "' recorded its range first");
      return replay(recorded, count);
    }
    list(recorded, deadline);
    return recorded;
  }

  /**
   * Records a reservation another store made (a move off the embedded store), as {@link #reserve} records its
   * own: the request row, then the listing row. The caller has moved the global cursor past its IDs. Returns
   * the record the request id holds: {@code r}, or another one if the request id was already used.
   */
  Reservation importRecord(Reservation r) {
    long deadline = outcomes.deadline();
    Reservation recorded = record(r, deadline);
    if (recorded.first() == r.first() && recorded.last() == r.last()) {
      list(recorded, deadline);
    }
    return recorded;
  }

  /** The range a request id already reserved, for a retry of the same count; its listing row written again. */
  private Reservation replay(Reservation existing, long count) {
    if (existing.count() != count) {
      throw ReservationRefusedException.requestIdReused(existing, count);
    }
    list(existing, outcomes.deadline());
    return existing.asReplayed();
  }

  /**
   * Writes the request row ({@code IF NOT EXISTS}): the record that this request id reserved this range, or
   * the one already there if another call with the same request id wrote it first.
   */
  private Reservation record(Reservation r, long deadline) {
    Attempts<Void> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      UUID op = attempts.next(null, null);
      BoundStatement insert = global(outcomes.st().insertReservationRequest.bind(r.sequence(), r.requestId(),
          r.first(), r.last(), r.reservedBy(), r.reservedAt(), op));
      CasResult result = outcomes.cas(outcomes.globalTier, CasKind.RESERVATION, insert, op, null, attempts,
          () -> readRequest(r.sequence(), r.requestId(), deadline), deadline);
      if (result.applied()) {
        return r;
      }
      Row row = readRequest(r.sequence(), r.requestId(), deadline);
      if (row != null) {
        return attempts.mine(row.getUuid("op")) ? r : reservation(r.sequence(), r.requestId(), row);
      }
      // Not applied and no row: the insert never happened (an unknown outcome read back as "not applied").
      backoff(attempt, deadline, "recording a reservation of sequence '" + r.sequence() + "'");
    }
  }

  /** The listing row: a plain, idempotent write at QUORUM (never a CAS on this table). */
  private void list(Reservation r, long deadline) {
    BoundStatement insert = outcomes.st().insertReservation.bind(r.sequence(), r.first(), r.last(), r.requestId(),
        r.reservedBy(), r.reservedAt()).setConsistencyLevel(ConsistencyLevel.QUORUM).setIdempotent(true);
    for (int attempt = 0; ; attempt++) {
      try {
        outcomes.st().session.execute(insert);
        return;
      } catch (DriverException e) {
        try {
          backoff(attempt, deadline, "listing a reservation of sequence '" + r.sequence() + "'");
        } catch (StoreUnavailableException gaveUp) {
          throw new StoreUnavailableException("reserved " + r.first() + " to " + r.last() + " of sequence '"
              + r.sequence() + "' for request_id '" + r.requestId() + "', but could not list it: "
              + CasOutcomes.describe(e) + "; retry with that request_id to get this range (and list it)", e);
        }
      }
    }
  }

  /** Up to {@code limit} reservations with a first ID above {@code afterFirst}, in ID order, read at QUORUM. */
  List<Reservation> page(SequenceDefinition d, long afterFirst, int limit) {
    List<Reservation> out = new ArrayList<>();
    try {
      outcomes.plainReads.increment();
      for (Row row : outcomes.st().session.execute(outcomes.st().selectReservations.bind(d.name(), afterFirst, limit)
          .setConsistencyLevel(ConsistencyLevel.QUORUM))) {
        out.add(new Reservation(d.name(), row.getString("request_id"), row.getLong("first"), row.getLong("last"),
            row.getString("reserved_by"), row.getInstant("reserved_at"), false));
      }
    } catch (DriverException e) {
      throw unavailable("listing the reservations of sequence '" + d.name() + "' (QUORUM: are the other"
          + " datacenters reachable?)", e);
    }
    return out;
  }

  private Optional<Reservation> byRequest(SequenceDefinition d, String requestId, long deadline) {
    Row row = readRequest(d.name(), requestId, deadline);
    return row == null ? Optional.empty() : Optional.of(reservation(d.name(), requestId, row));
  }

  private Row readRequest(String sequence, String requestId, long deadline) {
    return outcomes.serialRead(outcomes.st().selectReservationRequest.bind(sequence, requestId),
        ConsistencyLevel.SERIAL, null, "reservation request '" + requestId + "' of sequence '" + sequence + "'",
        deadline);
  }

  private static Reservation reservation(String sequence, String requestId, Row row) {
    return new Reservation(sequence, requestId, row.getLong("first"), row.getLong("last"),
        row.getString("reserved_by"), row.getInstant("reserved_at"), false);
  }

  private void lost(Reservation r, String why) {
    outcomes.globalTier.idsLost.add(r.count());
    log.warn("counted {} IDs of sequence '{}' ({} to {}) as lost: a range reserved for request id '{}' that {}",
        r.count(), r.sequence(), r.first(), r.last(), r.requestId(), why);
  }
}
