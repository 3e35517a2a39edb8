package dev.idgen.core.internal.allocation;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.IdRange;
import dev.idgen.core.KnownSequence;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceDeletedException;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.StoredSequence;
import dev.idgen.core.Ticker;
import dev.idgen.core.internal.Daemons;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle of the sequences an {@link dev.idgen.core.Allocator} serves: loading one (its definition, and its floor
 * before anything is handed out), unloading the idle ones, closing and giving back at a stop; what is known
 * of a sequence after it is unloaded ({@link KnownSequence}); floors applied to everything of a sequence here;
 * and, for advances, until when client leases of a sequence may still be used ({@link #leasesUntil}).
 *
 * <p>Threads: any thread may load or look up a runtime (a concurrent map; the store is read outside its
 * bins, and the first runtime put wins). One sweeper thread unloads, and a stop closes: a runtime leaves the
 * map first (a new call loads it anew) and stays in {@code unloading} until its pools are closed, so that a
 * floor raised meanwhile still reaches a call inside it. The retired totals are guarded by their own lock.
 * A definition change ({@link #redefine}) closes the old runtime's pools on the caller's thread, which may hold
 * the floor sync's lock, and gives their IDs back on a thread of its own ({@link #giveBacks}): a give-back is a
 * store write that may wait, and advances and changes on this server wait for that lock.
 */
@ThreadSafe
public final class Runtimes {
  private static final Logger log = LoggerFactory.getLogger(Runtimes.class);

  /** How long a closing pool waits for a refill in flight, to give its range back too. */
  static final long LATE_REFILL_WAIT_NANOS = TimeUnit.SECONDS.toNanos(15);
  /**
   * How many times a load reads a definition that is older than one a change showed here before it gives up
   * ({@link StoreUnavailableException}): more means the store lost a version, not that a change raced the load.
   */
  static final int LOAD_ATTEMPTS = 3;

  private final RangeStore store;
  private final StripePool.Settings poolSettings;
  private final OwnerLease.Opener owners;
  private final Ticker ticker;
  private final long unloadIdleAfterNanos;
  private final ClientLeases clientLeases;
  private final ConcurrentMap<String, SequenceRuntime> sequences = new ConcurrentHashMap<>();
  /**
   * Every sequence loaded here, kept after unloads: its definition (immutable) and the highest floor it
   * knows, so that what a response says of a sequence, and the floor a range is checked against before it
   * is sent, never depend on whether the sequence is loaded at that moment.
   */
  private final ConcurrentMap<String, KnownState> known = new ConcurrentHashMap<>();
  /**
   * The version of each sequence that a definition change applied here showed ({@link #redefine}): a later
   * load whose read is older (a store's local read still behind the change, as a Cassandra replica may be)
   * reads it again with {@link RangeStore#findCurrent}, so that a server never goes back to a definition it
   * has seen replaced. Only sequences changed while this server ran are in it.
   */
  private final ConcurrentMap<String, Long> changedTo = new ConcurrentHashMap<>();
  /** Striped locks that order a load's publication against a change's record of the same name (no I/O inside). */
  private final Object[] nameLocks = new Object[64];

  {
    for (int i = 0; i < nameLocks.length; i++) {
      nameLocks[i] = new Object();
    }
  }
  /** Runtimes out of {@link #sequences} whose pools are not closed yet (an idle unload in progress). */
  private final Set<SequenceRuntime> unloading = ConcurrentHashMap.newKeySet();
  /** When (ticker nanos) a sequence was last unloaded, or this allocator started: see {@link #leasesUntil}. */
  private volatile long lastUnloadNanos;
  /** The counters of the pools of unloaded sequences, so that totals never go down. */
  private final PoolTotals retired = new PoolTotals();
  private volatile boolean closed;
  /** Runs {@link #unloadIdle} on a thread of its own; null when unloading is off. */
  @Nullable private final ScheduledExecutorService sweeper;
  /**
   * Gives back the reserves of runtimes a definition change unloaded, one at a time, on one thread that ends
   * when idle: see {@link #redefine} for why outside the caller's thread. Drained by {@link #closeAll}.
   */
  private final ExecutorService giveBacks = new ThreadPoolExecutor(0, 1, 10, TimeUnit.SECONDS,
      new LinkedBlockingQueue<>(), Daemons.threads("idgen-give-back-after-change-"));

  public Runtimes(RangeStore store, StripePool.Settings poolSettings, OwnerLease.Opener owners, Ticker ticker,
      long unloadIdleAfterNanos, ClientLeases clientLeases) {
    this.store = store;
    this.poolSettings = poolSettings;
    this.owners = owners;
    this.ticker = ticker;
    this.unloadIdleAfterNanos = unloadIdleAfterNanos;
    this.clientLeases = clientLeases;
    this.lastUnloadNanos = ticker.nanos();
    if (unloadIdleAfterNanos > 0) {
      long period = Math.max(TimeUnit.SECONDS.toNanos(1), Math.min(TimeUnit.MINUTES.toNanos(1), unloadIdleAfterNanos / 4));
      sweeper = Executors.newSingleThreadScheduledExecutor(Daemons.threads("idgen-unload-idle-"));
      // The task catches its own failures; stopSweeps() ends it.
      Future<?> unused = sweeper.scheduleWithFixedDelay(this::unloadIdleQuietly, period, period, TimeUnit.NANOSECONDS);
    } else {
      sweeper = null;
    }
  }

  /** The loaded runtime of a sequence, or null: no store I/O (the hot path). */
  @Nullable
  public SequenceRuntime get(@Nullable String name) {
    return name == null ? null : sequences.get(name);
  }

  public Collection<SequenceRuntime> loaded() {
    return sequences.values();
  }

  public boolean isLoaded(String name) {
    return sequences.containsKey(name);
  }

  @Nullable
  public KnownSequence known(@Nullable String name) {
    return name == null ? null : known.get(name);
  }

  /** A copy of the counters of the pools of unloaded sequences. */
  public PoolTotals retired() {
    PoolTotals t = new PoolTotals();
    synchronized (retired) {
      t.add(retired);
    }
    return t;
  }

  /**
   * The sequence's runtime, loaded if it is not: its definition, and its floor read before anything is
   * handed out (a floor log entry applied while it was not loaded here reached no pool of it: defence in
   * depth, since the store's pools are cut at the floor too).
   */
  public SequenceRuntime load(String name) {
    // Bounded: each attempt reads the store afresh; only a change applied here during the attempt, or a store
    // that shows an older version than one applied here, starts another.
    for (int attempt = 1; ; attempt++) {
      SequenceRuntime loaded = tryLoad(name);
      if (loaded != null) {
        return loaded;
      }
      if (attempt == LOAD_ATTEMPTS) {
        StoredSequence current = current(name);
        throw new StoreUnavailableException("sequence '" + name + "': this server applied version "
            + changedTo.get(name) + " of its definition, but the store shows version " + current.version()
            + " where changes are decided (read " + LOAD_ATTEMPTS + " times), and this server serves no older"
            + " definition. If the store lost that change (restored from a backup?), move the sequence past what"
            + " any server may have handed out (AdvanceSequence), then restart this server");
      }
      backOff(attempt);
    }
  }

  /**
   * One attempt of {@link #load}: the runtime, or null if the definition it read is older than one a change
   * showed here meanwhile (nothing published; the caller reads again).
   */
  @Nullable
  private SequenceRuntime tryLoad(String name) {
    SequenceRuntime rt = get(name);
    if (rt != null) {
      return rt;
    }
    // Read outside computeIfAbsent: store I/O must not block other sequences' map bins.
    StoredSequence read = stored(name);
    Long changed = changedTo.get(name);
    // A local read behind a change this server applied: read again where changes are decided.
    StoredSequence stored = changed != null && read.version() < changed ? store.findCurrent(name).orElse(read) : read;
    if (stored.deleted()) {
      throw new SequenceDeletedException(stored); // nothing is loaded: a deleted sequence holds no reserve here
    }
    KnownState k = known.computeIfAbsent(name, n -> new KnownState(stored.definition()));
    k.redefine(stored.definition());
    k.raise(store.floor(stored.definition()));
    // Nothing handed out from it yet; an earlier runtime of it handed out before it was unloaded.
    SequenceRuntime created = new SequenceRuntime(stored, k, store, poolSettings, owners, ticker, lastUnloadNanos);
    created.raiseFloor(k.floor());
    // A change applied here while this load read the store finds nothing loaded to unload, so this load must
    // not publish a runtime made from the definition the change replaced (a deleted sequence served until it
    // went idle: the full ChaosIT, seed -7150607335844139643). Under the name's lock, redefine() records the
    // change and then looks in the map, and this load looks at the record and then puts: one sees the other.
    boolean replaced;
    SequenceRuntime raced = null;
    synchronized (lockOf(name)) {
      Long after = changedTo.get(name);
      replaced = after != null && after > stored.version();
      if (!replaced) {
        raced = sequences.putIfAbsent(name, created);
      }
    }
    if (replaced) {
      closePools(created); // never published: nothing was handed out from it
      // Where changes are decided: gone (purged), deleted, or the new definition, which the next attempt reads.
      StoredSequence current = current(name);
      if (current.deleted()) {
        throw new SequenceDeletedException(current);
      }
      return null;
    }
    if (raced != null) {
      return raced;
    }
    if (closed) {
      closePools(created); // closeAll() may have missed it; pools of a closed allocator never refill
    }
    return created;
  }

  /** The sequence where changes are decided; {@link SequenceNotFoundException} if it is gone. */
  private StoredSequence current(String name) {
    return store.findCurrent(name).orElseThrow(() -> notFound(name));
  }

  /** A short random pause between two attempts of a load, growing with the attempt (at most 100 ms). */
  private static void backOff(int attempt) {
    try {
      TimeUnit.MILLISECONDS.sleep(ThreadLocalRandom.current().nextLong(10, 50L * attempt + 1));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("interrupted while loading a sequence", e);
    }
  }

  /** Closes a runtime's pools without giving anything back: for one that no call has taken from. */
  private static void closePools(SequenceRuntime rt) {
    for (StripePool p : rt.pools) {
      p.close();
    }
  }

  private Object lockOf(String name) {
    return nameLocks[(name.hashCode() & 0x7fffffff) % nameLocks.length];
  }

  /** A sequence's definition and creation time from the store; {@link SequenceNotFoundException} if none. */
  public StoredSequence stored(String name) {
    SequenceDefinition.checkName(name);
    return store.findStored(name).orElseThrow(() -> notFound(name));
  }

  private static SequenceNotFoundException notFound(String name) {
    return new SequenceNotFoundException("sequence '" + name
        + "' does not exist (sequences are created explicitly with CreateSequence)");
  }

  /**
   * The sequence's definition changed in the store (an update, a delete, an undelete) to version
   * {@code version} (0: not said): reads it again where changes are decided ({@link RangeStore#findCurrent})
   * and, when the runtime loaded here was made from another one, unloads it as an idle sweep does: out of the
   * map first (the next call loads the new definition, or finds the sequence deleted), then its pools are
   * closed, and what they held goes back to the store on a thread of its own. So a raised max serves at once on
   * a sequence that had reached the old one, and a deleted sequence holds no reserve here. A call that was
   * inside the old runtime keeps what it took (IDs of the old definition are IDs of the new one: a change
   * never moves a position's ID).
   *
   * <p>The give-back runs outside the caller's thread, which may hold the floor sync's lock: it is a store
   * write that may wait (for a refill in flight, for the store), and is safe after this returns, since the
   * pools are closed by then (nothing here hands their IDs out), it only adds IDs to the store, which cuts them
   * at the floor it reads as every write that adds does, and one that does not complete leaves a counted gap.
   *
   * @throws StoreUnavailableException if the store cannot be read where changes are decided, or shows a version
   *     older than {@code version}: this server then has not read the change, keeps what it has, and must not
   *     confirm it (the floor sync tries again)
   */
  public void redefine(String name, long version) {
    java.util.Optional<StoredSequence> stored = store.findCurrent(name);
    if (stored.isPresent() && stored.get().version() < version) {
      throw new StoreUnavailableException("sequence '" + name + "': the store shows version "
          + stored.get().version() + " of its definition where changes are decided, older than version " + version
          + " that its change logged");
    }
    SequenceRuntime rt;
    synchronized (lockOf(name)) { // see load(): a load in flight either sees the record or is seen here
      stored.ifPresent(s -> changedTo.merge(name, s.version(), Math::max));
      rt = sequences.get(name);
    }
    KnownState k = known.get(name);
    if (k != null && stored.isPresent()) {
      k.redefine(stored.get().definition());
    }
    if (rt == null || (stored.isPresent() && !stored.get().deleted() && stored.get().definition().equals(rt.definition))) {
      return;
    }
    log.info("sequence '{}' {}: this server gives back its reserve of the old definition", name,
        stored.isEmpty() ? "no longer exists" : stored.get().deleted() ? "was deleted" : "was changed");
    unload(rt, true);
  }

  /**
   * {@link #redefine} of every loaded sequence (this server's place in the floor log is gone: the entries it
   * missed may have been definition changes). Tries them all, then throws the first failure, if any.
   */
  public void redefineAll() {
    StoreUnavailableException failed = null;
    for (SequenceRuntime rt : List.copyOf(sequences.values())) {
      try {
        redefine(rt.definition.name(), 0);
      } catch (StoreUnavailableException e) {
        if (failed == null) {
          failed = e;
        }
      }
    }
    if (failed != null) {
      throw failed;
    }
  }

  /** Unloads one runtime (see {@link #unloadIdle}); false if another thread unloaded it first. */
  private boolean unload(SequenceRuntime rt) {
    return unload(rt, false);
  }

  /**
   * {@link #unload(SequenceRuntime)}, giving the reserve back on {@link #giveBacks} when {@code later} (the
   * pools are closed before this returns either way).
   */
  private boolean unload(SequenceRuntime rt, boolean later) {
    // Out of the map, but a call inside it may still take IDs until its pools are closed: floors raised
    // meanwhile reach it through unloading, and leasesUntil counts it as handing out now.
    unloading.add(rt);
    if (!sequences.remove(rt.definition.name(), rt)) {
      unloading.remove(rt);
      return false;
    }
    List<List<IdRange>> taken;
    try {
      taken = close(rt);
    } catch (RuntimeException e) {
      unloaded(rt);
      throw e;
    }
    Runnable giveBack = () -> {
      try {
        giveBackStripes(rt, taken);
      } finally {
        unloaded(rt);
      }
    };
    if (!later) {
      giveBack.run();
      return true;
    }
    try {
      giveBacks.execute(giveBack);
    } catch (RejectedExecutionException e) {
      giveBack.run(); // closing: closeAll() no longer waits for the thread
    }
    return true;
  }

  /** After an unload's give-back: nothing of the runtime hands out or holds IDs any more. */
  private void unloaded(SequenceRuntime rt) {
    lastUnloadNanos = ticker.nanos(); // its pools are closed: nothing handed out from it after this
    unloading.remove(rt);
    PoolTotals t = rt.totals();
    synchronized (retired) {
      retired.add(t);
    }
  }

  /**
   * Applies a floor to everything of the sequence here: what is known of it, its runtime, and a runtime
   * still closing after an idle unload (a call inside it takes nothing at or below the floor). Returns
   * {@link #leasesUntil} of it.
   */
  public long applyFloor(String sequence, long floor) {
    KnownState k = known.get(sequence);
    if (k != null) {
      k.raise(floor);
    }
    SequenceRuntime rt = sequences.get(sequence);
    if (rt != null) {
      rt.raiseFloor(floor);
    }
    for (SequenceRuntime u : unloading) {
      if (u.definition.name().equals(sequence)) {
        u.raiseFloor(floor);
      }
    }
    return leasesUntil(rt);
  }

  /**
   * Reads the floor of every loaded sequence from the store again (this server's place in the floor log is
   * gone; {@link #redefineAll} reads their definitions) and applies them. Returns the latest
   * {@link #leasesUntil} of them all.
   */
  public long reloadFloors() {
    long until = leasesUntil(null);
    for (SequenceRuntime rt : sequences.values()) {
      long floor = store.floor(rt.definition);
      if (floor != Long.MIN_VALUE) {
        rt.known.raise(floor);
        rt.raiseFloor(floor);
      }
      until = later(until, leasesUntil(rt));
    }
    return until;
  }

  /**
   * Until when (ticker nanos) client leases this server handed out for the sequence of {@code rt} (null: a
   * sequence not loaded here) may still be used, with a margin for a client's late expiry;
   * {@link Long#MIN_VALUE} when they have all expired, or when clients get no lease lifetime. A call takes
   * IDs only after marking its runtime ({@link SequenceRuntime#touch}), so a mark seen clear here, after the
   * floor was raised, means no ID at or below it was taken since the last time it was cleared; a sequence
   * not loaded handed nothing out since it was unloaded (or since this allocator started: an earlier
   * process under this name may have).
   */
  public long leasesUntil(@Nullable SequenceRuntime rt) {
    if (!clientLeases.enabled()) {
      return Long.MIN_VALUE;
    }
    long since = rt != null ? rt.lastHandedOut() : lastUnloadNanos;
    long now = ticker.nanos(); // after the look: never before the time it noted
    if (!unloading.isEmpty()) {
      since = now; // an earlier runtime of it may still hand out until its pools close
    }
    long until = since + clientLeases.heldNanos();
    return until - now > 0 ? until : Long.MIN_VALUE;
  }

  /**
   * Gives a failed call's ranges back to the runtime it took them from, or, where its pools are closed (an
   * unload), counts them lost in the retired totals, where the closed pools' counters went or will go: a closed
   * pool refuses them without counting, so each ID is counted once whichever comes first.
   */
  public void giveBack(SequenceRuntime rt, List<IdRange> ranges) {
    long refused = rt.giveBack(ranges);
    if (refused > 0) {
      lostAfterUnload(refused);
    }
  }

  /** {@code ids} taken by a call from a runtime since unloaded, and never handed out: a counted gap. */
  void lostAfterUnload(long ids) {
    synchronized (retired) {
      retired.served -= ids;
      retired.dropped += ids;
      retired.abandoned += ids;
    }
  }

  /** Looks at the mark of every loaded sequence ({@link SequenceRuntime#lookAtMark}): the periodic task. */
  public void lookAtMarks() {
    for (SequenceRuntime rt : sequences.values()) {
      rt.lookAtMark();
    }
  }

  /** The later of two {@link #leasesUntil} results. */
  static long later(long a, long b) {
    return a == Long.MIN_VALUE ? b : b == Long.MIN_VALUE ? a : (b - a > 0 ? b : a);
  }

  /**
   * Unloads every sequence not allocated from for the idle time: it leaves the map first (a new call loads
   * it anew), then its pools are closed and their reserve given back, as in a graceful stop; a call that was
   * inside it when it closed carries on with the new one. So a server's memory and background work follow
   * the sequences in use, not every sequence it ever served. Returns how many were unloaded.
   */
  public int unloadIdle() {
    if (unloadIdleAfterNanos <= 0) {
      return 0;
    }
    long now = ticker.nanos();
    int unloaded = 0;
    for (SequenceRuntime rt : sequences.values()) {
      if (closed) {
        break;
      }
      if (rt.used) {
        rt.used = false; // used since the last sweep: idle from now on, unless used again
        rt.idleSinceNanos = now;
        continue;
      }
      if (now - rt.idleSinceNanos < unloadIdleAfterNanos) {
        continue;
      }
      if (unload(rt)) {
        unloaded++;
      }
    }
    if (unloaded > 0) {
      log.info("unloaded {} sequence(s) idle for {} s or more; {} loaded", unloaded,
          TimeUnit.NANOSECONDS.toSeconds(unloadIdleAfterNanos), sequences.size());
    }
    return unloaded;
  }

  private void unloadIdleQuietly() {
    try {
      unloadIdle();
    } catch (RuntimeException e) {
      log.warn("unloading idle sequences failed (retried at the next sweep): {}", e.toString());
    }
  }

  /** Ends the idle sweeps: the allocator is closing. */
  public void stopSweeps() {
    if (sweeper != null) {
      sweeper.shutdownNow();
    }
  }

  /**
   * A graceful stop: every pool is closed first (nothing can hand its IDs out any more), then what it held
   * goes back to the store, largest first, for at most {@code giveBackNanos} ({@link ShutdownGiveBack}); what
   * the store does not take back for certain stays a gap. Returns until when client leases handed out here may
   * still be used ({@link #leasesUntil}, over every sequence).
   */
  public long closeAll(long giveBackNanos) {
    closed = true;
    long leases = leasesUntil(null);
    for (SequenceRuntime rt : sequences.values()) {
      leases = later(leases, leasesUntil(rt));
    }
    long deadline = ticker.nanos() + giveBackNanos;
    new ShutdownGiveBack(store, ticker, giveBackNanos).run(List.copyOf(sequences.values()));
    // The give-backs of definition changes still under way share the stop's deadline: what is left is a gap.
    giveBacks.shutdown();
    try {
      long left = Math.max(0, Math.min(deadline - ticker.nanos(), 2 * LATE_REFILL_WAIT_NANOS));
      if (!giveBacks.awaitTermination(left, TimeUnit.NANOSECONDS)) {
        log.warn("giving back the reserves of changed sequences did not finish in time (what is left is a gap)");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // what is not given back yet stays a gap
    }
    return leases;
  }

  /**
   * Closes a runtime's pools: none hands out an ID any more. Returns what they held, per stripe, for
   * {@link #giveBackStripes}; nothing for a strict runtime, whose owner it releases.
   */
  static List<List<IdRange>> close(SequenceRuntime rt) {
    rt.unloaded = true;
    if (rt.owner != null) {
      rt.owner.release(); // nothing goes back to a strict pool: what it held is a counted gap
      return List.of();
    }
    List<List<IdRange>> taken = new ArrayList<>(rt.pools.length);
    for (StripePool pool : rt.pools) {
      // All first: a call inside the sequence then fails over to a new runtime at once.
      taken.add(new ArrayList<>(pool.closeAndTake()));
    }
    return taken;
  }

  /** Gives what {@link #close} took, and what refills in flight bring after it, back to the store. */
  private void giveBackStripes(SequenceRuntime rt, List<List<IdRange>> taken) {
    for (int k = 0; k < taken.size(); k++) {
      List<IdRange> held = taken.get(k);
      held.addAll(rt.pools[k].awaitLate(LATE_REFILL_WAIT_NANOS)); // a refill in flight lands after the close
      if (held.isEmpty()) {
        continue;
      }
      giveBackStripe(store, rt, k, held);
    }
  }

  /**
   * Gives one stripe's reserve, taken from its closed pool, back to the store, lowest first; returns the IDs
   * the store took back, 0 when the write failed (logged: a counted gap). For an unload and for a stop.
   */
  static long giveBackStripe(RangeStore store, SequenceRuntime rt, int k, List<IdRange> held) {
    held.sort(java.util.Comparator.comparingLong(IdRange::first));
    try {
      long back = store.giveBack(rt.definition, k, held);
      rt.pools[k].returned(back);
      return back;
    } catch (RuntimeException e) {
      log.warn("could not give back the reserve of sequence '{}' stripe {} ({} IDs, now a gap): {}",
          rt.definition.name(), k, IdRange.total(held), e.toString());
      return 0;
    }
  }
}
