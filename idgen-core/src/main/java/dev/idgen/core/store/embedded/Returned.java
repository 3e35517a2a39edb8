package dev.idgen.core.store.embedded;

import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.annotation.Nullable;

/**
 * IDs given back at graceful stops ({@link dev.idgen.core.RangeStore#giveBack}): table {@code returned}, by
 * index of their stripe, reserved again before the stripe's cursor moves, lowest first. An advance drops those
 * at or below its floor, as it drops the stripes' own.
 *
 * <p>Stateless: every method runs in the caller's transaction, on the {@link Session} it is given.
 */
final class Returned {
  private Returned() {}

  /** Reserves up to {@code size} of the lowest IDs given back in the stripe; null if none. */
  @Nullable
  static IdRange take(Session db, SequenceDefinition sequence, int stripe, long size) throws SQLException {
    PreparedStatement select = db.prepare("SELECT from_index, to_index FROM returned WHERE name = ? AND stripe = ?"
        + " ORDER BY from_index LIMIT 1");
    select.setString(1, sequence.name());
    select.setInt(2, stripe);
    long from;
    long to;
    try (ResultSet rs = select.executeQuery()) {
      if (!rs.next()) {
        return null;
      }
      from = rs.getLong(1);
      to = rs.getLong(2);
    }
    // IDs given back under a raised max that this caller's (older) definition does not reach yet: not its to take.
    long stripeEnd = sequence.stripeSize(stripe);
    if (from >= stripeEnd) {
      return null;
    }
    long end = Math.min(stripeEnd, size >= to - from ? to : from + size);
    delete(db, sequence.name(), stripe, from);
    if (end < to) {
      insert(db, sequence.name(), stripe, end, to);
    }
    return sequence.range(stripe, from, end);
  }

  /**
   * Puts {@code ranges} back, but for the IDs at or below the sequence's floor (index {@code floorIndex}).
   * Returns how many IDs are back.
   */
  static long giveBack(Session db, SequenceDefinition sequence, int stripe, List<IdRange> ranges, long floorIndex)
      throws SQLException {
    long back = 0;
    for (IdRange r : ranges) {
      long from = Math.max(sequence.indexOf(stripe, r.first()), floorIndex);
      long to = sequence.indexOf(stripe, r.first()) + r.count();
      if (from < to) {
        insert(db, sequence.name(), stripe, from, to);
        back += to - from;
      }
    }
    return back;
  }

  /** Drops the IDs given back at or below {@code floor}, in every stripe. */
  static void dropBelow(Session db, SequenceDefinition sequence, long floor) throws SQLException {
    String name = sequence.name();
    PreparedStatement returned = db.prepare("SELECT stripe, from_index, to_index FROM returned WHERE name = ?");
    returned.setString(1, name);
    List<long[]> cut = new ArrayList<>();
    try (ResultSet rs = returned.executeQuery()) {
      while (rs.next()) {
        cut.add(new long[] {rs.getInt(1), rs.getLong(2), rs.getLong(3)});
      }
    }
    for (long[] r : cut) {
      long min = sequence.firstIndexAbove((int) r[0], floor);
      if (r[1] < min) {
        delete(db, name, (int) r[0], r[1]);
        if (min < r[2]) {
          insert(db, name, (int) r[0], min, r[2]);
        }
      }
    }
  }

  private static void insert(Session db, String name, int stripe, long from, long to) throws SQLException {
    PreparedStatement insert = db.prepare("INSERT INTO returned (name, stripe, from_index, to_index) VALUES (?, ?, ?, ?)");
    insert.setString(1, name);
    insert.setInt(2, stripe);
    insert.setLong(3, from);
    insert.setLong(4, to);
    insert.executeUpdate();
  }

  private static void delete(Session db, String name, int stripe, long from) throws SQLException {
    PreparedStatement delete = db.prepare("DELETE FROM returned WHERE name = ? AND stripe = ? AND from_index = ?");
    delete.setString(1, name);
    delete.setInt(2, stripe);
    delete.setLong(3, from);
    delete.executeUpdate();
  }
}
