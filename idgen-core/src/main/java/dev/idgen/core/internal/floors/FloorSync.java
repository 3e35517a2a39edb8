package dev.idgen.core.internal.floors;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.core.AdvanceNotConfirmedException;
import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.Confirmations;
import dev.idgen.core.FloorLog;
import dev.idgen.core.RangeStore;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.Ticker;
import dev.idgen.core.WallClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one allocator in step with the floors that {@code AdvanceSequence} sets anywhere, and makes an
 * advance wait until every live server has confirmed it.
 *
 * <p>Every floor-refresh interval a {@link #cycle} reads the datacenter's floor log (one read, whatever
 * the number of sequences), drops cached IDs at or below the new floors, reads again the definitions that
 * changed ({@link FloorLog#DEFINITION_CHANGED}: an update, a delete), then announces "alive, applied up to
 * version v" with a lease; a definition change it could not read where changes are decided (or that showed an
 * older version than the entry's) holds v below that entry, and is read again every cycle until it is applied.
 * An advance records its floor in every datacenter's log and returns only when
 * every live announcement shows that version ({@link #confirm}); a definition change waits for those
 * confirmations as an advance does, and counts a server gone by its heartbeat the same way. A server
 * that cannot renew its announcement — store cut off, stalled poller, paused JVM — stops handing out IDs
 * before its lease ends ({@link #serving}), so that an announcement that expired means a server that no
 * longer serves: the advance may then complete without it. Availability above the floor is kept: a server cut off from
 * the store keeps serving its reserve until {@code lease - margin}; it is the advance that waits or says
 * who has not confirmed.
 *
 * <p>The fence is measured from the start of the cycle whose announcement succeeded, on this process's
 * monotonic clock and on its wall clock both (a VM suspended meanwhile shows the freeze in one only). An
 * advance counts a server that has not confirmed as gone only once its announcement's heartbeat (it changes
 * with every renewal) has stayed the same for that server's whole lease, timed on the advancing process's
 * monotonic clock from the end of the first read that showed it ({@link #stillServing}); the announcement was
 * written before that read ended, so the server has stopped by then, with {@code lease / 4} to spare for clock
 * rates, client leases, and a pause between the fence check and the socket write. No clock of the store is
 * involved: the store keeps announcements for {@value #KEPT_LEASES} leases, only to drop those of servers
 * gone for good, so that a store node's clock would have to run ahead of another's by more than two leases to
 * hide a live server's announcement. Stores without heartbeats drop an announcement after one lease, and an
 * announcement that is gone means a server that is gone, as before (the embedded store: one machine's clock).
 *
 * <p>Each announcement also says how long client leases may still hold IDs below the floors this server
 * applied ({@link Floors#raise} returns when they expire; the most distant is kept): an advance waits for
 * the longest such time among the servers that confirmed it, not a whole lease lifetime whatever was handed
 * out ({@link #confirm}). A graceful stop leaves that time behind it in the store ({@link #withdraw}), and a
 * new incarnation starts with a full lifetime of its own, since it cannot know what an earlier one handed out.
 *
 * <p>Threads: {@link #cycle} is serialized ({@code this}); {@link #serving} is a volatile read on the
 * request path; {@link #confirm} runs on the threads of concurrent advances, which share the heartbeats seen
 * so far under the map's own lock.
 */
@ThreadSafe
public final class FloorSync {
  private static final Logger log = LoggerFactory.getLogger(FloorSync.class);
  private static final long CONFIRM_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  /** For how many leases a store that records heartbeats keeps an announcement (its TTL on Cassandra). */
  static final int KEPT_LEASES = 3;

  /**
   * What the allocator does with floors: raise one sequence's, or re-read all it holds. Each returns until
   * when (ticker nanos) client leases this server handed out for those sequences may still be used;
   * {@link Long#MIN_VALUE}: none.
   */
  public interface Floors {
    long raise(String sequence, long floor);

    long reloadAll();

    /**
     * The sequence's definition changed in the store to {@code version} ({@link FloorLog#DEFINITION_CHANGED};
     * 0: not said): read it where changes are decided and drop what is held under the old one, before this
     * server confirms the log version.
     *
     * @throws StoreUnavailableException if that read fails or shows an older version: the change is not
     *     applied, and this server confirms nothing from that entry on until it is (the cycle tries again)
     */
    void redefine(String sequence, long version);

    /** {@link #redefine} of every sequence held (the log's entries since the last read are gone). */
    void redefineAll();
  }

  /** Until when this server may serve, on both clocks; replaced whole, so one volatile read sees both. */
  private record Until(long nanos, long millis) {}

  /**
   * A heartbeat an advance read, since when (ticker nanos, after the first read that showed it), and whether
   * the server was reported gone (logged once).
   */
  private record Seen(String beat, long since, boolean gone) {}

  private final RangeStore store;
  private final Floors floors;
  private final Ticker ticker;
  private final WallClock wall;
  private final String server;
  private final UUID incarnation = UUID.randomUUID();
  private final Duration lease;
  private final long servingNanos;
  private final boolean enabled;
  /** A seam for tests: runs at the start of every cycle (a stalled poller). */
  public volatile Runnable beforeCycle = () -> {};

  @GuardedBy("this") private long applied;
  /** The log version {@link #notApplied} last warned of (-1: a re-read of everything); 0: none. */
  @GuardedBy("this") private long notAppliedLogged;
  /** Until when (ticker nanos) client leases of the floors applied so far may be used: announced. */
  @GuardedBy("this") private long leasesUntil;
  /** Until when this server may hand out IDs; meaningful only when enabled. */
  private volatile Until servingUntil;
  private volatile boolean fencedLogged;
  /**
   * When (ticker nanos) the poller last warned that this server does not serve; while it does not, each cycle's
   * failure is logged again at most every {@link #FENCED_LOG_NANOS}, so that a server that stays fenced keeps
   * saying why.
   */
  private volatile long fencedLoggedAt;
  private static final long FENCED_LOG_NANOS = TimeUnit.SECONDS.toNanos(30);
  /** Whether a cycle ever succeeded: before, the fence is the start, not a lost store. */
  private volatile boolean everServed;
  /**
   * The other servers' heartbeats as the last advance read them, by {@code datacenter/name}: kept between
   * advances, so that an advance retried after {@link AdvanceNotConfirmedException} goes on counting.
   */
  @GuardedBy("seen") private final Map<String, Seen> seen = new HashMap<>();
  /** The datacenters whose heartbeats {@link #observe} reads: this one's, and those advances covered. */
  private final Set<String> observed = ConcurrentHashMap.newKeySet();
  /** When (ticker nanos) {@link #observe} last read the heartbeats; {@link Long#MIN_VALUE}: never. */
  private volatile long observedAt = Long.MIN_VALUE;

  /**
   * @param leasesUntil until when (ticker nanos) client leases handed out before this process started may be
   *     used, as far as it can tell (an earlier incarnation's): the starting point of what it announces
   */
  public FloorSync(RangeStore store, Floors floors, Ticker ticker, WallClock wall, String server, Duration lease,
      long leasesUntil) {
    this.store = store;
    this.floors = floors;
    this.ticker = ticker;
    this.wall = wall;
    this.leasesUntil = leasesUntil;
    this.server = server;
    this.lease = lease;
    // Stop serving a quarter of the lease early: the announcement must expire after we stop.
    this.servingNanos = lease.toNanos() - lease.toNanos() / 4;
    this.enabled = store.floorRefreshInterval().toNanos() > 0;
    this.servingUntil = new Until(ticker.nanos(), Long.MIN_VALUE); // not serving until the first cycle succeeds
    if (enabled) {
      observed.add(store.datacenter());
    }
  }

  public boolean enabled() {
    return enabled;
  }

  String server() {
    return server;
  }

  /** Whether this server may hand out IDs now. One volatile read and two clock reads. */
  public boolean serving() {
    if (!enabled) {
      return true;
    }
    Until until = servingUntil;
    return ticker.nanos() - until.nanos < 0 && wall.millis() < until.millis;
  }

  /** Why {@link #serving} is false, for the caller's error. */
  public String fencedReason() {
    if (!everServed) {
      return "server " + server + " has not reached the store yet to confirm floors: it hands out no IDs"
          + " until it does, so that an AdvanceSequence elsewhere never overlaps what it holds";
    }
    return "server " + server + " has not reached the store to confirm floors for longer than its"
        + " serving lease (" + lease + " less a margin): it hands out no IDs until it does, so that an"
        + " AdvanceSequence elsewhere never overlaps what it holds";
  }

  /**
   * Reads the floor log, applies it, and renews the announcement. Throws what the store throws; then
   * nothing is renewed and the fence comes closer.
   */
  synchronized void cycle() {
    if (!enabled) {
      return;
    }
    long start = ticker.nanos();
    long startMillis = wall.millis();
    beforeCycle.run();
    FloorLog floorLog = store.floorLog(applied);
    // The version this cycle confirms: below the first change it could not read. The floors after it are
    // applied all the same (they only rise), and the next cycle reads the log again from there.
    long confirmed = floorLog.version();
    if (!floorLog.complete()) {
      log.info("the floor log moved past version {} since this server last read it: re-reading the floor"
          + " of every sequence it holds", applied);
      try {
        floors.redefineAll();
      } catch (StoreUnavailableException e) {
        confirmed = applied;
        notApplied(-1, "the definitions of the sequences it holds", e);
      }
      leasesUntil = later(leasesUntil, floors.reloadAll());
    } else {
      for (FloorLog.Change c : floorLog.changes()) {
        if (!c.definitionChanged()) {
          leasesUntil = later(leasesUntil, floors.raise(c.sequence(), c.floor()));
          continue;
        }
        try {
          floors.redefine(c.sequence(), c.definitionVersion());
        } catch (StoreUnavailableException e) {
          if (confirmed >= c.version()) {
            confirmed = c.version() - 1;
            notApplied(c.version(), "the change of sequence '" + c.sequence() + "'", e);
          }
        }
      }
    }
    store.announce(server, incarnation, confirmed, lease, lease.multipliedBy(KEPT_LEASES),
        outstanding(leasesUntil));
    applied = confirmed;
    servingUntil = new Until(start + servingNanos, startMillis + servingNanos / 1_000_000);
    everServed = true;
    if (fencedLogged) {
      fencedLogged = false;
      log.info("server {} reached the store again and serves IDs", server);
    }
  }

  /**
   * Says, once per log version (then at DEBUG), that this server could not read a change and so does not
   * confirm it: it keeps serving what it holds, and the change's call reports this server as not confirmed.
   */
  @GuardedBy("this")
  private void notApplied(long version, String what, StoreUnavailableException e) {
    if (version != notAppliedLogged) {
      notAppliedLogged = version;
      log.warn("server {} could not read {} where changes are decided, and does not confirm floor-log version {}"
          + " until it does (it retries every cycle, and serves the definition it holds meanwhile): {}", server,
          what, version < 0 ? "beyond " + applied : version, e.getMessage());
    } else {
      log.debug("server {} still cannot read {}: {}", server, what, e.getMessage());
    }
  }

  /** {@link #cycle}, logging instead of throwing: for the background poller. */
  public void cycleQuietly() {
    try {
      cycle();
    } catch (RuntimeException e) {
      long now = ticker.nanos();
      if (!serving() && (!fencedLogged || now - fencedLoggedAt >= FENCED_LOG_NANOS)) {
        log.warn("{}; last error: {}", fencedReason(), e.toString());
        fencedLogged = true;
        fencedLoggedAt = now;
      } else {
        log.debug("floor sync failed: {}", e.toString());
      }
    }
  }

  /**
   * Waits until every live server has confirmed the receipt: this server at once (it runs a cycle), the
   * others through their announcements. Returns until when (ticker nanos) client leases that the confirming
   * servers handed out may still hold IDs below the floor: {@link Long#MIN_VALUE} if none can, and
   * {@code fallbackNanos} after the read if some server did not say.
   *
   * @throws AdvanceNotConfirmedException if some have not confirmed by {@code deadlineNanos}
   */
  public long confirm(AdvanceReceipt receipt, String sequence, long floor, long deadlineNanos, long fallbackNanos) {
    return confirm(receipt, deadlineNanos, fallbackNanos,
        pending -> new AdvanceNotConfirmedException(sequence, floor, pending, lease.toString()));
  }

  /**
   * {@link #confirm(AdvanceReceipt, String, long, long, long)} of a receipt of any change the floor log carries
   * (a definition change too), failing with what {@code notConfirmed} makes of the servers still pending.
   */
  public long confirm(AdvanceReceipt receipt, long deadlineNanos, long fallbackNanos,
      java.util.function.Function<List<String>, ? extends RuntimeException> notConfirmed) {
    if (!enabled || receipt.versions().isEmpty()) {
      return Long.MIN_VALUE;
    }
    cycleQuietly();
    observed.addAll(receipt.versions().keySet());
    for (;;) {
      Confirmations read;
      Set<String> covered = receipt.versions().keySet();
      try {
        read = store.confirmations(receipt);
      } catch (StoreUnavailableException e) {
        read = new Confirmations(List.of("(could not read the servers' announcements: " + e.getMessage() + ")"),
            java.util.Optional.empty());
        covered = Set.of(); // a failed read forgets no heartbeat
      }
      // After the read: an announcement is never written after the read that returned it.
      long readAt = ticker.nanos();
      List<String> pending = stillServing(read, readAt, covered);
      if (pending.isEmpty()) {
        // The leases of servers counted as gone are not in leasesOutstanding (only confirming servers' are),
        // and ended with their lease: they stopped serving a quarter lease before.
        return read.leasesOutstanding()
            .map(d -> d.isZero() ? Long.MIN_VALUE : readAt + d.toNanos())
            .orElse(readAt + fallbackNanos);
      }
      if (readAt - deadlineNanos >= 0) {
        throw notConfirmed.apply(pending);
      }
      try {
        TimeUnit.NANOSECONDS.sleep(CONFIRM_POLL_NANOS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw notConfirmed.apply(pending);
      }
    }
  }

  /**
   * The pending servers of {@code read} that may still serve: all but those whose heartbeat this process has
   * seen unchanged for their whole lease, counted from {@code readAt} of the first read that showed it. That
   * read ended after the announcement was written, which was after the start of its cycle, from which the
   * server serves for at most three quarters of its lease unless it renews (and a renewal changes the
   * heartbeat). Remembers the heartbeats of this read, and forgets those of servers of {@code datacenters}
   * (those the read covered) that it no longer lists.
   */
  List<String> stillServing(Confirmations read, long readAt, Set<String> datacenters) {
    List<String> serving = new ArrayList<>();
    synchronized (seen) {
      read.heartbeats().forEach((name, hb) -> {
        Seen was = seen.get(name);
        if (was == null || !was.beat().equals(hb.beat())) {
          seen.put(name, new Seen(hb.beat(), readAt, false));
        }
      });
      seen.keySet().removeIf(name -> !read.heartbeats().containsKey(name)
          && datacenters.contains(name.substring(0, Math.max(0, name.indexOf('/')))));
      for (String name : read.pending()) {
        Confirmations.Heartbeat hb = read.heartbeats().get(name);
        Seen was = hb == null ? null : seen.get(name);
        if (was != null && readAt - was.since() - hb.lease().toNanos() >= 0) {
          if (!was.gone()) {
            seen.put(name, new Seen(was.beat(), was.since(), true));
            log.info("server {} has not renewed its announcement for its whole lease ({}): it no longer serves,"
                + " and advances do not wait for it", name, hb.lease());
          }
        } else {
          serving.add(name);
        }
      }
    }
    return serving;
  }

  /**
   * Reads the announcements' heartbeats every eighth of a lease, as an advance does but waiting for nothing,
   * so that an advance that finds a crashed server's announcement has been counting since about the crash
   * rather than from its own first read: it then waits about one lease from the crash, as when a TTL decided.
   * Covers this datacenter and every datacenter an advance through this server covered. Best effort: a failed
   * read is tried again at the next call. Runs on a thread of its own ({@link FloorPoller}): a slow read of a
   * remote datacenter must not delay the cycles that keep this server serving.
   */
  public void observe() {
    if (!enabled) {
      return;
    }
    long now = ticker.nanos();
    if (observedAt != Long.MIN_VALUE && now - observedAt < lease.toNanos() / 8) {
      return;
    }
    Map<String, Long> versions = new HashMap<>();
    for (String dc : observed) {
      versions.put(dc, 0L); // every server has applied version 0: nothing pending, only the heartbeats
    }
    try {
      Confirmations read = store.confirmations(new AdvanceReceipt(versions));
      long readAt = ticker.nanos();
      observedAt = readAt;
      stillServing(read, readAt, versions.keySet());
    } catch (RuntimeException e) {
      log.debug("could not read the servers' heartbeats: {}", e.toString());
    }
  }

  /** How long from now until {@code untilNanos}, never negative. */
  private Duration outstanding(long untilNanos) {
    return untilNanos == Long.MIN_VALUE ? Duration.ZERO : Duration.ofNanos(Math.max(0, untilNanos - ticker.nanos()));
  }

  private static long later(long a, long b) {
    return a == Long.MIN_VALUE ? b : b == Long.MIN_VALUE ? a : (b - a > 0 ? b : a);
  }

  /**
   * Withdraws the announcement (graceful stop); best effort. While client leases it handed out may still be
   * used ({@code leasesUntil}, ticker nanos, with what was announced before), it leaves an announcement that
   * confirms every floor and says so, expiring with them: an advance right after this stop still waits for
   * them.
   */
  public synchronized void withdraw(long leasesUntilNanos) {
    if (!enabled) {
      return;
    }
    try {
      Duration left = outstanding(later(leasesUntil, leasesUntilNanos));
      if (left.isZero()) {
        store.withdraw(server, incarnation);
      } else {
        // Confirms every floor, so never waited for: kept only while its leases may be used.
        store.announce(server, incarnation, Long.MAX_VALUE, left.plusSeconds(1), left.plusSeconds(1), left);
      }
    } catch (RuntimeException e) {
      log.debug("could not withdraw the announcement of {}: {}", server, e.toString());
    }
  }
}
