package dev.idgen.core;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.internal.Daemons;
import dev.idgen.core.internal.allocation.ClientLeases;
import dev.idgen.core.internal.allocation.PoolTotals;
import dev.idgen.core.internal.allocation.Runtimes;
import dev.idgen.core.internal.allocation.SequenceRuntime;
import dev.idgen.core.internal.allocation.StripePool;
import dev.idgen.core.internal.floors.Advances;
import dev.idgen.core.internal.floors.FloorPoller;
import dev.idgen.core.internal.floors.FloorSync;
import dev.idgen.core.internal.lifecycle.DefinitionChanges;
import dev.idgen.core.internal.lifecycle.RangeReservations;
import dev.idgen.core.internal.lifecycle.SequenceReads;
import dev.idgen.core.internal.strict.StrictOwner;
import dev.idgen.core.internal.strict.StrictOwners;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server tier of idgen: hands out IDs from blocks this process reserved in a {@link RangeStore},
 * with no I/O on the request path in steady state.
 *
 * <p>Each stripe of each sequence has its own pool ({@link StripePool}) of reserved ranges, refilled
 * in the background, with at most one refill in flight per pool. Reserves are sized by time
 * ({@link RunwayPolicy}): a pool refills as soon as it holds less than its <em>outage runway</em> of IDs
 * at its measured rate, so a store that stops answering leaves that runway in memory; a pool never holds
 * more than the sequence's {@code node_block_size}, so a crash abandons at most that per stripe.
 *
 * <p>Threads: any number of threads may call any method. Calls on different pools never contend; calls
 * on one pool hold its lock only to move ranges in memory — store I/O always runs outside the lock.
 * Where other processes share the store, a background thread keeps it in step with the floors set by
 * {@code AdvanceSequence} anywhere and announces it to the store ({@link FloorSync}): an advance returns
 * only when every live server has dropped its cached IDs at or below the floor, and a server that
 * cannot reach the store stops serving before its announcement expires.
 * Sequence definitions are immutable and kept forever once read ({@link KnownSequence}, with the highest
 * floor applied), also after an idle unload: responses are stamped, and ranges checked before they are sent,
 * from them. Each runtime notes, without a write on the hot path once set, whether a call took IDs since the
 * mark was last looked at ({@code SequenceRuntime#touch}; looked at every second and by each advance), which
 * tells an advance how long client leases may still hold IDs below its floor ({@code Runtimes#leasesUntil},
 * {@link ClientLeases}); a runtime being unloaded stays reachable for floors ({@code unloading}) until its
 * pools are closed.
 *
 * <p>Where things live: this class is the facade that the server calls, and serves {@code Allocate} calls
 * itself ({@link #route}, {@link #allocate}); it is configured by {@link AllocatorBuilder}. The rest is done
 * by the rooms of this package, each with its own concurrency story: {@link Runtimes} (the sequences loaded
 * here: load, idle unload, close and give back) with one {@link SequenceRuntime} per sequence and one
 * {@link StripePool} per stripe; {@link FloorSync} and {@link FloorPoller} (floors set elsewhere,
 * announcements, readiness); {@link Advances} and {@link ClientLeases} (an advance, and what it waits for);
 * {@link DefinitionChanges} (create, update, delete, undelete, purge) and {@link SequenceReads} (the admin
 * API's reads); {@link RangeReservations}; {@link StrictOwners} with one {@link StrictOwner} per strict
 * sequence, and {@link Route} (what to do with a call: serve, forward or wait).
 */
@ThreadSafe
public final class Allocator implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Allocator.class);

  public static final long DEFAULT_MAX_IDS_PER_CALL = 1_000_000;
  /** How long a server's reserve lasts at its rate when the store stops answering: 5 minutes. */
  public static final Duration DEFAULT_OUTAGE_RUNWAY = Duration.ofMinutes(5);
  public static final long DEFAULT_MIN_NODE_BLOCK = 100;
  /** A refill tops the reserve up to its low-water mark plus a quarter of it. */
  public static final double DEFAULT_REFILL_STEP = 0.25;
  /**
   * How long a server's announcement lasts without renewal; it stops serving after 3/4 of it. Long,
   * because it is also how long a server cut off from the store keeps serving its reserve.
   */
  public static final Duration DEFAULT_SERVER_LEASE = Duration.ofMinutes(10);
  public static final Duration DEFAULT_ADVANCE_CONFIRM_TIMEOUT = Duration.ofSeconds(10);
  /** How often one call follows its sequence to a new runtime after unloads (each needs an idle sweep). */
  private static final int MAX_UNLOAD_RETRIES = 100;
  /** How long an owner lease of a strict sequence lasts without renewal. */
  public static final Duration DEFAULT_OWNER_LEASE = Duration.ofSeconds(10);
  /** A sequence not allocated from for this long is unloaded, its reserve given back to the store. */
  public static final Duration DEFAULT_UNLOAD_IDLE_AFTER = Duration.ofHours(1);
  /**
   * How long {@link #close} may spend giving reserves back: a stop must end within the orchestrator's grace
   * period, and what is left after it is a counted gap.
   */
  public static final Duration DEFAULT_GIVE_BACK_DEADLINE = Duration.ofSeconds(3);
  /** How long a deleted sequence stays restorable before a purge may remove it: 30 days. */
  public static final Duration DEFAULT_UNDELETE_WINDOW = Duration.ofDays(30);

  private final RangeStore store;
  private final long maxIdsPerCall;
  private final Executor executor;
  private final ExecutorService ownedExecutor; // null when the executor was given to us
  private final ExecutorService directExecutor;
  private final StripePool.Settings poolSettings;
  /** The sequences loaded here, and their lifecycle (load, unload, close and give back). */
  private final Runtimes runtimes;
  /** How long clients may use what they are handed, and so how long an advance waits for them. */
  private final ClientLeases clientLeases;
  /** How an advance waits for client leases; a seam for tests with a fake ticker. */
  volatile Advances.Sleeper sleeper = TimeUnit.NANOSECONDS::sleep;
  /** Runs {@link FloorSync#cycle} when other processes share the store, and says when this allocator is ready. */
  private final FloorPoller poller;
  private final FloorSync sync;
  private volatile boolean closed;
  /** How long {@link #close} may spend giving reserves back (ticker nanos). */
  private final long giveBackDeadlineNanos;
  /** Who this process is in owner rows of strict sequences, and how long its owner leases last. */
  private final StrictOwner.Identity identity;
  /** The owner leases of the strict sequences loaded here: their rounds, forward targets, refusals. */
  private final StrictOwners strictOwners;
  /** The admin API's reads of sequences, and the sequence as the store has it now. */
  private final SequenceReads reads;
  /** Creating sequences and changing their definitions (update, delete, undelete, purge). */
  private final DefinitionChanges changes;
  /** AdvanceSequence: the store, this server, the confirmations, then the wait for client leases. */
  private final Advances advances;
  /** Ranges reserved for one caller, and their record. */
  private final RangeReservations rangeReservations;

  Allocator(AllocatorBuilder b) {
    this.store = b.store;
    this.maxIdsPerCall = b.maxIdsPerCall;
    if (b.executor != null) {
      this.executor = b.executor;
      this.ownedExecutor = null;
    } else {
      this.ownedExecutor = Executors.newCachedThreadPool(Daemons.threads("idgen-refill-"));
      this.executor = ownedExecutor;
    }
    this.directExecutor = Executors.newCachedThreadPool(Daemons.threads("idgen-direct-reserve-"));
    this.poolSettings = new StripePool.Settings(
        b.ticker, RunwayPolicy.of(b.outageRunway, b.refillStep, b.minNodeBlock), executor, directExecutor);
    this.clientLeases = new ClientLeases(b.clientLeaseLifetime, b.serverLease);
    String serverName = b.serverName;
    this.identity = new StrictOwner.Identity(b.serverName, UUID.randomUUID(),
        b.ownerTarget == null ? () -> serverName : b.ownerTarget, b.ownerLease,
        b.ownerLeaseMargin != null ? b.ownerLeaseMargin : StrictOwner.Identity.defaultMargin(b.ownerLease), b.wall);
    long unloadIdleAfterNanos = b.unloadIdleAfter.toNanos();
    this.giveBackDeadlineNanos = b.giveBackDeadline.compareTo(Duration.ofDays(1)) > 0 ? TimeUnit.DAYS.toNanos(1)
        : b.giveBackDeadline.toNanos();
    StrictOwner.Identity self = identity;
    this.runtimes = new Runtimes(store, poolSettings,
        (def, st, ticker, settings) -> new StrictOwner(def, st, ticker, self, settings), b.ticker,
        unloadIdleAfterNanos, clientLeases);
    this.strictOwners = new StrictOwners(runtimes, b.ownerLease.toNanos());
    this.sync = new FloorSync(store, new FloorSync.Floors() {
      @Override
      public long raise(String sequence, long floor) {
        return runtimes.applyFloor(sequence, floor);
      }

      @Override
      public long reloadAll() {
        return runtimes.reloadFloors();
      }

      @Override
      public void redefine(String sequence, long version) {
        runtimes.redefine(sequence, version);
      }

      @Override
      public void redefineAll() {
        runtimes.redefineAll();
      }
    }, b.ticker, b.wall, b.serverName, b.serverLease, runtimes.leasesUntil(null));
    if (sync.enabled() && b.outageRunway.compareTo(b.serverLease.multipliedBy(3).dividedBy(4)) > 0) {
      log.warn("the outage runway ({}) is longer than 3/4 of the server lease ({}): a server cut off from the"
          + " store stops serving after {}, whatever it still holds", b.outageRunway, b.serverLease,
          b.serverLease.multipliedBy(3).dividedBy(4));
    }
    this.poller = new FloorPoller(store, sync, clientLeases.enabled() ? runtimes::lookAtMarks : null);
    this.reads = new SequenceReads(store, runtimes, this::checkOpen);
    long confirmTimeoutNanos = b.confirmTimeout.toNanos();
    this.changes = new DefinitionChanges(store, reads, runtimes, sync, confirmTimeoutNanos, b.wall, b.undeleteWindow);
    this.advances = new Advances(store, runtimes, sync, clientLeases, b.ticker, confirmTimeoutNanos);
    this.rangeReservations = new RangeReservations(store, reads);
  }

  /**
   * Complete once this allocator can hand out IDs: its store answers ({@link RangeStore#ready()}) and, where
   * servers confirm floors to each other, its first floor sync succeeded. Failed if the store gave up
   * connecting. Servers report NOT_SERVING until then.
   */
  public CompletionStage<Void> ready() {
    return poller.ready();
  }

  /** Sets the hook that runs at the start of every floor-sync cycle: for tests of a stalled poller. */
  void beforeFloorSync(Runnable hook) {
    sync.beforeCycle = hook;
  }

  /** A builder over {@code store}, which the allocator does not close. */
  public static AllocatorBuilder builder(RangeStore store) {
    return new AllocatorBuilder(store);
  }

  /**
   * Creates a sequence (durably, in the store).
   *
   * @throws SequenceAlreadyExistsException if the name is taken
   */
  public SequenceDefinition create(SequenceDefinition definition) {
    Objects.requireNonNull(definition, "definition");
    checkOpen();
    return changes.create(definition);
  }

  /**
   * Changes a sequence's definition (AIP-134): {@code update}'s values ({@link SequenceUpdate#applyTo}: max
   * only upwards, the caps within range, the ID space unchanged). Returns once every live server has applied
   * it, as an advance does: the change rides the floor log ({@link FloorLog#DEFINITION_CHANGED}); each server
   * reads the definition again and gives back what it held under the old one before it confirms. An update
   * that changes nothing (the same call again after {@link ChangeNotConfirmedException}) changes nothing in
   * the store but is logged and confirmed again, which completes the earlier one.
   *
   * @param etag null, or the etag the caller read ({@link StoredSequence#etag}): the change applies only if
   *     it is still the current one
   * @throws SequenceChangedException if {@code etag} is not the current one
   * @throws SequenceDeletedException if the sequence is deleted
   * @throws ChangeRefusedException if the change cannot be made (a lower max, an immutable field)
   * @throws ChangeNotConfirmedException if some live server did not apply it in time (in force in the store)
   */
  public StoredSequence update(String name, @Nullable String etag, SequenceUpdate update) {
    Objects.requireNonNull(update, "update");
    return changes.update(name, etag, update);
  }

  /**
   * Deletes a sequence softly (AIP-164): it stays in the store, marked deleted, restorable by {@link #undelete}
   * until its expire time (the delete time plus the undelete window), and nothing is handed out of it; every
   * live server gives back and forgets its reserve before this returns (as {@link #update}). Deleting a
   * deleted sequence completes the earlier delete (logged and confirmed again), then says it was deleted.
   * With {@code purge}, a deleted sequence whose expire time has passed becomes a tombstone: no longer
   * readable nor restorable, its name still taken for good.
   *
   * @throws SequenceDeletedException if it is deleted already (after completing that delete), or purged
   * @throws ChangeRefusedException a purge of a sequence that is not deleted, or before its expire time
   */
  public StoredSequence delete(String name, @Nullable String etag, boolean purge) {
    return changes.delete(name, etag, purge);
  }

  /**
   * Restores a deleted sequence (AIP-164), until it is purged: it serves again, above everything it handed
   * out (its stores were never reset). Restoring a live sequence completes an earlier restore (logged and
   * confirmed again), then says it is not deleted.
   *
   * @throws SequenceDeletedException if it was purged
   * @throws ChangeRefusedException if it is not deleted
   */
  public StoredSequence undelete(String name, @Nullable String etag) {
    return changes.undelete(name, etag);
  }

  /**
   * The definition of a sequence; {@link SequenceNotFoundException} if it does not exist. Does not load
   * the sequence (no reserve is taken for it).
   */
  public SequenceDefinition definition(String name) {
    return reads.definition(name);
  }

  /** Up to {@code limit} definitions in name order after {@code afterName} ("" for the first page). */
  public List<SequenceDefinition> list(String afterName, int limit) {
    return reads.list(afterName, limit);
  }

  /**
   * Up to {@code limit} sequences in name order after {@code afterName}, live ones only unless
   * {@code showDeleted} (then deleted ones too, never purged ones).
   */
  public List<StoredSequence> listStored(String afterName, int limit, boolean showDeleted) {
    return reads.listStored(afterName, limit, showDeleted);
  }

  /** {@link #list}, with each sequence's creation time where the store recorded it (deleted ones too). */
  public List<StoredSequence> listStored(String afterName, int limit) {
    return reads.listStored(afterName, limit);
  }

  /**
   * Allocates exactly {@code count} new IDs of a sequence, as one or more ranges (of one stripe, unless
   * that stripe runs out).
   *
   * @param timeout how long to wait, at most, for a reserve when none is left
   * @throws InvalidRequestException bad name, count below 1 or above the per-call limit
   * @throws SequenceNotFoundException unknown sequence
   * @throws SequenceExhaustedException the sequence reached its max; carries the ranges delivered
   * @throws StoreUnavailableException no reserve left and the store unreachable, or the timeout passed;
   *     nothing was handed out
   */
  public List<IdRange> allocate(String sequence, long count, Duration timeout) {
    // Only valid names are ever cached, so a cached one skips the (regex) name check: the hot path.
    SequenceRuntime rt = runtimes.get(sequence);
    if (rt == null) {
      SequenceDefinition.checkName(sequence);
    }
    if (count < 1 || count > maxIdsPerCall) {
      throw InvalidRequestException.count(sequence, count, maxIdsPerCall);
    }
    checkOpen();
    checkServing();
    if (rt == null) {
      rt = runtimes.load(sequence);
    }
    if (rt.owner != null) {
      rt.owner.ensureServing(); // or NotOwnerException: forward to the owner, or retry later
    }
    long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
    List<IdRange> out = new ArrayList<>(2);
    long need = count;
    for (int attempt = 0; ; attempt++) {
      rt.touch();
      int stripes = rt.pools.length;
      // Rotate the starting stripe so that a striped sequence spreads its load over all its partitions.
      int first = stripes == 1 ? 0 : Math.floorMod(rt.nextStripe.getAndIncrement(), stripes);
      try {
        for (int i = 0; i < stripes && need > 0; i++) {
          need -= rt.pools[(first + i) % stripes].take(need, out, deadline);
        }
        break;
      } catch (StoreUnavailableException e) {
        // Bounded by the call's deadline, not only by a count: a caller starved of CPU while sweeps run can
        // find its runtime unloaded more than MAX_UNLOAD_RETRIES times (seen on a 2-core machine at load 30,
        // IdleUnloadTest's sweeps spinning), and it must then go on, not fail as if the server were stopping.
        if (rt.unloaded && !closed && (attempt < MAX_UNLOAD_RETRIES || System.nanoTime() - deadline < 0)) {
          // Unloaded while this call was in it (an idle sweep, a change of its definition): what the call took
          // is its own (out of the pools before they closed) and counts towards its count, the part a pool took
          // before it threw too; it goes on for the rest with the sequence loaded anew.
          need = count - IdRange.total(out);
          rt = reload(rt, sequence, out);
          continue;
        }
        // Nothing is handed out by a failed call: what it took goes back to the pools.
        runtimes.giveBack(rt, out);
        throw e;
      }
    }
    if (!sync.serving()) {
      runtimes.giveBack(rt, out); // the fence closed while the call waited
      checkServing();
    }
    if (need > 0) {
      throw new SequenceExhaustedException(sequence, rt.definition.max(), count, out);
    }
    return out;
  }

  /**
   * The runtime an {@link #allocate} call goes on with after {@code unloaded} was unloaded under it: the sequence
   * loaded anew and, if it is strict, its owner lease claimed again for this call, as a call's first step does
   * (a new runtime holds none). If the call cannot go on (the load fails; another server owns the sequence
   * now: {@link NotOwnerException}, which the server forwards there), what it took ({@code out}) is a counted
   * gap, and it fails with that exception.
   */
  private SequenceRuntime reload(SequenceRuntime unloaded, String sequence, List<IdRange> out) {
    try {
      SequenceRuntime rt = runtimes.load(sequence);
      if (rt.owner != null) {
        rt.owner.ensureServing();
      }
      return rt;
    } catch (RuntimeException e) {
      runtimes.giveBack(unloaded, out);
      out.clear();
      throw e;
    }
  }

  /**
   * The non-blocking form of {@link #allocate}: the same IDs, from one stripe, if this allocator holds
   * them in memory now; {@code null} if serving the call would mean waiting, store I/O (a sequence not
   * loaded yet, a request larger than the reserve), or an error — call {@link #allocate} for those, which
   * also says what is wrong. It never blocks beyond a pool's lock, which is held only for in-memory work,
   * so a server may call it on a network thread.
   */
  @Nullable
  public List<IdRange> tryAllocate(String sequence, long count) {
    SequenceRuntime rt = runtimes.get(sequence);
    if (rt == null || count < 1 || count > maxIdsPerCall || closed || !sync.serving()
        || (rt.owner != null && !rt.owner.serving())) {
      return null;
    }
    rt.touch();
    int stripes = rt.pools.length;
    int first = stripes == 1 ? 0 : Math.floorMod(rt.nextStripe.getAndIncrement(), stripes);
    List<IdRange> out = new ArrayList<>(1);
    for (int i = 0; i < stripes; i++) {
      if (rt.pools[(first + i) % stripes].tryTake(count, out)) {
        return out;
      }
    }
    return null;
  }

  /**
   * What to do with an {@code Allocate} call of {@code count} IDs, in one answer: its IDs if they are in
   * memory ({@link #tryAllocate}), else, when {@code mayForward} (the call was not forwarded to this server
   * already), the owner to forward a strict sequence's call to ({@link #forwardTarget}), else wait. Never
   * blocks beyond a pool's lock and does no store I/O.
   */
  public Route route(String sequence, long count, boolean mayForward) {
    List<IdRange> now = tryAllocate(sequence, count);
    if (now != null) {
      return new Route.Served(now);
    }
    // Counts out of range are left to allocate(), which says what is wrong.
    if (mayForward && count >= 1 && count <= maxIdsPerCall) {
      Optional<String> owner = forwardTarget(sequence);
      if (owner.isPresent()) {
        return new Route.Forward(owner.get());
      }
    }
    return Route.WAIT;
  }

  /** The largest count one {@link #allocate} call may ask for. */
  public long maxIdsPerCall() {
    return maxIdsPerCall;
  }

  /**
   * For a loaded {@link Ordering#STRICT} sequence that another live server owns: where to forward its
   * calls (that server's gRPC target), without store I/O, so that a server can forward from a network
   * thread. Empty when the sequence is not loaded here, not strict, owned here, or no live owner is known
   * ({@link #allocate} then claims it or says when to retry).
   */
  public Optional<String> forwardTarget(String sequence) {
    return strictOwners.forwardTarget(sequence);
  }

  /**
   * What this allocator knows of a sequence it has loaded at some point (kept after unloads): its
   * definition and the highest floor it has applied. Null for sequences never loaded here. No store I/O.
   */
  @Nullable
  public KnownSequence known(String sequence) {
    return runtimes.known(sequence);
  }

  /**
   * The owner at {@code target} refused a forwarded call of {@code sequence} (it no longer owns it): the
   * next call reads the owner row again.
   */
  public void ownerRefused(String sequence, String target) {
    strictOwners.refused(sequence, target);
  }

  /**
   * The owner row of a strict sequence as this server last read it (loaded sequences only); empty for
   * other sequences, or before a read.
   */
  public Optional<OwnerRecord> owner(String sequence) {
    return strictOwners.lastSeen(sequence);
  }

  /** How long owner leases of strict sequences last (their take-over time is about 1.25 of it). */
  public Duration ownerLease() {
    return identity.lease();
  }

  /** One owner round for every strict sequence loaded here (package-private: tests run rounds themselves). */
  void tickOwnersQuietly() {
    strictOwners.tickQuietly();
  }

  /**
   * Moves a sequence past {@code floor}: once this returns, no server that shares the store hands out an
   * ID at or below it — every live server has confirmed it, a server that has not stops serving by
   * itself — and client leases handed out before have expired (it waits the client lease lifetime).
   * Returns the definition.
   *
   * @throws FloorAtMaxException if {@code floor >= max}: nothing would be left
   * @throws AdvanceNotConfirmedException if some live server did not confirm in time: the floor is in
   *     force in the store, and advancing again completes it
   */
  public SequenceDefinition advance(String sequence, long floor) {
    SequenceDefinition.checkName(sequence);
    checkOpen();
    return advances.advance(sequence, floor, sleeper);
  }

  /**
   * Reserves {@code count} consecutive IDs of a sequence for one caller, from above everything any server or
   * datacenter holds ({@link RangeStore#reserveRange}); this allocator's own reserve is untouched (it lies
   * below). Nothing is confirmed with other servers: unlike an advance, a reservation takes only IDs that
   * nobody holds, so no cached ID has to be dropped anywhere.
   *
   * @param requestId the caller's request id (a retry with the same one returns the same range), or empty
   *     for a fresh one
   * @param reservedBy who asked, as the record keeps it
   * @throws InvalidRequestException bad name, count below 1, bad request id
   * @throws SequenceNotFoundException unknown sequence
   * @throws SequenceDeletedException a deleted sequence (a retry of a reservation made before the deletion too:
   *     {@link #reservations} still lists it)
   * @throws RangeAboveMaxException fewer than {@code count} IDs left above the tiers' reserves
   * @throws ReservationRefusedException a striped sequence, or a request id reused with another count
   */
  public Reservation reserveRange(String sequence, long count, String requestId, String reservedBy) {
    return rangeReservations.reserveRange(sequence, count, requestId, reservedBy);
  }

  /**
   * Up to {@code limit} of a sequence's past reservations in range order, after the one whose first ID is
   * {@code afterFirst} ({@link Long#MIN_VALUE}: from the first).
   */
  public List<Reservation> reservations(String sequence, long afterFirst, int limit) {
    return rangeReservations.reservations(sequence, afterFirst, limit);
  }

  /** How long a client stub may use a range it was handed (zero: no limit); stamped on responses. */
  public Duration clientLeaseLifetime() {
    return clientLeases.lifetime();
  }

  /**
   * The sequence's definition and live state (store and this process's reserve). Reading it has no side
   * effect: a sequence this allocator has not loaded stays unloaded, with a reserve of 0.
   */
  public SequenceView describe(String sequence) {
    SequenceReads.Described d = reads.describe(sequence);
    return new SequenceView(d.stored(), d.state(), d.serverReserve(), d.owner());
  }

  /** Counters of this allocator since it started, summed over every sequence it served. */
  public Stats stats() {
    PoolTotals t = new PoolTotals();
    for (SequenceRuntime rt : runtimes.loaded()) {
      t.add(rt.totals());
    }
    t.add(runtimes.retired());
    return new Stats(t.served, t.reservations, t.dropped, t.held, t.returned, t.abandoned);
  }

  /**
   * Per-sequence counters of this allocator since it started, for every sequence it has loaded (served,
   * described or advanced), in no particular order. Cheap: no store I/O, one short lock per pool.
   */
  public List<SequenceStats> sequenceStats() {
    List<SequenceStats> out = new ArrayList<>();
    for (SequenceRuntime rt : runtimes.loaded()) {
      PoolTotals t = rt.totals();
      out.add(new SequenceStats(rt.definition, t.served, t.reservations, t.dropped - t.abandoned, t.abandoned,
          t.held, t.lowWater, rt.owner != null ? rt.owner.servingEpoch() : 0));
    }
    return out;
  }

  /** Whether this allocator has loaded the sequence (no store I/O; false for names never used here). */
  public boolean isLoaded(String sequence) {
    return runtimes.isLoaded(sequence);
  }

  /**
   * Stops refills and wakes waiting callers (they fail with {@link StoreUnavailableException}), then
   * gives what the pools hold back to the store ({@link RangeStore#giveBack}): a graceful stop loses
   * nothing where the store takes it back; the rest is a gap, never a duplicate. Call it only once
   * nothing calls {@link #allocate} any more (the server has stopped serving). Does not close the store.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    strictOwners.close(); // first: a round that starts after this point finds the allocator closed
    poller.close();
    runtimes.stopSweeps();
    sync.withdraw(runtimes.closeAll(giveBackDeadlineNanos));
    directExecutor.shutdownNow();
    if (ownedExecutor != null) {
      ownedExecutor.shutdownNow();
      try {
        ownedExecutor.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new StoreUnavailableException("the allocator is closed (server shutting down)");
    }
  }

  private void checkServing() {
    if (!sync.serving()) {
      throw new StoreUnavailableException(sync.fencedReason());
    }
  }

  /** See {@link Runtimes#lookAtMarks}; package-private: tests look themselves, at times of their fake ticker. */
  void lookAtLeaseMarks() {
    runtimes.lookAtMarks();
  }

  /** See {@link Runtimes#unloadIdle}; package-private: tests sweep themselves. */
  int unloadIdle() {
    return runtimes.unloadIdle();
  }

  /**
   * A sequence's definition with its store state, what this process holds in memory, and its creation
   * time where the store recorded it.
   */
  public record SequenceView(StoredSequence stored, SequenceState state, long serverReserve,
      Optional<OwnerRecord> owner) {
    public SequenceDefinition definition() {
      return stored.definition();
    }

    public Optional<Instant> createTime() {
      return stored.createTime();
    }
  }

  /** This process's datacenter: the default home datacenter of the strict sequences it creates. */
  public String datacenter() {
    return store.datacenter();
  }

  /**
   * Counters, over every sequence this allocator ever loaded: IDs handed out, store reservations (refills
   * and direct reservations), IDs dropped by {@link #advance} or abandoned (not given back) by
   * {@link #close} or an unload, IDs held in reserve now, IDs given back to the store by {@link #close}
   * or an unload, and the abandoned part of {@code dropped}.
   */
  public record Stats(long served, long reservations, long dropped, long held, long returned, long abandoned) {}

  /**
   * One sequence's counters in this allocator: IDs handed out, store reservations, IDs dropped below a
   * floor by {@link #advance}, IDs abandoned by {@link #close} (a gap), IDs held in reserve now, and the
   * sum of its stripes' low-water marks: the reserve a refill starts below, so that at the rate the pools
   * measured, {@code lowWater / rate} is the guaranteed outage runway ({@link RunwayPolicy}); and for a
   * strict sequence, the epoch of the owner lease this process holds now (0: it holds none, or the
   * sequence is not strict).
   */
  public record SequenceStats(SequenceDefinition definition, long served, long reservations,
      long droppedByAdvance, long abandoned, long held, long lowWater, long ownerEpoch) {}

}
