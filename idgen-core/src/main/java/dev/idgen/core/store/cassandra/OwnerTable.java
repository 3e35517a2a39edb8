package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.CasOutcomes.local;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.OwnerRecord;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.store.cassandra.CasOutcomes.Attempts;
import dev.idgen.core.store.cassandra.CassandraRangeStore.CasKind;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.annotation.Nullable;

/**
 * The owners of strict sequences: table {@code owners}, one row per sequence, in the Paxos scope of the
 * sequence's home datacenter (LOCAL_SERIAL, written only from there). Who may own a sequence, and for how
 * long, is the allocator's business (docs/design.md, "Strictly increasing IDs across servers"); this room
 * only reads the row and replaces it by compare-and-set.
 *
 * <p>Threads: thread-safe and stateless. Servers that race to take a sequence over race in Cassandra: each
 * write is conditioned on the version (op id) of the row it read, and the new row's op id is the new
 * version, so a read-back after an unknown outcome tells whether this write is the one that applied. The
 * owner's exclusivity over the pool comes from the fence in {@code PoolTier}, not from this row alone.
 */
@ThreadSafe
final class OwnerTable {
  private final CassandraSettings settings;
  private final String dc;
  private final CasOutcomes outcomes;

  OwnerTable(CassandraSettings settings, CasOutcomes outcomes) {
    this.settings = settings;
    this.dc = settings.localDatacenter();
    this.outcomes = outcomes;
  }

  Optional<OwnerRecord> owner(SequenceDefinition d) {
    String what = "owner of sequence '" + d.name() + "'";
    Row r = d.homeDatacenter().equals(dc)
        ? outcomes.serialRead(outcomes.st().selectOwner.bind(d.name()), ConsistencyLevel.LOCAL_SERIAL, null, what, 0)
        // From another datacenter: its own replicas' copy, only to learn where to forward (the owner
        // itself refuses calls it no longer owns).
        : outcomes.read(outcomes.st().selectOwner.bind(d.name()), ConsistencyLevel.LOCAL_QUORUM, what);
    return Optional.ofNullable(r).map(OwnerTable::ownerRecord);
  }

  private static OwnerRecord ownerRecord(Row r) {
    return new OwnerRecord(r.getString("server"), r.getUuid("incarnation"), r.getString("target"),
        r.getLong("epoch"), r.getUuid("op"));
  }

  boolean replaceOwner(SequenceDefinition d, @Nullable OwnerRecord expected, OwnerRecord next) {
    if (!d.strict() || !d.homeDatacenter().equals(dc)) {
      throw new IllegalArgumentException("sequence '" + d.name() + "' is not a strict sequence of " + dc);
    }
    long deadline = System.nanoTime() + Math.min(settings.casDeadline().toNanos(), TimeUnit.SECONDS.toNanos(2));
    Attempts<Void> attempts = new Attempts<>();
    // The new row's op is next.version: a read-back that finds it knows the write applied.
    attempts.next(next.version(), null, expected == null ? null : expected.version());
    BoundStatement cas = expected == null
        ? local(outcomes.st().insertOwner.bind(d.name(), next.server(), next.incarnation(), next.target(),
            next.epoch(), next.version()))
        : local(outcomes.st().updateOwner.bind(next.server(), next.incarnation(), next.target(), next.epoch(),
            next.version(), d.name(), expected.version()));
    return outcomes.cas(outcomes.poolTier, CasKind.OWNER, cas, next.version(),
        expected == null ? null : expected.version(), attempts, () -> outcomes.serialRead(
            outcomes.st().selectOwner.bind(d.name()), ConsistencyLevel.LOCAL_SERIAL, null,
            "owner of sequence '" + d.name() + "'", deadline), deadline).applied();
  }
}
