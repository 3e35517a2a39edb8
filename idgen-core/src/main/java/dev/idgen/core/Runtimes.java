package dev.idgen.core;

import com.google.errorprone.annotations.ThreadSafe;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle of the sequences an {@link Allocator} serves: loading one (its definition, and its floor
 * before anything is handed out), unloading the idle ones, closing and giving back at a stop; what is known
 * of a sequence after it is unloaded ({@link KnownSequence}); floors applied to everything of a sequence here;
 * and, for advances, until when client leases of a sequence may still be used ({@link #leasesUntil}).
 *
 * <p>Threads: any thread may load or look up a runtime (a concurrent map; the store is read outside its
 * bins, and the first runtime put wins). One sweeper thread unloads, and a stop closes: a runtime leaves the
 * map first (a new call loads it anew) and stays in {@code unloading} until its pools are closed, so that a
 * floor raised meanwhile still reaches a call inside it. The retired totals are guarded by their own lock.
 */
@ThreadSafe
final class Runtimes {
  private static final Logger log = LoggerFactory.getLogger(Runtimes.class);

  /** How long a closing pool waits for a refill in flight, to give its range back too. */
  private static final long LATE_REFILL_WAIT_NANOS = TimeUnit.SECONDS.toNanos(15);

  private final RangeStore store;
  private final StripePool.Settings poolSettings;
  private final StrictOwner.Identity identity;
  private final Ticker ticker;
  private final long unloadIdleAfterNanos;
  private final ClientLeases clientLeases;
  private final ConcurrentMap<String, SequenceRuntime> sequences = new ConcurrentHashMap<>();
  /**
   * Every sequence loaded here, kept after unloads: its definition (immutable) and the highest floor it
   * knows, so that what a response says of a sequence, and the floor a range is checked against before it
   * is sent, never depend on whether the sequence is loaded at that moment.
   */
  private final ConcurrentMap<String, KnownSequence> known = new ConcurrentHashMap<>();
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

  Runtimes(RangeStore store, StripePool.Settings poolSettings, StrictOwner.Identity identity, Ticker ticker,
      long unloadIdleAfterNanos, ClientLeases clientLeases) {
    this.store = store;
    this.poolSettings = poolSettings;
    this.identity = identity;
    this.ticker = ticker;
    this.unloadIdleAfterNanos = unloadIdleAfterNanos;
    this.clientLeases = clientLeases;
    this.lastUnloadNanos = ticker.nanos();
    if (unloadIdleAfterNanos > 0) {
      long period = Math.max(TimeUnit.SECONDS.toNanos(1), Math.min(TimeUnit.MINUTES.toNanos(1), unloadIdleAfterNanos / 4));
      sweeper = Executors.newSingleThreadScheduledExecutor(Allocator.daemonThreads("idgen-unload-idle-"));
      // The task catches its own failures; stopSweeps() ends it.
      Future<?> unused = sweeper.scheduleWithFixedDelay(this::unloadIdleQuietly, period, period, TimeUnit.NANOSECONDS);
    } else {
      sweeper = null;
    }
  }

  /** The loaded runtime of a sequence, or null: no store I/O (the hot path). */
  @Nullable
  SequenceRuntime get(@Nullable String name) {
    return name == null ? null : sequences.get(name);
  }

  Collection<SequenceRuntime> loaded() {
    return sequences.values();
  }

  boolean isLoaded(String name) {
    return sequences.containsKey(name);
  }

  @Nullable
  KnownSequence known(@Nullable String name) {
    return name == null ? null : known.get(name);
  }

  /** A copy of the counters of the pools of unloaded sequences. */
  PoolTotals retired() {
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
  SequenceRuntime load(String name) {
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
    KnownSequence k = known.computeIfAbsent(name, n -> new KnownSequence(stored.definition()));
    k.redefine(stored.definition());
    k.raise(store.floor(stored.definition()));
    // Nothing handed out from it yet; an earlier runtime of it handed out before it was unloaded.
    SequenceRuntime created = new SequenceRuntime(stored, k, store, poolSettings, identity, ticker, lastUnloadNanos);
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
      // Where changes are decided: gone (purged), deleted, or the new definition, which the next load reads.
      StoredSequence current = store.findCurrent(name).orElseThrow(() -> notFound(name));
      if (current.deleted()) {
        throw new SequenceDeletedException(current);
      }
      return load(name);
    }
    if (raced != null) {
      return raced;
    }
    if (closed) {
      closePools(created); // closeAll() may have missed it; pools of a closed allocator never refill
    }
    return created;
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
  StoredSequence stored(String name) {
    SequenceDefinition.checkName(name);
    return store.findStored(name).orElseThrow(() -> notFound(name));
  }

  private static SequenceNotFoundException notFound(String name) {
    return new SequenceNotFoundException("sequence '" + name
        + "' does not exist (sequences are created explicitly with CreateSequence)");
  }

  /**
   * The sequence's definition changed in the store (an update, a delete, an undelete): reads it again
   * ({@link RangeStore#findCurrent}) and, when the runtime loaded here was made from another one, unloads it
   * as an idle sweep does: out of the map first (the next call loads the new definition, or finds the sequence
   * deleted), then its pools are closed and what they hold goes back to the store. So a raised max serves at
   * once on a sequence that had reached the old one, and a deleted sequence holds no reserve here. A call that
   * was inside the old runtime keeps what it took (IDs of the old definition are IDs of the new one: a change
   * never moves a position's ID). Throws what the store throws; the floor sync then applies it again.
   */
  void redefine(String name) {
    java.util.Optional<StoredSequence> stored = store.findCurrent(name);
    SequenceRuntime rt;
    synchronized (lockOf(name)) { // see load(): a load in flight either sees the record or is seen here
      stored.ifPresent(s -> changedTo.merge(name, s.version(), Math::max));
      rt = sequences.get(name);
    }
    KnownSequence k = known.get(name);
    if (k != null && stored.isPresent()) {
      k.redefine(stored.get().definition());
    }
    if (rt == null || (stored.isPresent() && !stored.get().deleted() && stored.get().definition().equals(rt.definition))) {
      return;
    }
    log.info("sequence '{}' {}: this server gives back its reserve of the old definition", name,
        stored.isEmpty() ? "no longer exists" : stored.get().deleted() ? "was deleted" : "was changed");
    unload(rt);
  }

  /** Unloads one runtime (see {@link #unloadIdle}); false if another thread unloaded it first. */
  private boolean unload(SequenceRuntime rt) {
    // Out of the map, but a call inside it may still take IDs until its pools are closed: floors raised
    // meanwhile reach it through unloading, and leasesUntil counts it as handing out now.
    unloading.add(rt);
    if (!sequences.remove(rt.definition.name(), rt)) {
      unloading.remove(rt);
      return false;
    }
    try {
      closeAndGiveBack(rt);
    } finally {
      lastUnloadNanos = ticker.nanos(); // its pools are closed: nothing handed out from it after this
      unloading.remove(rt);
    }
    PoolTotals t = rt.totals();
    synchronized (retired) {
      retired.add(t);
    }
    return true;
  }

  /**
   * Applies a floor to everything of the sequence here: what is known of it, its runtime, and a runtime
   * still closing after an idle unload (a call inside it takes nothing at or below the floor). Returns
   * {@link #leasesUntil} of it.
   */
  long applyFloor(String sequence, long floor) {
    KnownSequence k = known.get(sequence);
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
   * Reads the definition and the floor of every loaded sequence from the store again (this server's place in
   * the floor log is gone) and applies them. Returns the latest {@link #leasesUntil} of them all.
   */
  long reloadFloors() {
    long until = leasesUntil(null);
    // The log entries that were missed may have been definition changes too.
    for (SequenceRuntime rt : List.copyOf(sequences.values())) {
      redefine(rt.definition.name());
    }
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
  long leasesUntil(@Nullable SequenceRuntime rt) {
    if (!clientLeases.enabled()) {
      return Long.MIN_VALUE;
    }
    long now = ticker.nanos();
    long since = rt != null ? rt.lastHandedOut(now) : lastUnloadNanos;
    if (!unloading.isEmpty()) {
      since = now; // an earlier runtime of it may still hand out until its pools close
    }
    long until = since + clientLeases.heldNanos();
    return until - now > 0 ? until : Long.MIN_VALUE;
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
  int unloadIdle() {
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
  void stopSweeps() {
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
  long closeAll(long giveBackNanos) {
    closed = true;
    long leases = leasesUntil(null);
    for (SequenceRuntime rt : sequences.values()) {
      leases = later(leases, leasesUntil(rt));
    }
    new ShutdownGiveBack(store, ticker, giveBackNanos).run(List.copyOf(sequences.values()));
    return leases;
  }

  /** Closes a runtime's pools (none hands out an ID any more), then gives what they held back to the store. */
  private void closeAndGiveBack(SequenceRuntime rt) {
    rt.unloaded = true;
    if (rt.owner != null) {
      rt.owner.release(); // nothing goes back to a strict pool: what it held is a counted gap
      return;
    }
    List<List<IdRange>> taken = new ArrayList<>(rt.pools.length);
    for (StripePool pool : rt.pools) {
      // All first: a call inside the sequence then fails over to a new runtime at once.
      taken.add(new ArrayList<>(pool.closeAndTake()));
    }
    for (int k = 0; k < rt.pools.length; k++) {
      List<IdRange> held = taken.get(k);
      held.addAll(rt.pools[k].awaitLate(LATE_REFILL_WAIT_NANOS)); // a refill in flight lands after the close
      if (held.isEmpty()) {
        continue;
      }
      held.sort(java.util.Comparator.comparingLong(IdRange::first));
      try {
        rt.pools[k].returned(store.giveBack(rt.definition, k, held));
      } catch (RuntimeException e) {
        log.warn("could not give back the reserve of sequence '{}' stripe {} ({} IDs, now a gap): {}",
            rt.definition.name(), k, IdRange.total(held), e.toString());
      }
    }
  }
}
