package dev.idgen.core.store.embedded;

import dev.idgen.core.Ordering;
import dev.idgen.core.SequenceAlreadyExistsException;
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
 * The sequences' definitions: table {@code sequences}, one row per sequence, written once (with a row per
 * stripe in {@code stripes}) and never changed; and the check that a caller's definition is the stored one.
 *
 * <p>Stateless: every method runs in the caller's transaction, on the {@link Session} it is given.
 */
final class Definitions {
  /** The columns {@link #stored(ResultSet)} reads, in its order. */
  private static final String COLUMNS =
      "name, start, max, stripes, node_block_size, dc_block_size, created_at, ordering, home_datacenter";

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
   * Refuses a definition whose ID space differs from the stored one: the ranges are computed from the
   * caller's definition, so a stale or forged one could hand out IDs of another stripe.
   */
  static void checkMatchesStore(Session db, SequenceDefinition given) throws SQLException {
    SequenceDefinition stored = stored(db, given.name()).map(StoredSequence::definition)
        .orElseThrow(() -> notFound(given.name()));
    if (stored.start() != given.start() || stored.max() != given.max() || stored.stripes() != given.stripes()
        || stored.ordering() != given.ordering()) {
      throw new IllegalArgumentException("sequence '" + given.name() + "': the definition " + given
          + " does not match the stored one " + stored);
    }
  }

  private static StoredSequence stored(ResultSet rs) throws SQLException {
    long created = rs.getLong(7);
    boolean unknown = rs.wasNull(); // about the last column read: before definition() reads the others
    return new StoredSequence(definition(rs), unknown ? Optional.empty() : Optional.of(Instant.ofEpochMilli(created)));
  }

  private static SequenceDefinition definition(ResultSet rs) throws SQLException {
    return new SequenceDefinition(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getInt(4), rs.getLong(5),
        rs.getLong(6), Ordering.valueOf(rs.getString(8)), rs.getString(9));
  }

  private static SequenceNotFoundException notFound(String name) {
    return new SequenceNotFoundException("sequence '" + name + "' does not exist");
  }
}
