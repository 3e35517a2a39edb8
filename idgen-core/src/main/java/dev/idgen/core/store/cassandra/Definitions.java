package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.CasOutcomes.backoff;
import static dev.idgen.core.store.cassandra.CasOutcomes.global;
import static dev.idgen.core.store.cassandra.CasOutcomes.unavailable;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.Ordering;
import dev.idgen.core.SequenceAlreadyExistsException;
import dev.idgen.core.SequenceChangedException;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.StoredSequence;
import dev.idgen.core.store.cassandra.CasOutcomes.Attempts;
import dev.idgen.core.store.cassandra.CassandraRangeStore.CasKind;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sequences' definitions: table {@code sequences}, one row per sequence, created at SERIAL
 * ({@code IF NOT EXISTS}) and changed only at SERIAL by a compare-and-set on its op id that raises its version
 * ({@link #replace}: UpdateSequence, DeleteSequence, UndeleteSequence, a purge). Rows are never deleted.
 *
 * <p>Threads: thread-safe and stateless. A change never moves the ID space (start, stripes, ordering) and only
 * raises max, so a local read ({@link #findStored}, what loading a sequence reads) that is behind a change is
 * still safe to serve from: it stops at the old max, or serves a sequence deleted moments ago until the floor
 * log's entry makes the server read it again at SERIAL ({@link #findCurrent}, which never falls back to a local
 * read: the server confirms the entry only once it has read the change). Only "not found" is double-checked at
 * SERIAL. Two servers creating the same name race in Cassandra's Paxos round: one wins, the
 * other reads the winner's row and reports that the sequence exists (or, finding its own op id there, that
 * its earlier attempt applied); two changes race the same way, and the loser fails the version check.
 */
@ThreadSafe
final class Definitions {
  private static final Logger log = LoggerFactory.getLogger(CassandraRangeStore.class);

  private final CassandraSettings settings;
  private final CasOutcomes outcomes;
  private final Datacenters datacenters;

  Definitions(CassandraSettings settings, CasOutcomes outcomes, Datacenters datacenters) {
    this.settings = settings;
    this.outcomes = outcomes;
    this.datacenters = datacenters;
  }

  void create(SequenceDefinition d) {
    if (d.strict() && !datacenters.all().contains(d.homeDatacenter())) {
      throw InvalidRequestException.ofField("home_datacenter", "sequence '" + d.name() + "': home datacenter '"
          + d.homeDatacenter() + "' holds no replica of keyspace '" + settings.keyspace() + "' (expected one of "
          + datacenters.all() + ")");
    }
    long deadline = outcomes.deadline();
    Attempts<Void> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      UUID op = attempts.next(null, null);
      BoundStatement insert = global(outcomes.st().insertDefinition.bind(d.name(), d.start(), d.max(), d.stripes(),
          d.nodeBlockSize(), d.dcBlockSize(), Instant.now(), op, d.ordering().name(), d.strict() ? d.homeDatacenter() : null));
      if (outcomes.cas(outcomes.globalTier, CasKind.CREATE, insert, op, null, attempts, () -> outcomes.serialRead(
          outcomes.st().selectDefinition.bind(d.name()), ConsistencyLevel.SERIAL, null, "definition of '" + d.name() + "'",
          deadline), deadline).applied()) {
        return;
      }
      Row existing = outcomes.serialRead(outcomes.st().selectDefinition.bind(d.name()), ConsistencyLevel.SERIAL, null,
          "definition of '" + d.name() + "'", deadline);
      if (existing != null) {
        if (attempts.mine(existing.getUuid("op"))) {
          return; // an earlier attempt of ours applied after all
        }
        throw new SequenceAlreadyExistsException("sequence '" + d.name() + "' already exists");
      }
      backoff(attempt, deadline, "creating sequence '" + d.name() + "'");
    }
  }

  Optional<StoredSequence> findStored(String name) {
    // A local read that finds a row is safe to serve from even if a change is still on its way (see the
    // class comment); only "not found" is double-checked at SERIAL, in case the creation is so recent it is
    // still in flight.
    Row row = outcomes.read(outcomes.st().selectDefinition.bind(name), ConsistencyLevel.LOCAL_QUORUM,
        "definition of '" + name + "'");
    if (row == null) {
      try {
        row = outcomes.serialRead(outcomes.st().selectDefinition.bind(name), ConsistencyLevel.SERIAL, null,
            "definition of '" + name + "'", 0);
      } catch (StoreUnavailableException e) {
        // Cut off from the other datacenters: this datacenter's answer stands (a sequence created
        // elsewhere moments ago may not be here yet).
        log.debug("could not double-check at SERIAL that sequence '{}' does not exist: {}", name, e.getMessage());
      }
    }
    return Optional.ofNullable(row).map(Definitions::stored);
  }

  /**
   * The row at SERIAL, so that it shows every change that completed before. Never a weaker read in its place:
   * a server confirms a change only after it read it, and this datacenter's replicas may be behind it (they
   * once answered here, and a server cut off from the other datacenters confirmed a delete it never saw).
   *
   * @throws StoreUnavailableException if the SERIAL read fails (say, this datacenter is cut off from the others)
   */
  Optional<StoredSequence> findCurrent(String name) {
    return Optional.ofNullable(outcomes.serialRead(outcomes.st().selectDefinition.bind(name),
        ConsistencyLevel.SERIAL, null, "definition of '" + name + "'", 0)).map(Definitions::stored);
  }

  /**
   * Writes {@code next} over {@code expected} by a compare-and-set at SERIAL, if the row still has
   * {@code expected}'s version ({@link SequenceChangedException} otherwise); when {@code next} is
   * {@code expected} itself, only checks the version. A replacement, so an ambiguous outcome is simply read
   * back: the row carrying one of this operation's op ids means it applied.
   */
  void replace(StoredSequence expected, StoredSequence next, long deadline) {
    String name = expected.definition().name();
    String what = "definition of '" + name + "'";
    Attempts<Void> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      Row row = outcomes.serialRead(outcomes.st().selectDefinition.bind(name), ConsistencyLevel.SERIAL, null, what,
          deadline);
      if (row == null) {
        throw new SequenceNotFoundException("sequence '" + name + "' does not exist");
      }
      UUID current = row.getUuid("op");
      if (attempts.mine(current)) {
        return; // an earlier attempt of ours applied after all
      }
      StoredSequence stored = stored(row);
      if (stored.version() != expected.version()) {
        throw new SequenceChangedException(name, expected.etag(), stored.etag());
      }
      if (next.version() == expected.version()) {
        return;
      }
      next.checkReplaces(stored);
      SequenceDefinition to = next.definition();
      UUID op = attempts.next(null, current);
      BoundStatement update = global(outcomes.st().updateDefinition.bind(to.max(), to.nodeBlockSize(),
          to.dcBlockSize(), next.version(), next.deleteTime().orElse(null), next.expireTime().orElse(null),
          next.purged(), op, name, current));
      if (outcomes.cas(outcomes.globalTier, CasKind.DEFINITION, update, op, current, attempts,
          () -> outcomes.serialRead(outcomes.st().selectDefinition.bind(name), ConsistencyLevel.SERIAL, null, what,
              deadline), deadline).applied()) {
        return;
      }
      backoff(attempt, deadline, "changing sequence '" + name + "'");
    }
  }

  private static StoredSequence stored(Row r) {
    // Rows written before 0.4 have no version (1) and were never deleted.
    long version = r.isNull("version") ? StoredSequence.FIRST_VERSION : r.getLong("version");
    return new StoredSequence(definition(r), Optional.ofNullable(r.getInstant("created_at")), version,
        Optional.ofNullable(r.getInstant("deleted_at")), Optional.ofNullable(r.getInstant("expires_at")),
        !r.isNull("purged") && r.getBoolean("purged"));
  }

  private static SequenceDefinition definition(Row r) {
    // Rows written before 0.2 have no ordering: PER_SERVER.
    Ordering ordering = r.isNull("ordering") ? Ordering.PER_SERVER : Ordering.valueOf(r.getString("ordering"));
    return new SequenceDefinition(r.getString("name"), r.getLong("start"), r.getLong("max"),
        r.getInt("stripes"), r.getLong("node_block_size"), r.getLong("dc_block_size"), ordering,
        ordering == Ordering.STRICT ? r.getString("home_dc") : "");
  }

  List<StoredSequence> listStored(String afterName, int limit) {
    // The table is small (one row per sequence) and partitions are in token order, so names are
    // read whole and sorted here.
    TreeSet<String> names = new TreeSet<>();
    try {
      outcomes.plainReads.increment();
      for (Row r : outcomes.st().session.execute(
          outcomes.st().selectNames.bind().setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM))) {
        names.add(r.getString(0));
      }
    } catch (DriverException e) {
      throw unavailable("listing sequences", e);
    }
    List<StoredSequence> out = new ArrayList<>();
    for (String name : names.tailSet(afterName, false)) {
      if (out.size() == limit) {
        break;
      }
      findStored(name).ifPresent(out::add);
    }
    return out;
  }

  /** Fails with {@link SequenceNotFoundException} unless the sequence exists. */
  void require(SequenceDefinition d) {
    if (findStored(d.name()).isEmpty()) {
      throw new SequenceNotFoundException("sequence '" + d.name() + "' does not exist");
    }
  }
}
