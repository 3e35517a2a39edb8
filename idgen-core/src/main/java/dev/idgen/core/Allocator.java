package dev.idgen.core;

import com.google.errorprone.annotations.ThreadSafe;
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
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * from them. Each runtime notes, without a write on the hot path once set, whether a call took IDs since a
 * floor last looked ({@code SequenceRuntime#touch}), which tells an advance how long client leases may still
 * hold IDs below its floor ({@code Runtimes#leasesUntil}, {@link ClientLeases}); a runtime being unloaded
 * stays reachable for floors ({@code unloading}) until its pools are closed.
 *
 * <p>Where things live: this class is the facade that the server calls; it is configured by
 * {@link AllocatorBuilder}. The work is done by the rooms of this package: {@link Runtimes} (the sequences
 * loaded here: load, idle unload, close and give back) with one {@link SequenceRuntime} per sequence and one
 * {@link StripePool} per stripe; {@link FloorSync} and {@link FloorPoller} (floors set elsewhere,
 * announcements, readiness); {@link ClientLeases} (what an advance waits for); {@link StrictOwner} (owner
 * leases of strict sequences) and {@link Route} (what to do with a call: serve, forward or wait).
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
  volatile Sleeper sleeper = TimeUnit.NANOSECONDS::sleep;
  /** Runs {@link FloorSync#cycle} when other processes share the store, and says when this allocator is ready. */
  private final FloorPoller poller;
  private final FloorSync sync;
  private final long confirmTimeoutNanos;
  private final Ticker ticker;
  /** Unloads idle sequences; null when unloading is off. */
  private final ScheduledExecutorService unloader;
  private volatile boolean closed;
  /** Who this process is in owner rows of strict sequences, and how long its owner leases last. */
  private final StrictOwner.Identity identity;
  /** Renews owner leases and watches owners of the strict sequences loaded here, every quarter lease. */
  private final ScheduledExecutorService owners;
  /** The clock of delete times, and how long a deleted sequence stays restorable. */
  private final WallClock wall;
  private final Duration undeleteWindow;

  Allocator(AllocatorBuilder b) {
    this.store = b.store;
    this.maxIdsPerCall = b.maxIdsPerCall;
    if (b.executor != null) {
      this.executor = b.executor;
      this.ownedExecutor = null;
    } else {
      this.ownedExecutor = Executors.newCachedThreadPool(daemonThreads("idgen-refill-"));
      this.executor = ownedExecutor;
    }
    this.directExecutor = Executors.newCachedThreadPool(daemonThreads("idgen-direct-reserve-"));
    this.poolSettings = new StripePool.Settings(
        b.ticker, RunwayPolicy.of(b.outageRunway, b.refillStep, b.minNodeBlock), executor, directExecutor);
    this.confirmTimeoutNanos = b.confirmTimeout.toNanos();
    this.ticker = b.ticker;
    this.wall = b.wall;
    this.undeleteWindow = b.undeleteWindow;
    this.clientLeases = new ClientLeases(b.clientLeaseLifetime, b.serverLease);
    String serverName = b.serverName;
    this.identity = new StrictOwner.Identity(b.serverName, UUID.randomUUID(),
        b.ownerTarget == null ? () -> serverName : b.ownerTarget, b.ownerLease,
        b.ownerLeaseMargin != null ? b.ownerLeaseMargin : StrictOwner.Identity.defaultMargin(b.ownerLease), b.wall);
    this.owners = Executors.newSingleThreadScheduledExecutor(daemonThreads("idgen-owners-"));
    long ownerPeriod = b.ownerLease.toNanos() / 4;
    // The task catches its own failures; shutdownNow() in close() ends it.
    Future<?> unusedOwners = owners.scheduleWithFixedDelay(this::tickOwnersQuietly, ownerPeriod, ownerPeriod,
        TimeUnit.NANOSECONDS);
    long unloadIdleAfterNanos = b.unloadIdleAfter.toNanos();
    this.runtimes = new Runtimes(store, poolSettings, identity, b.ticker, unloadIdleAfterNanos, clientLeases);
    if (unloadIdleAfterNanos > 0) {
      long period = Math.max(TimeUnit.SECONDS.toNanos(1), Math.min(TimeUnit.MINUTES.toNanos(1), unloadIdleAfterNanos / 4));
      unloader = Executors.newSingleThreadScheduledExecutor(daemonThreads("idgen-unload-idle-"));
      // The task catches its own failures; shutdownNow() in close() ends it.
      Future<?> unused = unloader.scheduleWithFixedDelay(() -> runtimes.unloadIdleQuietly(), period, period,
          TimeUnit.NANOSECONDS);
    } else {
      unloader = null;
    }
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
      public void redefine(String sequence) {
        runtimes.redefine(sequence);
      }
    }, b.ticker, b.wall, b.serverName, b.serverLease, runtimes.leasesUntil(null));
    if (sync.enabled() && b.outageRunway.compareTo(b.serverLease.multipliedBy(3).dividedBy(4)) > 0) {
      log.warn("the outage runway ({}) is longer than 3/4 of the server lease ({}): a server cut off from the"
          + " store stops serving after {}, whatever it still holds", b.outageRunway, b.serverLease,
          b.serverLease.multipliedBy(3).dividedBy(4));
    }
    this.poller = new FloorPoller(store, sync);
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
    try {
      store.create(definition);
    } catch (SequenceAlreadyExistsException e) {
      Optional<StoredSequence> existing;
      try {
        existing = store.findStored(definition.name());
      } catch (RuntimeException readFailed) {
        throw e;
      }
      if (existing.isPresent() && existing.get().deleted()) {
        StoredSequence d = existing.get();
        // A deleted name is never reused: its stores' positions map to its own IDs, which it handed out.
        throw new SequenceAlreadyExistsException("sequence '" + definition.name() + "' already exists: it was"
            + " deleted at " + d.deleteTime().orElseThrow() + (d.purged() ? " and purged" : " (UndeleteSequence"
            + " restores it until " + d.expireTime().orElseThrow() + ")") + ", and the name of a deleted"
            + " sequence is never used again, so that none of its IDs is handed out twice; choose another name");
      }
      throw e;
    }
    return definition;
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
    StoredSequence current = current(name);
    if (current.deleted()) {
      throw new SequenceDeletedException(current);
    }
    checkEtag(current, etag);
    SequenceDefinition next = update.applyTo(current.definition());
    return change(current, next.equals(current.definition()) ? current : current.redefined(next),
        "its new definition");
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
    StoredSequence current = current(name);
    if (current.purged()) {
      throw new SequenceDeletedException(current);
    }
    if (purge) {
      if (!current.deleted()) {
        throw new ChangeRefusedException(ChangeRefusedException.Kind.NOT_DELETED, name, "purge", "sequence '" + name
            + "' is not deleted: only a deleted sequence can be purged, after its expire time (DeleteSequence"
            + " first, without purge)");
      }
      Instant expire = current.expireTime().orElseThrow();
      if (wall.millis() < expire.toEpochMilli()) {
        throw new ChangeRefusedException(ChangeRefusedException.Kind.PURGE_BEFORE_EXPIRY, name, "purge",
            "sequence '" + name + "' can be purged from " + expire + " on (its expire time); until then"
            + " UndeleteSequence can restore it");
      }
      checkEtag(current, etag);
      return change(current, current.purgedNow(), "its purge");
    }
    if (current.deleted()) {
      change(current, current, "its deletion"); // completes a delete that was not confirmed everywhere
      throw new SequenceDeletedException(current);
    }
    checkEtag(current, etag);
    Instant at = Instant.ofEpochMilli(wall.millis());
    return change(current, current.deletedAt(at, at.plus(undeleteWindow)), "its deletion");
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
    StoredSequence current = current(name);
    if (current.purged()) {
      throw new SequenceDeletedException(current);
    }
    if (!current.deleted()) {
      change(current, current, "its restoration");
      throw new ChangeRefusedException(ChangeRefusedException.Kind.NOT_DELETED, name, "", "sequence '" + name
          + "' is not deleted: there is nothing to restore");
    }
    checkEtag(current, etag);
    return change(current, current.undeleted(), "its restoration");
  }

  /** The sequence as the store has it now; {@link SequenceNotFoundException} if none. */
  private StoredSequence current(String name) {
    SequenceDefinition.checkName(name);
    checkOpen();
    return store.findCurrent(name).orElseThrow(() -> new SequenceNotFoundException("sequence '" + name
        + "' does not exist (sequences are created explicitly with CreateSequence)"));
  }

  private static void checkEtag(StoredSequence current, @Nullable String etag) {
    if (etag != null && !etag.isEmpty() && !etag.equals(current.etag())) {
      throw new SequenceChangedException(current.definition().name(), etag, current.etag());
    }
  }

  /**
   * Writes {@code next} in place of {@code current} (or, when they are the same, only logs it again), applies
   * it here, then waits until every live server has confirmed it.
   */
  private StoredSequence change(StoredSequence current, StoredSequence next, String what) {
    String name = current.definition().name();
    AdvanceReceipt receipt = store.redefine(current, next);
    runtimes.redefine(name); // this server at once, also where no floor sync runs
    long unusedLeases = sync.confirm(receipt, System.nanoTime() + confirmTimeoutNanos, 0,
        pending -> new ChangeNotConfirmedException(name, what, pending));
    if (!next.sameAs(current)) {
      log.info("sequence '{}' changed: {} (etag {}), applied by every live server", name, describeChange(current,
          next), next.etag());
    }
    return next;
  }

  private static String describeChange(StoredSequence from, StoredSequence to) {
    if (from.deleted() != to.deleted()) {
      return to.deleted() ? "deleted, restorable until " + to.expireTime().orElseThrow() : "restored";
    }
    if (to.purged() && !from.purged()) {
      return "purged";
    }
    SequenceDefinition a = from.definition();
    SequenceDefinition b = to.definition();
    return "max " + a.max() + " -> " + b.max() + ", node_block_size " + a.nodeBlockSize() + " -> "
        + b.nodeBlockSize() + ", dc_block_size " + a.dcBlockSize() + " -> " + b.dcBlockSize();
  }

  /**
   * The definition of a sequence; {@link SequenceNotFoundException} if it does not exist. Does not load
   * the sequence (no reserve is taken for it).
   */
  public SequenceDefinition definition(String name) {
    SequenceRuntime rt = runtimes.get(name);
    return rt != null ? rt.definition : runtimes.stored(name).definition();
  }

  /** Up to {@code limit} definitions in name order after {@code afterName} ("" for the first page). */
  public List<SequenceDefinition> list(String afterName, int limit) {
    if (limit < 1) {
      throw new InvalidRequestException("page size " + limit + " (expected: >= 1)");
    }
    if (!afterName.isEmpty()) {
      SequenceDefinition.checkName(afterName);
    }
    return store.list(afterName, limit);
  }

  /**
   * Up to {@code limit} sequences in name order after {@code afterName}, live ones only unless
   * {@code showDeleted} (then deleted ones too, never purged ones).
   */
  public List<StoredSequence> listStored(String afterName, int limit, boolean showDeleted) {
    List<StoredSequence> out = new ArrayList<>();
    String after = afterName;
    // Bounded: each round reads a page of the store, and ends the listing or moves past it.
    for (;;) {
      List<StoredSequence> page = listStored(after, limit);
      for (StoredSequence s : page) {
        if (!s.purged() && (showDeleted || !s.deleted())) {
          out.add(s);
          if (out.size() == limit) {
            return out;
          }
        }
      }
      if (page.size() < limit) {
        return out;
      }
      after = page.get(page.size() - 1).definition().name();
    }
  }

  /** {@link #list}, with each sequence's creation time where the store recorded it (deleted ones too). */
  public List<StoredSequence> listStored(String afterName, int limit) {
    if (limit < 1) {
      throw new InvalidRequestException("page size " + limit + " (expected: >= 1)");
    }
    if (!afterName.isEmpty()) {
      SequenceDefinition.checkName(afterName);
    }
    return store.listStored(afterName, limit);
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
          need = count - out.stream().mapToLong(IdRange::count).sum();
          rt = runtimes.load(sequence);
          continue;
        }
        // Nothing is handed out by a failed call: what it took goes back to the pools.
        rt.giveBack(out);
        throw e;
      }
    }
    if (!sync.serving()) {
      rt.giveBack(out); // the fence closed while the call waited
      checkServing();
    }
    if (need > 0) {
      throw new SequenceExhaustedException(sequence, rt.definition.max(), count, out);
    }
    return out;
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
    SequenceRuntime rt = runtimes.get(sequence);
    if (rt == null || rt.owner == null) {
      return Optional.empty();
    }
    Optional<String> target = rt.owner.ownerTarget();
    if (target.isPresent()) {
      // A forwarded call uses the sequence here too: its ranges pass through this server to a client (their
      // lease counts for advances), and the idle sweep must not unload a sequence busy with forwarding.
      rt.touch();
    }
    return target;
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
    SequenceRuntime rt = runtimes.get(sequence);
    if (rt != null && rt.owner != null) {
      rt.owner.forgetOwner(target);
    }
  }

  /**
   * The owner row of a strict sequence as this server last read it (loaded sequences only); empty for
   * other sequences, or before a read.
   */
  public Optional<OwnerRecord> owner(String sequence) {
    SequenceRuntime rt = runtimes.get(sequence);
    return rt == null || rt.owner == null ? Optional.empty() : rt.owner.lastSeen();
  }

  /** How long owner leases of strict sequences last (their take-over time is about 1.25 of it). */
  public Duration ownerLease() {
    return identity.lease();
  }

  /** One owner round for every strict sequence loaded here (package-private: tests run rounds themselves). */
  void tickOwnersQuietly() {
    for (SequenceRuntime rt : runtimes.loaded()) {
      if (rt.owner == null || rt.unloaded || closed) {
        continue;
      }
      try {
        rt.owner.tick();
      } catch (RuntimeException e) {
        log.warn("the owner round of strict sequence '{}' failed (retried next round): {}", rt.definition.name(),
            e.toString());
      }
    }
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
    SequenceRuntime rt = runtimes.load(sequence);
    SequenceDefinition def = rt.definition;
    if (floor >= def.max()) {
      throw new FloorAtMaxException(sequence, floor, def.max());
    }
    // Store first: a refill racing with us then either returns IDs above the floor, or lands in a pool
    // after raiseFloor has set the floor that trims it.
    AdvanceReceipt receipt = store.advance(def, floor);
    // Client leases handed out before the floor was in force: this server's own, and those the other
    // servers announce with their confirmations (each knows when its last one for a floored sequence ends).
    long own = runtimes.applyFloor(sequence, floor);
    long others = sync.confirm(receipt, sequence, floor, System.nanoTime() + confirmTimeoutNanos,
        clientLeases.heldNanos());
    long until = clientLeases.advanceWaitsUntil(own, others, ticker.nanos());
    long wait = until == Long.MIN_VALUE ? 0 : until - ticker.nanos();
    if (wait > 0) {
      try {
        sleeper.sleep(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StoreUnavailableException("sequence '" + sequence + "': floor " + floor + " is in force"
            + " on every server, but the wait for client leases to expire was interrupted; advance again"
            + " to be sure", e);
      }
    }
    return def;
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
    SequenceDefinition.checkName(sequence);
    if (count < 1) {
      throw InvalidRequestException.ofField("count", "count " + count + " for sequence '" + sequence
          + "' (expected: at least 1)");
    }
    String id = requestId.isEmpty() ? UUID.randomUUID().toString() : Reservation.checkRequestId(requestId);
    // As the store has it now, not as a runtime or a local read may still have it: a sequence deleted a
    // moment ago reserves nothing more. Its max is the newest too, so a raised max counts at once.
    StoredSequence stored = current(sequence);
    if (stored.deleted()) {
      throw new SequenceDeletedException(stored);
    }
    SequenceDefinition def = stored.definition();
    if (def.stripes() != 1) {
      throw ReservationRefusedException.striped(def);
    }
    Reservation r = store.reserveRange(def, count, id, Reservation.boundedReservedBy(reservedBy));
    log.info("reservation sequence={} first={} last={} count={} request_id={} reserved_by={} replayed={}",
        sequence, r.first(), r.last(), r.count(), r.requestId(), r.reservedBy(), r.replayed());
    return r;
  }

  /**
   * Up to {@code limit} of a sequence's past reservations in range order, after the one whose first ID is
   * {@code afterFirst} ({@link Long#MIN_VALUE}: from the first).
   */
  public List<Reservation> reservations(String sequence, long afterFirst, int limit) {
    SequenceDefinition.checkName(sequence);
    if (limit < 1) {
      throw new InvalidRequestException("page size " + limit + " (expected: >= 1)");
    }
    StoredSequence stored = current(sequence);
    if (stored.purged()) {
      throw new SequenceDeletedException(stored); // as GetSequence: a tombstone shows nothing
    }
    return store.reservations(stored.definition(), afterFirst, limit);
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
    SequenceRuntime rt = runtimes.get(sequence);
    // From the store, not the runtime: the etag and a deletion are read where they are decided.
    SequenceDefinition.checkName(sequence);
    StoredSequence stored = store.findCurrent(sequence).orElseThrow(() -> new SequenceNotFoundException(
        "sequence '" + sequence + "' does not exist (sequences are created explicitly with CreateSequence)"));
    if (stored.purged()) {
      throw new SequenceDeletedException(stored);
    }
    SequenceDefinition def = stored.definition();
    long reserve = 0;
    if (rt != null) {
      for (StripePool pool : rt.pools) {
        reserve += pool.available();
      }
    }
    // A strict sequence's owner row, as the store has it now (a full view reads the store anyway).
    Optional<OwnerRecord> owner = def.strict() ? store.owner(def) : Optional.empty();
    return new SequenceView(stored, store.state(def), reserve, owner);
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
    poller.close();
    if (unloader != null) {
      unloader.shutdownNow();
    }
    owners.shutdownNow();
    sync.withdraw(runtimes.closeAll());
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

  /** See {@link Runtimes#unloadIdle}; package-private: tests sweep themselves. */
  int unloadIdle() {
    return runtimes.unloadIdle();
  }

  static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
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

  /** How an advance waits: {@link TimeUnit#sleep} but for tests. */
  @FunctionalInterface
  interface Sleeper {
    void sleep(long nanos) throws InterruptedException;
  }
}
