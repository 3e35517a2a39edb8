package dev.idgen.core.store.cassandra;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.store.cassandra.CassandraRangeStore.CasExecutor;
import dev.idgen.core.store.cassandra.CassandraRangeStore.CasKind;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the Cassandra store talks to Cassandra: the reads (plain and serial), the compare-and-set attempts and
 * the resolution of their unknown outcomes into three cases, the back-off between lost races, and the counters
 * of all of it. Every room of the store ({@code PoolTier}, {@code GlobalTier}, {@code Definitions},
 * {@code OwnerTable}, {@code FloorLogTable}) sends its statements through here. Why unknown outcomes are read
 * back rather than guessed, and what each case means for a removal and for an addition: docs/design.md,
 * "Unknown outcomes are resolved".
 *
 * <p>Threads: thread-safe and shared by every operation of the store. Its own state is the counters
 * ({@link LongAdder}s, {@link HighWater}'s concurrent map) and the connection, read through the store's
 * volatile field at each call. An operation's {@link Attempts} are confined to the thread that runs that
 * operation; nothing else here holds per-operation state. The test seams ({@code casExecutor},
 * {@code beforeGlobalCas}, {@code beforeSerialRead}) stay volatile fields of the store and are read at each attempt.
 *
 * <p>Logs under the store's name, as before the store was split, so that log filters keep working.
 */
@ThreadSafe
final class CasOutcomes {
  private static final Logger log = LoggerFactory.getLogger(CassandraRangeStore.class);

  private static final long BASE_BACKOFF_MILLIS = 2;
  private static final long MAX_BACKOFF_MILLIS = 250;

  private final CassandraSettings settings;
  /** The store's session and statements; throws {@link StoreUnavailableException} while not connected. */
  private final Supplier<Statements> statements;
  private final Supplier<CasExecutor> casExecutor;
  private final Supplier<Runnable> beforeGlobalCas;
  private final Supplier<Consumer<ConsistencyLevel>> beforeSerialRead;
  final Tier globalTier = new Tier();
  final Tier poolTier = new Tier();
  /** IDs dropped by advances (below a floor): deliberate, not lost. */
  final LongAdder idsDropped = new LongAdder();
  final LongAdder plainReads = new LongAdder();
  final LongAdder serialReads = new LongAdder();

  CasOutcomes(CassandraSettings settings, Supplier<Statements> statements, Supplier<CasExecutor> casExecutor,
      Supplier<Runnable> beforeGlobalCas, Supplier<Consumer<ConsistencyLevel>> beforeSerialRead) {
    this.settings = settings;
    this.statements = statements;
    this.casExecutor = casExecutor;
    this.beforeGlobalCas = beforeGlobalCas;
    this.beforeSerialRead = beforeSerialRead;
  }

  /** The session and statements, or {@link StoreUnavailableException} while the store is not connected. */
  Statements st() {
    return statements.get();
  }

  /**
   * Runs one attempt of an operation: a CAS whose write carries {@code op} and is conditioned on the row
   * carrying {@code conditionedOn} (null: on the row not existing). A definite answer from Cassandra is
   * final. An unknown outcome (CAS write timeout, CAS write unknown, client timeout, any failure after
   * sending) is resolved by {@code readBack}, a read at the same serial consistency that also completes
   * any Paxos round in progress, into one of three cases:
   * <ul>
   *   <li>applied: the row carries one of this operation's op ids ({@code attempts}, every attempt's —
   *       an earlier attempt may have applied late);
   *   <li>not applied: the row still carries {@code conditionedOn};
   *   <li>ambiguous: someone else wrote the row since; this attempt may or may not have applied, and it
   *       can never apply later (its condition names an op id that never comes back).
   * </ul>
   * The caller decides what an ambiguous attempt means: a removal may be tried again (a gap at worst,
   * counted), an addition never (see {@code PoolTier.appendToPool}). If the row cannot be read back before
   * {@code deadline}, the attempt stays open in {@code attempts} and this throws
   * {@link StoreUnavailableException}.
   */
  CasResult cas(Tier tier, CasKind kind, BoundStatement statement, UUID op, UUID conditionedOn,
      Attempts<?> attempts, Supplier<Row> readBack, long deadline) {
    if (tier == globalTier) {
      beforeGlobalCas.get().run();
    }
    tier.attempts.increment();
    DriverException failure;
    try {
      ResultSet rs = casExecutor.get().execute(kind, statement, st().session::execute);
      if (rs.wasApplied()) {
        tier.applied.increment();
        return new CasResult(Outcome.APPLIED, op, false);
      }
      tier.conflicts.increment();
      return CasResult.NOT_APPLIED;
    } catch (DriverException e) {
      failure = e;
    }
    tier.unknown.increment();
    attempts.open(op);
    Row row;
    for (int attempt = 0; ; attempt++) {
      try {
        row = readBack.get();
        break;
      } catch (StoreUnavailableException readFailed) {
        try {
          backoff(attempt, deadline, "resolving an unknown compare-and-set outcome");
        } catch (StoreUnavailableException gaveUp) {
          tier.unresolved.increment();
          throw new StoreUnavailableException("a compare-and-set had an unknown outcome (" + describe(failure)
              + ") and reading it back kept failing; nothing was handed out: " + readFailed.getMessage(), failure);
        }
      }
    }
    casExecutor.get().afterReadBack(kind);
    UUID now = row == null ? null : row.getUuid("op");
    Outcome outcome;
    if (attempts.mine(now)) {
      outcome = Outcome.APPLIED;
      attempts.settle(now);
      tier.applied.increment();
      tier.resolvedApplied.increment();
    } else if (Objects.equals(now, conditionedOn)) {
      outcome = Outcome.NOT_APPLIED;
      attempts.settle(op);
      tier.resolvedNotApplied.increment();
    } else {
      outcome = Outcome.AMBIGUOUS;
      tier.resolvedAmbiguous.increment();
    }
    log.debug("unknown outcome of a {} compare-and-set ({}) resolved: {}", kind, describe(failure), outcome);
    return outcome == Outcome.APPLIED ? new CasResult(outcome, now) : new CasResult(outcome, null);
  }

  /**
   * Counts, as a gap, every attempt of a removal whose outcome stayed open: it may have taken its IDs
   * out of the row (so nobody will hand them out) without this process ever learning it.
   */
  void countLost(Tier tier, Attempts<long[]> attempts, long[] used, String what) {
    for (long[] r : attempts.open()) {
      if (r != used) {
        tier.idsLost.add(r[1] - r[0]);
        log.warn("counted {} IDs of {} as lost: the compare-and-set that took them had an unknown outcome"
            + " that could not be settled (an upper bound: another holder may have taken them)", r[1] - r[0], what);
      }
    }
  }

  /** The three ways an attempt can end. */
  enum Outcome { APPLIED, NOT_APPLIED, AMBIGUOUS }

  /** How an attempt ended, and which op id applied (possibly an earlier attempt's). */
  record CasResult(Outcome outcome, UUID op, boolean resolved) {
    /** Cassandra said so: the condition did not hold, nothing was written. */
    static final CasResult NOT_APPLIED = new CasResult(Outcome.NOT_APPLIED, null, false);

    CasResult(Outcome outcome, UUID op) {
      this(outcome, op, true);
    }

    boolean applied() {
      return outcome == Outcome.APPLIED;
    }
  }

  /**
   * The attempts of one operation, each with the op id it wrote, the op id it was conditioned on and
   * what it would do. An attempt is open from an unknown outcome until something settles it. Confined
   * to the thread that runs the operation.
   */
  static final class Attempts<T> {
    private final Map<UUID, Attempt<T>> all = new LinkedHashMap<>();
    private final Set<UUID> open = new LinkedHashSet<>();

    private record Attempt<T>(T effect, UUID conditionedOn) {}

    /** A new attempt: its op id. */
    UUID next(T effect, UUID conditionedOn) {
      return next(UUID.randomUUID(), effect, conditionedOn);
    }

    /** A new attempt whose op id the caller chose. */
    UUID next(UUID op, T effect, UUID conditionedOn) {
      all.put(op, new Attempt<>(effect, conditionedOn));
      return op;
    }

    boolean mine(UUID op) {
      return op != null && all.containsKey(op);
    }

    T effect(UUID op) {
      return all.get(op).effect();
    }

    void open(UUID op) {
      open.add(op);
    }

    void settle(UUID op) {
      open.remove(op);
    }

    /**
     * A fresh read of the row: an open attempt whose IDs it still shows, when the row no longer carries
     * the op id that attempt was conditioned on, never applied and never will.
     */
    void seen(UUID rowOp, Predicate<T> stillThere) {
      open.removeIf(op -> {
        Attempt<T> a = all.get(op);
        return !Objects.equals(rowOp, a.conditionedOn()) && stillThere.test(a.effect());
      });
    }

    /** The effects of the attempts still open. */
    List<T> open() {
      List<T> out = new ArrayList<>();
      for (UUID op : open) {
        out.add(all.get(op).effect());
      }
      return out;
    }
  }

  Row read(BoundStatement s, ConsistencyLevel cl, String what) {
    plainReads.increment();
    try {
      return st().session.execute(s.setConsistencyLevel(cl)).one();
    } catch (DriverException e) {
      throw unavailable("reading the " + what + " at " + cl, e);
    }
  }

  /**
   * A read at SERIAL or LOCAL_SERIAL: sees (and completes) every Paxos round on the partition. Under
   * contention or a slow replica it may time out; then it is retried with back-off until
   * {@code deadline} ({@code 0}: one attempt only).
   */
  Row serialRead(BoundStatement s, ConsistencyLevel serial, Node coordinator, String what, long deadline) {
    BoundStatement st = s.setConsistencyLevel(serial);
    if (coordinator != null) {
      st = st.setNode(coordinator);
    }
    for (int attempt = 0; ; attempt++) {
      serialReads.increment();
      beforeSerialRead.get().accept(serial);
      try {
        return st().session.execute(st).one();
      } catch (DriverException e) {
        String hint = serial == ConsistencyLevel.SERIAL
            ? " (SERIAL needs a quorum of all datacenters: are the others reachable?)" : "";
        StoreUnavailableException failure = unavailable("reading the " + what + " at " + serial + hint, e);
        if (deadline == 0) {
          throw failure;
        }
        try {
          backoff(attempt, deadline, "reading the " + what);
        } catch (StoreUnavailableException gaveUp) {
          throw failure;
        }
      }
    }
  }

  static BoundStatement global(BoundStatement s) {
    return s.setSerialConsistencyLevel(ConsistencyLevel.SERIAL).setConsistencyLevel(ConsistencyLevel.QUORUM)
        .setIdempotent(false);
  }

  static BoundStatement local(BoundStatement s) {
    // LOCAL_SERIAL must commit at LOCAL_QUORUM: with QUORUM it "times out" whenever another DC is down.
    return s.setSerialConsistencyLevel(ConsistencyLevel.LOCAL_SERIAL)
        .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM).setIdempotent(false);
  }

  long deadline() {
    return System.nanoTime() + settings.casDeadline().toNanos();
  }

  /** Random, growing delays: servers that lost together must not retry in lock-step. */
  static void backoff(int attempt, long deadline, String what) {
    long cap = Math.min(MAX_BACKOFF_MILLIS, BASE_BACKOFF_MILLIS << Math.min(attempt, 16));
    long delayMillis = ThreadLocalRandom.current().nextLong(cap / 2, cap + 1);
    if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis) > deadline) {
      throw new StoreUnavailableException(what + ": still losing compare-and-set races after "
          + (attempt + 1) + " attempts; giving up at the deadline");
    }
    try {
      Thread.sleep(delayMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException(what + ": interrupted", e);
    }
  }

  static StoreUnavailableException unavailable(String what, DriverException e) {
    return new StoreUnavailableException(what + " failed: " + describe(e), e);
  }

  /** The real cause: {@link AllNodesFailedException} wraps one error per node tried. */
  static String describe(Throwable e) {
    if (e instanceof AllNodesFailedException all && !all.getAllErrors().isEmpty()) {
      StringBuilder b = new StringBuilder();
      all.getAllErrors().forEach((node, errors) -> {
        for (Throwable t : errors) {
          if (b.length() > 0) {
            b.append("; ");
          }
          b.append(node.getEndPoint()).append(": ").append(describe(t));
        }
      });
      return b.toString();
    }
    return e.getClass().getSimpleName() + ": " + e.getMessage();
  }

  /** The key of a (sequence, stripe) in this process's maps of rates, refills in flight and high waters. */
  static String stripeKey(SequenceDefinition d, int stripe) {
    return d.name() + '\u0000' + stripe;
  }

  /**
   * The most each row was seen holding by this process: a pool's {@code taken} (IDs taken from it, ever) and
   * the global cursor's {@code reserved} only grow, so a read that shows less means the store forgot writes it
   * acknowledged. That happens when a replica crashes in {@code commitlog_sync: periodic} (it acknowledges
   * before its commit log is synced, and replays only to the last sync marker) and no other replica holds the
   * write: a datacenter of one replica, or a quorum that crashed together; or after a restore from an older
   * backup. A row that forgot a reservation would hand the same IDs out again, so it is moved past what this
   * process saw before anything more is taken from it. A process that never saw the lost writes cannot tell:
   * this is a second line, the first is a Cassandra that keeps what it acknowledged (docs/operations.md).
   * Thread-safe; values only grow.
   */
  static final class HighWater {
    private final ConcurrentMap<String, Long> seen = new ConcurrentHashMap<>();

    void note(String key, long value) {
      seen.merge(key, value, Math::max);
    }

    /** What this process saw {@code key} hold, if more than {@code now}; else {@link Long#MIN_VALUE}. */
    long above(String key, long now) {
      Long s = seen.get(key);
      return s != null && s > now ? s : Long.MIN_VALUE;
    }
  }

  /** Counters of one tier. */
  static final class Tier {
    final LongAdder attempts = new LongAdder();
    final LongAdder applied = new LongAdder();
    final LongAdder conflicts = new LongAdder();
    final LongAdder unknown = new LongAdder();
    final LongAdder resolvedApplied = new LongAdder();
    final LongAdder resolvedNotApplied = new LongAdder();
    final LongAdder resolvedAmbiguous = new LongAdder();
    final LongAdder unresolved = new LongAdder();
    /** Open attempts later found applied (their IDs used after all). */
    final LongAdder recovered = new LongAdder();
    final LongAdder idsLost = new LongAdder();
    /** Rows found holding less than this process had seen them hold (see {@link HighWater}). */
    final LongAdder regressions = new LongAdder();
    /** The most each row of the tier was seen holding, by (sequence, stripe). */
    final HighWater highWater = new HighWater();

    CasStats snapshot() {
      return new CasStats(attempts.sum(), applied.sum(), conflicts.sum(), unknown.sum(),
          resolvedApplied.sum(), resolvedNotApplied.sum(), resolvedAmbiguous.sum(), unresolved.sum(),
          recovered.sum(), idsLost.sum(), regressions.sum());
    }
  }
}
