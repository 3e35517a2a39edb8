package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.CasOutcomes.backoff;
import static dev.idgen.core.store.cassandra.CasOutcomes.global;
import static dev.idgen.core.store.cassandra.CasOutcomes.stripeKey;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.RangeAboveMaxException;
import dev.idgen.core.RunwayPolicy;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.store.cassandra.CasOutcomes.Attempts;
import dev.idgen.core.store.cassandra.CasOutcomes.CasResult;
import dev.idgen.core.store.cassandra.CasOutcomes.Outcome;
import dev.idgen.core.store.cassandra.CasOutcomes.Tier;
import dev.idgen.core.store.cassandra.CassandraRangeStore.CasKind;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The global tier: table {@code global_cursors}, one row per (sequence, stripe), at SERIAL with QUORUM commits
 * (the whole cluster's Paxos scope). {@code reserved} counts the stripe's IDs that some datacenter has taken;
 * it only grows, by a DC block at a time ({@link #take}) or to an advance's floor ({@link #advance}). Rows are
 * created lazily, never for a sequence that does not exist.
 *
 * <p>Threads: thread-safe. Servers of every datacenter race on the same row; each write is conditioned on the
 * op id it read and the losers re-read and retry after a random back-off ({@code CasOutcomes.backoff}), up to
 * the cas deadline. A take is a removal: it may be tried again after an ambiguous outcome, and an attempt whose
 * outcome stays open is counted as a gap. The one piece of process state is the tier's high water
 * ({@code CasOutcomes.HighWater}, concurrent): a cursor found below what this process saw it at forgot
 * acknowledged writes (docs/design.md, "What idgen assumes") and is moved past them.
 */
@ThreadSafe
final class GlobalTier {
  private static final Logger log = LoggerFactory.getLogger(CassandraRangeStore.class);

  private final CasOutcomes outcomes;
  private final Tier tier;
  private final Definitions definitions;

  GlobalTier(CasOutcomes outcomes, Definitions definitions) {
    this.outcomes = outcomes;
    this.tier = outcomes.globalTier;
    this.definitions = definitions;
  }

  /** Takes a DC block of about {@code size} IDs from the cursor: {@code {from, to, the cursor as read}}. */
  long[] take(SequenceDefinition d, int stripe, long size, long deadline) {
    long total = d.stripeSize(stripe);
    // A removal, like reserve: retried after an ambiguous outcome; open attempts are counted as gaps.
    Attempts<long[]> attempts = new Attempts<>();
    long[] got = null;
    try {
      for (int attempt = 0; ; attempt++) {
        Row row = readCursor(d, stripe, deadline);
        if (row == null) {
          definitions.require(d); // rows are created lazily: never for a sequence that does not exist
        }
        UUID current = row == null ? null : row.getUuid("op");
        if (attempts.mine(current)) {
          tier.recovered.increment();
          got = attempts.effect(current);
          countSkip(d, stripe, got);
          tier.highWater.note(stripeKey(d, stripe), got[1]);
          return got;
        }
        long stored = row == null ? 0 : row.getLong("reserved");
        // A cursor below what this process saw it at forgot acknowledged writes (HighWater): it takes from
        // what it saw, and the IDs in between are a counted gap (they may have been handed out).
        long reserved = Math.max(stored, tier.highWater.above(stripeKey(d, stripe), stored));
        // The cursor only grows: an attempt whose end is still above it never applied.
        attempts.seen(current, r -> stored < r[1]);
        if (reserved >= total) {
          throw new SequenceExhaustedException(d.name(), d.max());
        }
        // A sequence with a max is never reserved far ahead: at most a small fraction of what is left.
        long to = reserved + RunwayPolicy.boundedByRemaining(size, total - reserved);
        // The effect carries the cursor as read: an attempt that skipped past forgotten writes is counted
        // when it is known to have applied, by whichever read learns it.
        UUID op = attempts.next(new long[] {reserved, to, stored}, current);
        BoundStatement cas = row == null
            ? global(outcomes.st().insertGlobal.bind(d.name(), stripe, to, op))
            : global(outcomes.st().updateGlobal.bind(to, op, d.name(), stripe, current));
        CasResult result = outcomes.cas(tier, CasKind.GLOBAL_TAKE, cas, op, current, attempts,
            () -> readCursor(d, stripe, deadline), deadline);
        if (result.applied()) {
          got = attempts.effect(result.op());
          countSkip(d, stripe, got);
          tier.highWater.note(stripeKey(d, stripe), got[1]);
          return got;
        }
        backoff(attempt, deadline, "the global cursor of sequence '" + d.name() + "' stripe " + stripe);
      }
    } finally {
      outcomes.countLost(tier, attempts, got, "a DC block of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  /**
   * Takes {@code count} consecutive indexes of stripe 0 for one caller ({@code ReserveRange}): {@code {from, to}}.
   * The same compare-and-set on the cursor as a DC block's {@link #take}, so the range lies above every block
   * any datacenter has taken (hence above everything its servers and clients hold) and no later take returns
   * any of it. Unlike a take, an ambiguous outcome is not tried again with a new range: the call fails with
   * {@link StoreUnavailableException}, and the range it may have taken is a counted gap that nothing ever
   * returns, so a caller never holds a range that another take could also have got. A lost race (a definite
   * "not applied") is retried after a back-off.
   */
  long[] reserveRange(SequenceDefinition d, long count, long deadline) {
    long total = d.stripeSize(0);
    Attempts<long[]> attempts = new Attempts<>();
    long[] got = null;
    try {
      for (int attempt = 0; ; attempt++) {
        Row row = readCursor(d, 0, deadline);
        if (row == null) {
          definitions.require(d);
        }
        UUID current = row == null ? null : row.getUuid("op");
        if (attempts.mine(current)) {
          // Only an attempt that left the loop open could show up here, and none does; kept for symmetry with take.
          tier.recovered.increment();
          got = attempts.effect(current);
          tier.highWater.note(stripeKey(d, 0), got[1]);
          return got;
        }
        long stored = row == null ? 0 : row.getLong("reserved");
        // As in take: a cursor found below what this process saw forgot acknowledged writes; start above them.
        long reserved = Math.max(stored, tier.highWater.above(stripeKey(d, 0), stored));
        if (total - reserved < count) {
          throw new RangeAboveMaxException(d.name(), d.max(), count, total - reserved);
        }
        long to = reserved + count;
        UUID op = attempts.next(new long[] {reserved, to, stored}, current);
        BoundStatement cas = row == null
            ? global(outcomes.st().insertGlobal.bind(d.name(), 0, to, op))
            : global(outcomes.st().updateGlobal.bind(to, op, d.name(), 0, current));
        CasResult result = outcomes.cas(tier, CasKind.GLOBAL_RESERVE, cas, op, current, attempts,
            () -> readCursor(d, 0, deadline), deadline);
        if (result.applied()) {
          got = attempts.effect(result.op());
          countSkip(d, 0, got);
          tier.highWater.note(stripeKey(d, 0), got[1]);
          return got;
        }
        if (result.outcome() == Outcome.AMBIGUOUS) {
          throw new StoreUnavailableException("reserving " + count + " IDs of sequence '" + d.name() + "': the"
              + " compare-and-set on its global cursor had an unknown outcome that reading the cursor back could not"
              + " settle (another server wrote it since); the range it may have taken (" + d.idAt(0, reserved) + " to "
              + d.idAt(0, to - 1) + ") is never handed to anyone (a gap): nothing was reserved, retry");
        }
        backoff(attempt, deadline, "reserving a range of sequence '" + d.name() + "' from its global cursor");
      }
    } finally {
      // Every attempt still open (ambiguous, or unresolved): its range may have left the cursor; a gap.
      outcomes.countLost(tier, attempts, got, "a reserved range of sequence '" + d.name() + "'");
    }
  }

  /**
   * Counts the gap of a take that applied after skipping a cursor that forgot acknowledged writes
   * ({@code got}: from, to, the cursor as read), whether its own write or an earlier attempt's applied.
   */
  private void countSkip(SequenceDefinition d, int stripe, long[] got) {
    long skipped = got[0] - got[2];
    if (skipped > 0) {
      tier.regressions.increment();
      tier.idsLost.add(skipped);
      log.error("the global cursor of sequence '{}' stripe {} showed {} IDs reserved, but this server saw {}:"
          + " Cassandra forgot writes it had acknowledged (see docs/operations.md); it was moved past them,"
          + " a gap of {} IDs", d.name(), stripe, got[2], got[0], skipped);
    }
  }

  /** The cursor row at SERIAL (which also completes any Paxos round in progress), retried until {@code deadline}. */
  private Row readCursor(SequenceDefinition d, int stripe, long deadline) {
    return outcomes.serialRead(outcomes.st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.SERIAL, null,
        "global cursor of sequence '" + d.name() + "' stripe " + stripe, deadline);
  }

  /** Raises the cursor to at least {@code minIndex} (an advance); IDs skipped are counted as dropped. */
  void advance(SequenceDefinition d, int stripe, long minIndex, long deadline) {
    // Raising the cursor to at least minIndex: retried until the row shows it, whatever the outcomes.
    Attempts<Void> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      Row row = readCursor(d, stripe, deadline);
      if (row == null) {
        definitions.require(d);
      }
      long reserved = row == null ? 0 : row.getLong("reserved");
      if (reserved >= minIndex) {
        return;
      }
      UUID current = row == null ? null : row.getUuid("op");
      UUID op = attempts.next(null, current);
      BoundStatement cas = row == null
          ? global(outcomes.st().insertGlobal.bind(d.name(), stripe, minIndex, op))
          : global(outcomes.st().updateGlobal.bind(minIndex, op, d.name(), stripe, current));
      if (outcomes.cas(tier, CasKind.GLOBAL_ADVANCE, cas, op, current, attempts,
          () -> readCursor(d, stripe, deadline), deadline).applied()) {
        outcomes.idsDropped.add(minIndex - reserved);
        return;
      }
      backoff(attempt, deadline, "advancing the global cursor of sequence '" + d.name() + "' stripe " + stripe);
    }
  }
}
