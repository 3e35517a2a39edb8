package dev.idgen.core.store.embedded;

import dev.idgen.core.IdRange;
import dev.idgen.core.NotOwnerException;
import dev.idgen.core.RunwayPolicy;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceState;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The stripes' cursors: table {@code stripes}, how many of each stripe's IDs are reserved (an index, never an
 * ID), and for strict sequences the highest owner epoch that reserved from it (the fence). The embedded
 * store's one tier: a reservation reads the cursor and moves it in the caller's write transaction, so no two
 * reservations, of any process, read the same cursor.
 *
 * <p>Thread-safe and stateless but for the file it names in messages; every method runs in the caller's
 * transaction, on the {@link Session} it is given.
 */
final class Stripes {
  private final Path file;

  Stripes(Path file) {
    this.file = file;
  }

  /** A reservation: IDs given back first ({@link Returned}), then the stripe's next ones. */
  IdRange reserve(Session db, SequenceDefinition sequence, int stripe, long size, long stripeSize)
      throws SQLException {
    String name = sequence.name();
    Definitions.checkMatchesStore(db, sequence);
    IdRange back = Returned.take(db, sequence, stripe, size);
    if (back != null) {
      return back;
    }
    long from = reservedIndex(db, name, stripe);
    if (from >= stripeSize) {
      throw new SequenceExhaustedException(name, sequence.max());
    }
    // A sequence with a max is never reserved far ahead: at most a small fraction of what is left
    // (which also keeps from + size from overflowing when a caller asks for "everything left").
    long to = from + RunwayPolicy.boundedByRemaining(size, stripeSize - from);
    PreparedStatement update = db.prepare("UPDATE stripes SET reserved = ? WHERE name = ? AND stripe = ?");
    update.setLong(1, to);
    update.setString(2, name);
    update.setInt(3, stripe);
    update.executeUpdate();
    return sequence.range(stripe, from, to);
  }

  /**
   * The fence of a strict sequence, before its reservation in the same transaction: records {@code epoch} as
   * the highest that reserved from its stripe, or refuses it if a higher one has.
   */
  static void fence(Session db, SequenceDefinition sequence, long epoch) throws SQLException {
    String name = sequence.name();
    PreparedStatement select = db.prepare("SELECT owner_epoch FROM stripes WHERE name = ? AND stripe = 0");
    select.setString(1, name);
    long fenced;
    try (ResultSet rs = select.executeQuery()) {
      fenced = rs.next() ? rs.getLong(1) : 0;
    }
    if (fenced > epoch) {
      throw new NotOwnerException(name, null, Duration.ZERO, "sequence '" + name + "': owner epoch " + epoch
          + " was superseded by epoch " + fenced + " (another server took the sequence over)");
    }
    if (fenced < epoch) {
      PreparedStatement update = db.prepare("UPDATE stripes SET owner_epoch = ? WHERE name = ? AND stripe = 0");
      update.setLong(1, epoch);
      update.setString(2, name);
      update.executeUpdate();
    }
  }

  /** Moves every stripe's cursor past {@code floor}; never back. */
  static void raiseTo(Session db, SequenceDefinition sequence, long floor) throws SQLException {
    PreparedStatement update =
        db.prepare("UPDATE stripes SET reserved = ? WHERE name = ? AND stripe = ? AND reserved < ?");
    for (int k = 0; k < sequence.stripes(); k++) {
      long index = sequence.firstIndexAbove(k, floor);
      update.setLong(1, index);
      update.setString(2, sequence.name());
      update.setInt(3, k);
      update.setLong(4, index);
      update.executeUpdate();
    }
  }

  /** How far each stripe is reserved. */
  SequenceState state(Session db, SequenceDefinition sequence) throws SQLException {
    String name = sequence.name();
    PreparedStatement select = db.prepare("SELECT stripe, reserved FROM stripes WHERE name = ? ORDER BY stripe");
    select.setString(1, name);
    List<SequenceState.Stripe> stripes = new ArrayList<>();
    try (ResultSet rs = select.executeQuery()) {
      while (rs.next()) {
        int k = rs.getInt(1);
        stripes.add(new SequenceState.Stripe(k, rs.getLong(2), sequence.stripeSize(k)));
      }
    }
    if (stripes.size() != sequence.stripes()) {
      throw new IllegalStateException("embedded store " + file + ": sequence '" + name + "' has "
          + stripes.size() + " stripe rows (expected: " + sequence.stripes() + ")");
    }
    return new SequenceState(stripes, List.of());
  }

  private long reservedIndex(Session db, String name, int stripe) throws SQLException {
    PreparedStatement select = db.prepare("SELECT reserved FROM stripes WHERE name = ? AND stripe = ?");
    select.setString(1, name);
    select.setInt(2, stripe);
    try (ResultSet rs = select.executeQuery()) {
      if (!rs.next()) {
        throw new IllegalStateException(
            "embedded store " + file + ": sequence '" + name + "' has no row for stripe " + stripe);
      }
      return rs.getLong(1);
    }
  }
}
