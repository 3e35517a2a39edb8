package dev.idgen.core.store.embedded;

import dev.idgen.core.RangeAboveMaxException;
import dev.idgen.core.Reservation;
import dev.idgen.core.ReservationRefusedException;
import dev.idgen.core.SequenceDefinition;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Ranges handed to callers by {@code ReserveRange}: table {@code reservations}, one row per reservation. A
 * reservation moves the stripe's cursor past the range and writes its row in the caller's one write
 * transaction, so the range is either reserved and recorded, or neither: there is no unknown outcome to
 * settle here, and a retry with the same request id finds the row.
 *
 * <p>Why from the cursor: everything a server holds came from below it, and IDs given back at graceful stops
 * ({@link Returned}) lie below it too, so the range above it is held by nobody.
 *
 * <p>Stateless but for the file it names in messages; every method runs in the caller's transaction, on the
 * {@link Session} it is given.
 */
final class Reservations {
  private static final String COLUMNS = "first, last, request_id, reserved_by, reserved_at_millis";

  private final Path file;

  Reservations(Path file) {
    this.file = file;
  }

  /** The reservation (see {@code RangeStore.reserveRange}), in the caller's write transaction. */
  Reservation reserve(Session db, SequenceDefinition sequence, long count, String requestId, String reservedBy,
      Instant now) throws SQLException {
    String name = sequence.name();
    Definitions.checkMatchesStore(db, sequence);
    Optional<Reservation> existing = byRequest(db, name, requestId);
    if (existing.isPresent()) {
      if (existing.get().count() != count) {
        throw ReservationRefusedException.requestIdReused(existing.get(), count);
      }
      return existing.get().asReplayed();
    }
    if (sequence.stripes() != 1) {
      throw ReservationRefusedException.striped(sequence);
    }
    long total = sequence.stripeSize(0);
    long from = reservedIndex(db, name);
    if (total - from < count) {
      throw new RangeAboveMaxException(name, sequence.max(), count, total - from);
    }
    long to = from + count;
    PreparedStatement update = db.prepare("UPDATE stripes SET reserved = ? WHERE name = ? AND stripe = 0");
    update.setLong(1, to);
    update.setString(2, name);
    update.executeUpdate();
    Reservation r = new Reservation(name, requestId, sequence.idAt(0, from), sequence.idAt(0, to - 1), reservedBy,
        now, false);
    PreparedStatement insert = db.prepare("INSERT INTO reservations (name, " + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?)");
    insert.setString(1, name);
    insert.setLong(2, r.first());
    insert.setLong(3, r.last());
    insert.setString(4, requestId);
    insert.setString(5, reservedBy);
    insert.setLong(6, now.toEpochMilli());
    insert.executeUpdate();
    return r;
  }

  /** Up to {@code limit} reservations of the sequence whose first ID is above {@code afterFirst}, in ID order. */
  static List<Reservation> page(Session db, String name, long afterFirst, int limit) throws SQLException {
    PreparedStatement select = db.prepare("SELECT " + COLUMNS + " FROM reservations WHERE name = ? AND first > ?"
        + " ORDER BY first LIMIT ?");
    select.setString(1, name);
    select.setLong(2, afterFirst);
    select.setInt(3, limit);
    List<Reservation> out = new ArrayList<>();
    try (ResultSet rs = select.executeQuery()) {
      while (rs.next()) {
        out.add(row(name, rs));
      }
    }
    return out;
  }

  private static Optional<Reservation> byRequest(Session db, String name, String requestId) throws SQLException {
    PreparedStatement select = db.prepare("SELECT " + COLUMNS + " FROM reservations WHERE name = ? AND request_id = ?");
    select.setString(1, name);
    select.setString(2, requestId);
    try (ResultSet rs = select.executeQuery()) {
      return rs.next() ? Optional.of(row(name, rs)) : Optional.empty();
    }
  }

  private static Reservation row(String name, ResultSet rs) throws SQLException {
    return new Reservation(name, rs.getString(3), rs.getLong(1), rs.getLong(2), rs.getString(4),
        Instant.ofEpochMilli(rs.getLong(5)), false);
  }

  private long reservedIndex(Session db, String name) throws SQLException {
    PreparedStatement select = db.prepare("SELECT reserved FROM stripes WHERE name = ? AND stripe = 0");
    select.setString(1, name);
    try (ResultSet rs = select.executeQuery()) {
      if (!rs.next()) {
        throw new IllegalStateException("embedded store " + file + ": sequence '" + name + "' has no row for stripe 0");
      }
      return rs.getLong(1);
    }
  }
}
