package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.Blocks.consume;
import static dev.idgen.core.store.cassandra.Blocks.merge;
import static dev.idgen.core.store.cassandra.Blocks.overlaps;
import static dev.idgen.core.store.cassandra.Blocks.size;
import static dev.idgen.core.store.cassandra.Blocks.trim;
import static dev.idgen.core.store.cassandra.CasOutcomes.backoff;
import static dev.idgen.core.store.cassandra.CasOutcomes.local;
import static dev.idgen.core.store.cassandra.CasOutcomes.stripeKey;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.IdRange;
import dev.idgen.core.NotOwnerException;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.Ticker;
import dev.idgen.core.store.cassandra.CasOutcomes.Attempts;
import dev.idgen.core.store.cassandra.CasOutcomes.CasResult;
import dev.idgen.core.store.cassandra.CasOutcomes.Outcome;
import dev.idgen.core.store.cassandra.CasOutcomes.Tier;
import dev.idgen.core.store.cassandra.CassandraRangeStore.CasKind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pool tier: table {@code dc_pools}, one row per (sequence, stripe, datacenter), in its datacenter's Paxos
 * scope (LOCAL_SERIAL with LOCAL_QUORUM commits, written only through coordinators of that datacenter). Servers
 * take node blocks from the front of {@code blocks} ({@link #reserve}); a refill moves a DC block from the
 * global cursor to the back ({@link #appendToPool}), recorded in {@link Appended} so that it is never appended
 * twice; a server gives back what it did not hand out ({@link #giveBack}); an advance trims at its floor
 * ({@link #trimPool}); a row that forgot acknowledged writes is healed. The rules behind each: docs/design.md,
 * "Unknown outcomes are resolved" and "What idgen assumes".
 *
 * <p>Threads: thread-safe. The servers of a datacenter race on the same row: every write is conditioned on the
 * op id it read, and losers re-read and retry with back-off. Within this process, at most one refill per
 * (sequence, stripe) is in flight ({@link #refills}, a concurrent map of futures); it runs on this tier's own
 * daemon thread pool ({@link #refillExecutor}), and callers that find the pool empty wait for it, up to the
 * cas deadline. The rest of the process state is concurrent and only grows: this datacenter's measured rates
 * ({@link DcRate}, synchronized on itself) and the tier's high water ({@code CasOutcomes.HighWater}).
 *
 * <p>A strict sequence's pool has a fence: its owner's epoch, written before the owner takes anything, and
 * every write is conditioned on the row's op, so an owner that a successor fenced out fails its next write
 * and reads the higher epoch ({@link NotOwnerException}).
 */
@ThreadSafe
final class PoolTier {
  private static final Logger log = LoggerFactory.getLogger(CassandraRangeStore.class);

  /** The epoch argument of a sequence that is not strict: its pool has no fence. */
  static final long NOT_STRICT = 0;

  private final CassandraSettings settings;
  private final String dc;
  private final CasOutcomes outcomes;
  private final Tier tier;
  private final GlobalTier globalTier;
  private final ConcurrentMap<String, CompletableFuture<Void>> refills = new ConcurrentHashMap<>();
  /** This datacenter's consumption rate per (sequence, stripe), as this process observes its pool. */
  private final ConcurrentMap<String, DcRate> rates = new ConcurrentHashMap<>();
  private final Ticker ticker = Ticker.system();
  private final ExecutorService refillExecutor;

  PoolTier(CassandraSettings settings, CasOutcomes outcomes, GlobalTier globalTier) {
    this.settings = settings;
    this.dc = settings.localDatacenter();
    this.outcomes = outcomes;
    this.tier = outcomes.poolTier;
    this.globalTier = globalTier;
    AtomicInteger n = new AtomicInteger();
    refillExecutor = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "idgen-dc-pool-refill-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  /** Stops the refills: the store is closing. */
  void close() {
    refillExecutor.shutdownNow();
  }

  // ---------------------------------------------------------------------------------------------
  // Node blocks from the DC pool

  IdRange reserve(SequenceDefinition d, int stripe, long size, long epoch) {
    if (size < 1) {
      throw new IllegalArgumentException("size: " + size + " (expected: >= 1)");
    }
    if (stripe < 0 || stripe >= d.stripes()) {
      throw new IllegalArgumentException("stripe: " + stripe + " (expected: 0 to " + (d.stripes() - 1) + ")");
    }
    long deadline = outcomes.deadline();
    rate(d, stripe).request(size);
    // Taking IDs out of the pool is a removal: after an ambiguous outcome it may be tried again (the
    // worst case is a gap, counted when this returns), and an earlier attempt found applied is ours.
    Attempts<long[]> attempts = new Attempts<>();
    long[] got = null;
    long ambiguousHeal = 0;
    try {
      for (int attempt = 0; ; attempt++) {
        PoolRow pool = readPool(d, stripe, dc, null, deadline);
        if (pool != null && attempts.mine(pool.op)) {
          got = attempts.effect(pool.op);
          tier.recovered.increment();
          return reserved(d, stripe, got, pool.taken, pool.blocks, epoch);
        }
        if (epoch != NOT_STRICT && (pool == null || pool.ownerEpoch != epoch)) {
          checkFence(d, pool, epoch);
          fence(d, pool, epoch, deadline);
          continue;
        }
        if (pool != null) {
          long heal = healIfForgotten(d, stripe, pool, ambiguousHeal, deadline);
          ambiguousHeal = Math.max(heal, 0);
          if (heal >= 0) {
            continue;
          }
        }
        if (pool != null && pool.floor != null && !trim(pool.blocks, PoolRow.minIndex(pool, d, stripe)).equals(pool.blocks)) {
          // Below the pool's own floor: appended without it (a writer older than the floor rules). Never taken.
          log.warn("{}'s pool of sequence '{}' stripe {} holds IDs at or below its floor {}: trimming them before"
              + " reserving", dc, d.name(), stripe, pool.floor);
          trimPool(d, stripe, dc, null, pool.floor, deadline);
          continue;
        }
        attempts.seen(pool == null ? null : pool.op, r -> pool != null && overlaps(pool.blocks, r[0], r[1]));
        if (pool == null || pool.blocks.isEmpty()) {
          awaitRefill(d, stripe, 0, deadline, epoch);
          continue;
        }
        long from = pool.blocks.get(0);
        // Blocks above this caller's max were appended under a raised max that it has not applied yet: it
        // stops at its own max (it reads the new definition at its next floor sync), taking nothing beyond.
        long end = Math.min(pool.blocks.get(1), d.stripeSize(stripe));
        if (from >= end) {
          throw new SequenceExhaustedException(d.name(), d.max());
        }
        long take = Math.min(size, end - from);
        List<Long> rest = consume(pool.blocks, take);
        long taken = pool.taken + take;
        UUID op = attempts.next(new long[] {from, from + take}, pool.op);
        BoundStatement update = local(outcomes.st().updatePool.bind(rest, pool.floor, taken, op, d.name(), stripe,
            dc, pool.op));
        CasResult result = outcomes.cas(tier, CasKind.POOL_RESERVE, update, op, pool.op, attempts,
            () -> readPoolRow(d, stripe, dc, null, deadline), deadline);
        if (result.applied()) {
          got = attempts.effect(result.op());
          return reserved(d, stripe, got, result.op().equals(op) ? taken : pool.taken, rest, epoch);
        }
        backoff(attempt, deadline, "reserving from " + dc + "'s pool of sequence '" + d.name() + "' stripe " + stripe);
      }
    } finally {
      outcomes.countLost(tier, attempts, got, "a node block of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  /**
   * Checks a pool row read at LOCAL_SERIAL against the most this process saw taken from it: returns -1 if it
   * shows at least that much (and notes what it shows), else heals it and returns the IDs of that heal if its
   * outcome was ambiguous, 0 if not; the caller then reads the row again. {@code ambiguousHeal}: the IDs of
   * the previous heal, if its outcome was ambiguous.
   */
  private long healIfForgotten(SequenceDefinition d, int stripe, PoolRow pool, long ambiguousHeal, long deadline) {
    long seen = tier.highWater.above(stripeKey(d, stripe), pool.taken);
    if (ambiguousHeal > 0) {
      // A heal whose outcome was ambiguous: the row no longer below what this server saw means it
      // applied (its blocks dropped); still below, it did not, and the heal below is tried again.
      if (seen == Long.MIN_VALUE) {
        countHealed(ambiguousHeal);
        log.error("{}'s pool of sequence '{}' stripe {} was repaired by a heal whose outcome had looked"
            + " ambiguous: its {} IDs were dropped as a gap (Cassandra had forgotten acknowledged writes)",
            dc, d.name(), stripe, ambiguousHeal);
      }
    }
    if (seen != Long.MIN_VALUE) {
      return healPool(d, stripe, pool, seen, deadline);
    }
    tier.highWater.note(stripeKey(d, stripe), pool.taken); // a serial read: the store held that much
    return -1;
  }

  /**
   * A reservation that applied: note the DC's rate, and refill the pool as soon as it holds less than the
   * isolation runway at that rate, so that the runway is there when the datacenter is cut off.
   */
  private IdRange reserved(SequenceDefinition d, int stripe, long[] range, long taken, List<Long> rest,
      long epoch) {
    tier.highWater.note(stripeKey(d, stripe), taken);
    DcRate rate = rate(d, stripe);
    rate.observe(ticker.nanos(), taken);
    long held = size(rest);
    if (held < rate.lowWater(d)) {
      refillInBackground(d, stripe, held, epoch);
    }
    return d.range(stripe, range[0], range[1]);
  }

  /** Refuses an owner whose epoch a successor's fence superseded. */
  private static void checkFence(SequenceDefinition d, PoolRow pool, long epoch) {
    if (pool != null && pool.ownerEpoch > epoch) {
      throw new NotOwnerException(d.name(), null, Duration.ZERO, "sequence '" + d.name() + "': owner epoch "
          + epoch + " was superseded by epoch " + pool.ownerEpoch + " (another server took the sequence over)");
    }
  }

  /**
   * Records a new owner's epoch in the pool before it takes anything from it. Idempotent (it writes the
   * epoch, not an increment), so an unknown outcome is simply read again by the caller.
   */
  private void fence(SequenceDefinition d, PoolRow pool, long epoch, long deadline) {
    Attempts<Void> attempts = new Attempts<>();
    UUID op = attempts.next(null, pool == null ? null : pool.op);
    BoundStatement cas = pool == null
        ? local(outcomes.st().insertFencedPool.bind(d.name(), dc, Long.MIN_VALUE, epoch, op))
        : local(outcomes.st().fencePool.bind(epoch, op, d.name(), 0, dc, pool.op));
    outcomes.cas(tier, CasKind.POOL_FENCE, cas, op, pool == null ? null : pool.op, attempts,
        () -> readPoolRow(d, 0, dc, null, deadline), deadline);
  }

  /**
   * A pool row that shows fewer IDs taken than this process saw taken from it ({@code seen}) forgot
   * acknowledged writes ({@code HighWater}): reservations, and maybe appends. Its blocks may hold IDs that were
   * handed out, so all of them are dropped (a counted gap), its {@code taken} is put back, and its record of
   * appended blocks is closed at the global cursor as it stands, so that no block taken from it before now (one
   * appended in the forgotten writes, then consumed, say) is ever appended again. The pool then refills from
   * the global cursor, with IDs nobody holds. A removal: repeated until the row shows it, whatever the outcomes.
   */
  private long healPool(SequenceDefinition d, int stripe, PoolRow pool, long seen, long deadline) {
    Row global = outcomes.serialRead(outcomes.st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.SERIAL,
        null, "global cursor of sequence '" + d.name() + "' stripe " + stripe
            + " (to repair " + dc + "'s pool, which forgot acknowledged writes)", deadline);
    long below = Math.max(pool.appended.below(), global == null ? 0 : global.getLong("reserved"));
    Attempts<Void> attempts = new Attempts<>();
    UUID op = attempts.next(null, pool.op);
    BoundStatement heal = local(outcomes.st().healPool.bind(List.of(), seen, List.of(), below, op, d.name(), stripe,
        dc, pool.op));
    CasResult result = outcomes.cas(tier, CasKind.POOL_HEAL, heal, op, pool.op, attempts,
        () -> readPoolRow(d, stripe, dc, null, deadline), deadline);
    long dropped = size(pool.blocks);
    if (result.outcome() == Outcome.AMBIGUOUS) {
      return dropped; // the caller's next read tells whether it applied
    }
    if (result.applied()) {
      countHealed(dropped);
      log.error("{}'s pool of sequence '{}' stripe {} showed {} IDs taken, but this server saw {} taken from it:"
          + " Cassandra forgot writes it had acknowledged (a replica that crashed in commitlog_sync: periodic?"
          + " see docs/operations.md). Its {} IDs were dropped as a gap and it refills from the global cursor,"
          + " so that nothing it handed out before is handed out again", dc, d.name(), stripe, pool.taken, seen,
          dropped);
    }
    // Not applied: the caller reads the row again and decides anew.
    return 0;
  }

  private void countHealed(long dropped) {
    tier.regressions.increment();
    tier.idsLost.add(dropped);
  }

  /**
   * Puts IDs this server reserved and never handed out back at the front of its datacenter's pool, so
   * that the next reservations take them. An addition that cannot be recorded the way DC blocks are (a
   * returned range may be consumed again before a read-back sees it), so it is retried only after a
   * definite "not applied" from Cassandra. After an unknown outcome the row decides: it carries this
   * operation's op id, or still holds some of the returned IDs (nobody else can have put them there:
   * this server held them alone), and then they are back; otherwise they are counted lost, never
   * appended again.
   */
  long giveBack(SequenceDefinition d, int stripe, List<IdRange> ranges) {
    List<Long> mine = new ArrayList<>();
    for (IdRange r : ranges) {
      long from = d.indexOf(stripe, r.first());
      mine.add(from);
      mine.add(from + r.count());
    }
    long total = size(mine);
    long deadline = outcomes.deadline();
    Attempts<Void> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      PoolRow pool;
      try {
        pool = readPool(d, stripe, dc, null, deadline);
      } catch (StoreUnavailableException e) {
        return lostGivingBack(d, stripe, total, e.getMessage());
      }
      // An AdvanceSequence may have raised the floor since these IDs were reserved.
      List<Long> kept = trim(mine, PoolRow.minIndex(pool, d, stripe));
      if (kept.isEmpty()) {
        outcomes.idsDropped.add(total);
        return 0;
      }
      List<Long> blocks = merge(pool == null ? List.of() : pool.blocks, kept);
      UUID op = attempts.next(null, pool == null ? null : pool.op);
      BoundStatement cas = pool == null
          ? local(outcomes.st().insertPool.bind(d.name(), stripe, dc, blocks, null, List.of(), Long.MIN_VALUE, op))
          : local(outcomes.st().updatePool.bind(blocks, pool.floor, pool.taken, op, d.name(), stripe, dc, pool.op));
      CasResult result;
      try {
        result = outcomes.cas(tier, CasKind.POOL_GIVE_BACK, cas, op, pool == null ? null : pool.op, attempts,
            () -> readPoolRow(d, stripe, dc, null, deadline), deadline);
      } catch (StoreUnavailableException e) {
        return lostGivingBack(d, stripe, total, e.getMessage());
      }
      if (result.applied()) {
        outcomes.idsDropped.add(total - size(kept));
        return size(kept);
      }
      if (result.resolved()) {
        // Unknown outcome, not found applied: look once more, then never repeat it.
        try {
          PoolRow now = readPool(d, stripe, dc, null, deadline);
          if (now != null && (attempts.mine(now.op) || overlaps(now.blocks, kept))) {
            tier.recovered.increment();
            outcomes.idsDropped.add(total - size(kept));
            return size(kept);
          }
        } catch (StoreUnavailableException e) {
          // counted lost below
        }
        return lostGivingBack(d, stripe, total, "its compare-and-set had an unknown outcome");
      }
      try {
        backoff(attempt, deadline, "giving back to " + dc + "'s pool of sequence '" + d.name() + "' stripe " + stripe);
      } catch (StoreUnavailableException e) {
        return lostGivingBack(d, stripe, total, e.getMessage());
      }
    }
  }

  private long lostGivingBack(SequenceDefinition d, int stripe, long n, String why) {
    tier.idsLost.add(n);
    log.warn("could not give back {} IDs of sequence '{}' stripe {} to {}'s pool; they are a counted gap: {}",
        n, d.name(), stripe, dc, why);
    return 0;
  }

  // ---------------------------------------------------------------------------------------------
  // Refills: a DC block from the global cursor to the pool

  private void awaitRefill(SequenceDefinition d, int stripe, long held, long deadline, long epoch) {
    CompletableFuture<Void> refill = startRefill(d, stripe, held, epoch);
    try {
      refill.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof SequenceNotFoundException notFound) {
        throw notFound;
      }
      if (cause instanceof NotOwnerException notOwner) {
        throw notOwner;
      }
      if (cause instanceof SequenceExhaustedException exhausted) {
        // Another server of this DC may have appended a last block meanwhile: look once more.
        PoolRow pool = readPool(d, stripe, dc, null, deadline);
        if (pool == null || pool.blocks.isEmpty()) {
          throw exhausted;
        }
        return;
      }
      if (cause instanceof StoreUnavailableException u) {
        throw new StoreUnavailableException("sequence '" + d.name() + "' stripe " + stripe + ": datacenter "
            + dc + "'s pool is empty and it cannot be refilled: " + u.getMessage(), u);
      }
      throw new StoreUnavailableException("sequence '" + d.name() + "' stripe " + stripe
          + ": refilling " + dc + "'s pool failed: " + cause, cause);
    } catch (TimeoutException e) {
      throw new StoreUnavailableException("sequence '" + d.name() + "' stripe " + stripe + ": datacenter "
          + dc + "'s pool is empty and its refill from the global cursor did not finish in time"
          + " (are the other datacenters reachable?)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("interrupted while refilling a pool", e);
    }
  }

  private void refillInBackground(SequenceDefinition d, int stripe, long held, long epoch) {
    startRefill(d, stripe, held, epoch).whenComplete((v, e) -> {
      if (e != null && !(e instanceof SequenceExhaustedException)) {
        log.warn("background refill of datacenter {}'s pool of sequence '{}' stripe {} failed: {}",
            dc, d.name(), stripe, e.getMessage());
      }
    });
  }

  /**
   * Starts a refill of this DC's pool, which held {@code held} IDs when last read, or joins the one this
   * process already has in flight.
   */
  private CompletableFuture<Void> startRefill(SequenceDefinition d, int stripe, long held, long epoch) {
    String key = stripeKey(d, stripe);
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> running = refills.putIfAbsent(key, mine);
    if (running != null) {
      return running;
    }
    try {
      refillExecutor.execute(() -> {
        try {
          refillPool(d, stripe, held, epoch);
          mine.complete(null);
        } catch (Throwable t) {
          mine.completeExceptionally(t);
        } finally {
          refills.remove(key, mine);
        }
      });
    } catch (RuntimeException e) {
      refills.remove(key, mine);
      mine.completeExceptionally(new StoreUnavailableException("the store is closed", e));
    }
    return mine;
  }

  /** Moves one DC block from the global cursor to this datacenter's pool: two CAS steps. */
  private void refillPool(SequenceDefinition d, int stripe, long held, long epoch) {
    long deadline = outcomes.deadline();
    long[] block = globalTier.take(d, stripe, rate(d, stripe).refillSize(d, held), deadline);
    try {
      appendToPool(d, stripe, block[0], block[1], outcomes.deadline(), epoch);
    } catch (RuntimeException e) {
      // Taken from the global cursor but not in the pool: nobody will ever hand it out. A gap.
      outcomes.globalTier.idsLost.add(block[1] - block[0]);
      log.warn("lost a DC block of sequence '{}' stripe {} ({} IDs) between the global cursor and {}'s pool: {}",
          d.name(), stripe, block[1] - block[0], dc, e.getMessage());
      throw e;
    }
  }

  /**
   * Appends a block taken from the global cursor to this datacenter's pool. An addition: it must never
   * be repeated after an outcome that may have applied, so the pool row records the blocks appended to
   * it ({@link Appended}) and every attempt first looks there. A block the record can no longer vouch for
   * is never appended: it is counted lost instead.
   */
  private void appendToPool(SequenceDefinition d, int stripe, long from, long to, long deadline, long epoch) {
    Attempts<Void> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      PoolRow pool = readPool(d, stripe, dc, null, deadline);
      Appended appended = pool == null ? Appended.EMPTY : pool.appended;
      if (appended.contains(from, to)) {
        if (attempt > 0) {
          tier.recovered.increment(); // an attempt whose outcome looked open had applied
        }
        return;
      }
      if (epoch != NOT_STRICT && (pool == null || pool.ownerEpoch != epoch)) {
        // A successor fenced the pool after this owner took the block from the global cursor: appending it
        // now would put it below the successor's blocks. It is never appended (a counted gap).
        checkFence(d, pool, epoch);
        throw new NotOwnerException(d.name(), null, Duration.ZERO, "sequence '" + d.name() + "': the pool is"
            + " not fenced at owner epoch " + epoch);
      }
      if (appended.mayContain(from, to)) {
        tier.idsLost.add(to - from);
        log.warn("counted a DC block of sequence '{}' stripe {} ({} IDs) as lost: whether it reached {}'s pool"
            + " is no longer recorded, so it is never appended again", d.name(), stripe, to - from, dc);
        return;
      }
      // An AdvanceSequence may have raised the pool's floor since the block was taken.
      long keptFrom = Math.max(from, PoolRow.minIndex(pool, d, stripe));
      if (keptFrom >= to) {
        outcomes.idsDropped.add(to - from);
        return;
      }
      List<Long> blocks = new ArrayList<>(pool == null ? List.of() : pool.blocks);
      blocks.add(keptFrom);
      blocks.add(to);
      Appended record = appended.with(from, to);
      UUID op = attempts.next(null, pool == null ? null : pool.op);
      BoundStatement cas = pool == null
          ? local(outcomes.st().insertPool.bind(d.name(), stripe, dc, blocks, null, record.pairs(), record.below(), op))
          : local(outcomes.st().appendPool.bind(blocks, record.pairs(), record.below(), op, d.name(), stripe, dc,
              pool.op));
      if (outcomes.cas(tier, CasKind.POOL_APPEND, cas, op, pool == null ? null : pool.op, attempts,
          () -> readPoolRow(d, stripe, dc, null, deadline), deadline).applied()) {
        outcomes.idsDropped.add(keptFrom - from);
        return;
      }
      // Not applied, or open: the next read of the record decides.
      backoff(attempt, deadline, "appending to " + dc + "'s pool of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Floors

  /** Cuts a datacenter's pool at an advance's floor, through a coordinator of that datacenter (null: this one). */
  void trimPool(SequenceDefinition d, int stripe, String datacenter, Node coordinator, long floor, long deadline) {
    // A removal that is idempotent in effect (cut at the floor): retried until the row shows it.
    Attempts<Void> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      PoolRow pool = readPool(d, stripe, datacenter, coordinator, deadline);
      if (pool == null) {
        // Never refilled. A refill may still have taken its block from the global cursor before the advance
        // moved it: the row is created with the floor, so that its append reads the floor and cuts at it.
        UUID op = attempts.next(null, null);
        BoundStatement insert = local(outcomes.st().insertPool.bind(d.name(), stripe, datacenter, List.of(), floor,
            List.of(), Long.MIN_VALUE, op));
        if (coordinator != null) {
          insert = insert.setNode(coordinator);
        }
        if (outcomes.cas(tier, CasKind.POOL_TRIM, insert, op, null, attempts,
            () -> readPoolRow(d, stripe, datacenter, coordinator, deadline), deadline).applied()) {
          return;
        }
        backoff(attempt, deadline, "creating " + datacenter + "'s pool of sequence '" + d.name() + "' stripe "
            + stripe + " at its floor");
        continue;
      }
      long newFloor = pool.floor == null ? floor : Math.max(pool.floor, floor);
      List<Long> kept = trim(pool.blocks, d.firstIndexAbove(stripe, newFloor));
      if (pool.floor != null && pool.floor >= floor && kept.equals(pool.blocks)) {
        return;
      }
      UUID op = attempts.next(null, pool.op);
      BoundStatement cas = local(outcomes.st().updatePool.bind(kept, newFloor, pool.taken, op, d.name(), stripe,
          datacenter, pool.op));
      if (coordinator != null) {
        cas = cas.setNode(coordinator);
      }
      if (outcomes.cas(tier, CasKind.POOL_TRIM, cas, op, pool.op, attempts,
          () -> readPoolRow(d, stripe, datacenter, coordinator, deadline), deadline).applied()) {
        outcomes.idsDropped.add(size(pool.blocks) - size(kept));
        return;
      }
      backoff(attempt, deadline, "trimming " + datacenter + "'s pool of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  /** The highest floor of this datacenter's pools of the sequence (plain reads); Long.MIN_VALUE if none. */
  long floor(SequenceDefinition d) {
    long floor = Long.MIN_VALUE;
    for (int stripe = 0; stripe < d.stripes(); stripe++) {
      Row row = outcomes.read(outcomes.st().selectPool.bind(d.name(), stripe, dc), ConsistencyLevel.LOCAL_QUORUM,
          dc + "'s pool of sequence '" + d.name() + "'");
      if (row != null && !row.isNull("floor")) {
        floor = Math.max(floor, row.getLong("floor"));
      }
    }
    return floor;
  }

  // ---------------------------------------------------------------------------------------------
  // Rows and rates

  private Row readPoolRow(SequenceDefinition d, int stripe, String datacenter, Node coordinator, long deadline) {
    return outcomes.serialRead(outcomes.st().selectPool.bind(d.name(), stripe, datacenter),
        ConsistencyLevel.LOCAL_SERIAL, coordinator, datacenter + "'s pool of sequence '" + d.name() + "' stripe "
            + stripe, deadline);
  }

  private PoolRow readPool(SequenceDefinition d, int stripe, String datacenter, Node coordinator, long deadline) {
    Row r = readPoolRow(d, stripe, datacenter, coordinator, deadline);
    if (r == null) {
      return null;
    }
    Appended appended = r.isNull("appended") ? Appended.EMPTY : new Appended(r.getList("appended", Long.class),
        r.isNull("appended_below") ? Long.MIN_VALUE : r.getLong("appended_below"));
    return new PoolRow(List.copyOf(r.getList("blocks", Long.class)),
        r.isNull("floor") ? null : r.getLong("floor"), r.isNull("taken") ? 0 : r.getLong("taken"),
        appended, r.isNull("owner_epoch") ? NOT_STRICT : r.getLong("owner_epoch"), r.getUuid("op"));
  }

  private record PoolRow(List<Long> blocks, Long floor, long taken, Appended appended, long ownerEpoch, UUID op) {
    /** The first index of the stripe above the pool's floor: what the pool may still hold. */
    static long minIndex(PoolRow pool, SequenceDefinition d, int stripe) {
      return pool == null || pool.floor == null ? 0 : d.firstIndexAbove(stripe, pool.floor);
    }
  }

  private DcRate rate(SequenceDefinition d, int stripe) {
    return rates.computeIfAbsent(stripeKey(d, stripe),
        k -> new DcRate(settings.isolationRunway(), settings.poolRefillStep()));
  }

  /** This datacenter's consumption rate of a sequence in IDs per second (see the store's datacenterRate). */
  double datacenterRate(SequenceDefinition d) {
    double sum = 0;
    boolean measured = false;
    for (int stripe = 0; stripe < d.stripes(); stripe++) {
      DcRate r = rates.get(stripeKey(d, stripe));
      double perSecond = r == null ? -1 : r.idsPerSecond();
      if (perSecond >= 0) {
        sum += perSecond;
        measured = true;
      }
    }
    return measured ? sum : -1;
  }
}
