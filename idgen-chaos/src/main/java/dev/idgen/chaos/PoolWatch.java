package dev.idgen.chaos;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads the servers' datacenter pool rows ({@code dc_pools}) of the run's keyspace directly over CQL: the
 * evidence of what a {@code fresh-advance} fault provoked. Each datacenter's row is read through a session
 * whose local datacenter is that one, at {@code LOCAL_QUORUM} (a row is written there only, at
 * {@code LOCAL_SERIAL} with its commit at {@code LOCAL_QUORUM}, so another datacenter's copy may lag). A plain
 * read, not a Paxos round: it observes without contending with the servers' compare-and-sets.
 *
 * <p>What a row can tell: the trim of an {@code AdvanceSequence} that finds no row creates it with the floor
 * and an empty record of appended blocks ({@code appended}); a refill's append creates it with its block in
 * that record and no floor. So a read that shows a floor and an empty record saw a row the trim created, and
 * a later read that shows a block starting at or below the floor in the record saw a refill that had taken
 * its block from the global cursor before the advance moved it, appended after the trim (the race an
 * advance right after a sequence's creation runs into).
 *
 * <p>Threads: the sessions are opened once, under {@code lock}; a session is thread-safe, so reads run
 * concurrently. A read that fails (a node down, a timeout) returns empty: nothing is concluded from it.
 */
final class PoolWatch implements AutoCloseable {
  /** One read of a pool row: absent, or its floor (null: none) and its appended blocks as index pairs. */
  record PoolRow(boolean exists, Long floor, List<Long> appended) {
    static final PoolRow ABSENT = new PoolRow(false, null, List.of());

    /** Whether the record holds a block whose first index is at or below {@code index}. */
    boolean appendedFrom(long index) {
      for (int i = 0; i + 1 < appended.size(); i += 2) {
        if (appended.get(i) <= index) {
          return true;
        }
      }
      return false;
    }
  }

  private final ChaosCassandra cassandra;
  private final String keyspace;
  private final Object lock = new Object();
  @GuardedBy("lock") private final Map<String, CqlSession> sessions = new HashMap<>();
  @GuardedBy("lock") private boolean closed;

  PoolWatch(ChaosCassandra cassandra, String keyspace) {
    this.cassandra = cassandra;
    this.keyspace = keyspace;
  }

  /**
   * Opens a session to each datacenter (once; a second call does nothing). Returns why it could not, or
   * empty; reads then return empty.
   */
  Optional<String> open() {
    synchronized (lock) {
      if (closed) {
        return Optional.of("closed");
      }
      for (String dc : ChaosCassandra.DATACENTERS) {
        if (sessions.containsKey(dc)) {
          continue;
        }
        try {
          sessions.put(dc, session(dc));
        } catch (RuntimeException e) {
          return Optional.of("no CQL session to " + dc + ": " + e);
        }
      }
      return Optional.empty();
    }
  }

  private CqlSession session(String dc) {
    List<InetSocketAddress> contacts = new ArrayList<>();
    for (String point : cassandra.contactPoint(dc).split(",")) {
      String p = point.trim();
      int colon = p.lastIndexOf(':');
      contacts.add(new InetSocketAddress(p.substring(0, colon), Integer.parseInt(p.substring(colon + 1))));
    }
    return CqlSession.builder().addContactPoints(contacts).withLocalDatacenter(dc)
        .withConfigLoader(DriverConfigLoader.programmaticBuilder()
            .withString(DefaultDriverOption.PROTOCOL_VERSION, "V4")
            .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(2))
            .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(10))
            // The harness reads one table: no schema or token metadata (a faster start, less traffic).
            .withBoolean(DefaultDriverOption.METADATA_SCHEMA_ENABLED, false)
            .withBoolean(DefaultDriverOption.METADATA_TOKEN_MAP_ENABLED, false)
            .build())
        .build();
  }

  /** {@code sequence}'s pool row (stripe 0) in {@code dc}, or empty if it could not be read. */
  Optional<PoolRow> read(String sequence, String dc) {
    CqlSession session;
    synchronized (lock) {
      session = closed ? null : sessions.get(dc);
    }
    if (session == null) {
      return Optional.empty();
    }
    try {
      Row row = session.execute(SimpleStatement.newInstance("SELECT floor, appended FROM " + keyspace
          + ".dc_pools WHERE sequence = ? AND stripe = 0 AND datacenter = ?", sequence, dc)
          .setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM)).one();
      if (row == null) {
        return Optional.of(PoolRow.ABSENT);
      }
      Long floor = row.isNull("floor") ? null : row.getLong("floor");
      List<Long> appended = row.isNull("appended") ? List.of() : List.copyOf(row.getList("appended", Long.class));
      return Optional.of(new PoolRow(true, floor, appended));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  /**
   * {@code sequence}'s global cursor (stripe 0: IDs reserved by some datacenter, 0 if no row), read through
   * dc1's session at {@code LOCAL_QUORUM} (written at {@code QUORUM}: a majority of all replicas, so at least
   * two of dc1's three on the netns topologies); empty if it could not be read.
   */
  Optional<Long> reserved(String sequence) {
    CqlSession session;
    synchronized (lock) {
      session = closed ? null : sessions.get(ChaosCassandra.DATACENTERS.get(0));
    }
    if (session == null) {
      return Optional.empty();
    }
    try {
      Row row = session.execute(SimpleStatement.newInstance("SELECT reserved FROM " + keyspace
          + ".global_cursors WHERE sequence = ? AND stripe = 0", sequence)
          .setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM)).one();
      return Optional.of(row == null || row.isNull("reserved") ? 0L : row.getLong("reserved"));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  @Override
  public void close() {
    List<CqlSession> open;
    synchronized (lock) {
      closed = true;
      open = new ArrayList<>(sessions.values());
      sessions.clear();
    }
    for (CqlSession s : open) {
      try {
        s.close();
      } catch (RuntimeException e) {
        // closing at the end: nothing to do about it
      }
    }
  }
}
