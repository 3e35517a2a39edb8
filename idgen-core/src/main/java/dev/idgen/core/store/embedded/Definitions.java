package dev.idgen.core.store.embedded;

import dev.idgen.core.Ordering;
import dev.idgen.core.SequenceAlreadyExistsException;
import dev.idgen.core.SequenceChangedException;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.StoredSequence;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The sequences' definitions: table {@code sequences}, one row per sequence, written at its creation (with a
 * row per stripe in {@code stripes}) and changed only by {@link #replace} (an update, a delete, an undelete, a
 * purge: compare-and-set on its version, in the caller's transaction); and the check that a caller's definition
 * describes the stored one's ID space.
 *
 * <p>Stateless: every method runs in the caller's transaction, on the {@link Session} it is given.
 */
final class Definitions {
  /** The columns {@link #stored(ResultSet)} reads, in its order. */
  private static final String COLUMNS =
      "name, start, max, stripes, node_block_size, dc_block_size, created_at, ordering, home_datacenter, version,"
      + " deleted_at, expires_at, purged";

  private Definitions() {}

  /** Writes a new sequence and its stripes, none reserved; {@link SequenceAlreadyExistsException} if taken. */
  static void insert(Session db, SequenceDefinition definition, Instant createdAt) throws SQLException {
    String name = definition.name();
    if (stored(db, name).isPresent()) {
      throw new SequenceAlreadyExistsException("sequence '" + name + "' already exists");
    }
    PreparedStatement insert = db.prepare("INSERT INTO sequences"
        + " (name, start, max, stripes, node_block_size, dc_block_size, created_at, ordering, home_datacenter)"
        + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert.setString(1, name);
    insert.setLong(2, definition.start());
    insert.setLong(3, definition.max());
    insert.setInt(4, definition.stripes());
    insert.setLong(5, definition.nodeBlockSize());
    insert.setLong(6, definition.dcBlockSize());
    insert.setLong(7, createdAt.toEpochMilli());
    insert.setString(8, definition.ordering().name());
    insert.setString(9, definition.homeDatacenter());
    insert.executeUpdate();
    PreparedStatement stripe = db.prepare("INSERT INTO stripes (name, stripe, reserved) VALUES (?, ?, 0)");
    for (int k = 0; k < definition.stripes(); k++) {
      stripe.setString(1, name);
      stripe.setInt(2, k);
      stripe.executeUpdate();
    }
  }

  static Optional<StoredSequence> stored(Session db, String name) throws SQLException {
    PreparedStatement select = db.prepare("SELECT " + COLUMNS + " FROM sequences WHERE name = ?");
    select.setString(1, name);
    try (ResultSet rs = select.executeQuery()) {
      return rs.next() ? Optional.of(stored(rs)) : Optional.empty();
    }
  }

  /** Up to {@code limit} sequences in name order after {@code afterName}. */
  static List<StoredSequence> page(Session db, String afterName, int limit) throws SQLException {
    // Names are ASCII, so SQLite's BINARY collation is String.compareTo order.
    PreparedStatement select = db.prepare("SELECT " + COLUMNS + " FROM sequences WHERE name > ? ORDER BY name LIMIT ?");
    select.setString(1, afterName);
    select.setInt(2, limit);
    List<StoredSequence> page = new ArrayList<>();
    try (ResultSet rs = select.executeQuery()) {
      while (rs.next()) {
        page.add(stored(rs));
      }
    }
    return page;
  }

  /**
   * Replaces {@code expected} by {@code next} if the row still holds {@code expected}'s version; throws
   * {@link SequenceChangedException} otherwise. {@code next} must keep the ID space (start, stripes,
   * ordering) and not lower max.
   */
  static void replace(Session db, StoredSequence expected, StoredSequence next) throws SQLException {
    String name = expected.definition().name();
    StoredSequence stored = stored(db, name).orElseThrow(() -> notFound(name));
    if (stored.version() != expected.version()) {
      throw new SequenceChangedException(name, expected.etag(), stored.etag());
    }
    if (next.version() == expected.version()) {
      return; // the same: nothing to write (the caller logs the change again)
    }
    next.checkReplaces(stored);
    SequenceDefinition to = next.definition();
    PreparedStatement update = db.prepare("UPDATE sequences SET max = ?, node_block_size = ?, dc_block_size = ?,"
        + " version = ?, deleted_at = ?, expires_at = ?, purged = ? WHERE name = ? AND version = ?");
    update.setLong(1, to.max());
    update.setLong(2, to.nodeBlockSize());
    update.setLong(3, to.dcBlockSize());
    update.setLong(4, next.version());
    setMillis(update, 5, next.deleteTime());
    setMillis(update, 6, next.expireTime());
    update.setInt(7, next.purged() ? 1 : 0);
    update.setString(8, name);
    update.setLong(9, stored.version());
    if (update.executeUpdate() != 1) {
      throw new IllegalStateException("sequence '" + name + "': the row changed inside a write transaction");
    }
  }

  private static void setMillis(PreparedStatement st, int index, Optional<Instant> t) throws SQLException {
    if (t.isPresent()) {
      st.setLong(index, t.get().toEpochMilli());
    } else {
      st.setNull(index, java.sql.Types.INTEGER);
    }
  }

  /**
   * Refuses a definition whose ID space differs from the stored one: the ranges are computed from the
   * caller's definition, so a stale or forged one could hand out IDs of another stripe. Its max may be below
   * the stored one (a server that has not applied an update yet: it only stops earlier), never above.
   */
  static void checkMatchesStore(Session db, SequenceDefinition given) throws SQLException {
    SequenceDefinition stored = stored(db, given.name()).map(StoredSequence::definition)
        .orElseThrow(() -> notFound(given.name()));
    if (stored.start() != given.start() || stored.max() < given.max() || stored.stripes() != given.stripes()
        || stored.ordering() != given.ordering()) {
      throw new IllegalArgumentException("sequence '" + given.name() + "': the definition " + given
          + " does not match the stored one " + stored);
    }
  }

  private static StoredSequence stored(ResultSet rs) throws SQLException {
    Optional<Instant> created = millis(rs, 7);
    Optional<Instant> deleted = millis(rs, 11);
    Optional<Instant> expires = millis(rs, 12);
    return new StoredSequence(definition(rs), created, rs.getLong(10), deleted, expires, rs.getInt(13) != 0);
  }

  private static Optional<Instant> millis(ResultSet rs, int column) throws SQLException {
    long millis = rs.getLong(column);
    return rs.wasNull() ? Optional.empty() : Optional.of(Instant.ofEpochMilli(millis)); // wasNull: the last read
  }

  private static SequenceDefinition definition(ResultSet rs) throws SQLException {
    return new SequenceDefinition(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getInt(4), rs.getLong(5),
        rs.getLong(6), Ordering.valueOf(rs.getString(8)), rs.getString(9));
  }

  private static SequenceNotFoundException notFound(String name) {
    return new SequenceNotFoundException("sequence '" + name + "' does not exist");
  }
}
