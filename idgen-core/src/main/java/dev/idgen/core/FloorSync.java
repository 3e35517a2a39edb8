package dev.idgen.core;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
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
 * version v" with a lease; a definition change waits for those confirmations as an advance does. An advance records its floor in every datacenter's log and returns only
 * when every live announcement shows that version ({@link #confirm}). A server that cannot renew its
 * announcement — store cut off, stalled poller, paused JVM — stops handing out IDs before its lease
 * ends ({@link #serving}), so that an announcement that expired means a server that no longer serves:
 * the advance may then complete without it. Availability above the floor is kept: a server cut off from
 * the store keeps serving its reserve until {@code lease - margin}; it is the advance that waits or says
 * who has not confirmed.
 *
 * <p>The fence is measured from the start of the cycle whose announcement succeeded, on this process's
 * monotonic clock and on its wall clock both (a VM suspended meanwhile shows the freeze in one only), and the
 * store expires the announcement {@code lease} after it received it, so the server stops first, with
 * {@code margin} to spare for clock rates and for a pause between the fence check and the socket write.
 *
 * <p>Each announcement also says how long client leases may still hold IDs below the floors this server
 * applied ({@link Floors#raise} returns when they expire; the most distant is kept): an advance waits for
 * the longest such time among the servers that confirmed it, not a whole lease lifetime whatever was handed
 * out ({@link #confirm}). A graceful stop leaves that time behind it in the store ({@link #withdraw}), and a
 * new incarnation starts with a full lifetime of its own, since it cannot know what an earlier one handed out.
 *
 * <p>Threads: {@link #cycle} is serialized ({@code this}); {@link #serving} is a volatile read on the
 * request path.
 */
@ThreadSafe
final class FloorSync {
  private static final Logger log = LoggerFactory.getLogger(FloorSync.class);
  private static final long CONFIRM_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  /**
   * What the allocator does with floors: raise one sequence's, or re-read all it holds. Each returns until
   * when (ticker nanos) client leases this server handed out for those sequences may still be used;
   * {@link Long#MIN_VALUE}: none.
   */
  interface Floors {
    long raise(String sequence, long floor);

    long reloadAll();

    /**
     * The sequence's definition changed in the store ({@link FloorLog#DEFINITION_CHANGED}): read it again and
     * drop what is held under the old one, before this server confirms the log version. Throws what the store
     * throws (the cycle then fails and applies the entry again next time).
     */
    void redefine(String sequence);
  }

  /** Until when this server may serve, on both clocks; replaced whole, so one volatile read sees both. */
  private record Until(long nanos, long millis) {}

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
  volatile Runnable beforeCycle = () -> {};

  @GuardedBy("this") private long applied;
  /** Until when (ticker nanos) client leases of the floors applied so far may be used: announced. */
  @GuardedBy("this") private long leasesUntil;
  /** Until when this server may hand out IDs; meaningful only when enabled. */
  private volatile Until servingUntil;
  private volatile boolean fencedLogged;
  /** Whether a cycle ever succeeded: before, the fence is the start, not a lost store. */
  private volatile boolean everServed;

  /**
   * @param leasesUntil until when (ticker nanos) client leases handed out before this process started may be
   *     used, as far as it can tell (an earlier incarnation's): the starting point of what it announces
   */
  FloorSync(RangeStore store, Floors floors, Ticker ticker, WallClock wall, String server, Duration lease,
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
  }

  boolean enabled() {
    return enabled;
  }

  String server() {
    return server;
  }

  /** Whether this server may hand out IDs now. One volatile read and two clock reads. */
  boolean serving() {
    if (!enabled) {
      return true;
    }
    Until until = servingUntil;
    return ticker.nanos() - until.nanos < 0 && wall.millis() < until.millis;
  }

  /** Why {@link #serving} is false, for the caller's error. */
  String fencedReason() {
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
    if (!floorLog.complete()) {
      log.info("the floor log moved past version {} since this server last read it: re-reading the floor"
          + " of every sequence it holds", applied);
      leasesUntil = later(leasesUntil, floors.reloadAll());
    } else {
      for (FloorLog.Change c : floorLog.changes()) {
        if (c.definitionChanged()) {
          floors.redefine(c.sequence());
        } else {
          leasesUntil = later(leasesUntil, floors.raise(c.sequence(), c.floor()));
        }
      }
    }
    store.announce(server, incarnation, floorLog.version(), lease, outstanding(leasesUntil));
    applied = floorLog.version();
    servingUntil = new Until(start + servingNanos, startMillis + servingNanos / 1_000_000);
    everServed = true;
    if (fencedLogged) {
      fencedLogged = false;
      log.info("server {} reached the store again and serves IDs", server);
    }
  }

  /** {@link #cycle}, logging instead of throwing: for the background poller. */
  void cycleQuietly() {
    try {
      cycle();
    } catch (RuntimeException e) {
      if (!serving() && !fencedLogged) {
        fencedLogged = true;
        log.warn("{}; last error: {}", fencedReason(), e.toString());
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
  long confirm(AdvanceReceipt receipt, String sequence, long floor, long deadlineNanos, long fallbackNanos) {
    return confirm(receipt, deadlineNanos, fallbackNanos,
        pending -> new AdvanceNotConfirmedException(sequence, floor, pending, lease.toString()));
  }

  /**
   * {@link #confirm(AdvanceReceipt, String, long, long, long)} of a receipt of any change the floor log carries
   * (a definition change too), failing with what {@code notConfirmed} makes of the servers still pending.
   */
  long confirm(AdvanceReceipt receipt, long deadlineNanos, long fallbackNanos,
      java.util.function.Function<List<String>, ? extends RuntimeException> notConfirmed) {
    if (!enabled || receipt.versions().isEmpty()) {
      return Long.MIN_VALUE;
    }
    cycleQuietly();
    for (;;) {
      Confirmations read;
      try {
        read = store.confirmations(receipt);
      } catch (StoreUnavailableException e) {
        read = new Confirmations(List.of("(could not read the servers' announcements: " + e.getMessage() + ")"),
            java.util.Optional.empty());
      }
      // After the read: an announcement is never written after the read that returned it.
      long readAt = ticker.nanos();
      if (read.pending().isEmpty()) {
        return read.leasesOutstanding()
            .map(d -> d.isZero() ? Long.MIN_VALUE : readAt + d.toNanos())
            .orElse(readAt + fallbackNanos);
      }
      if (readAt - deadlineNanos >= 0) {
        throw notConfirmed.apply(read.pending());
      }
      try {
        TimeUnit.NANOSECONDS.sleep(CONFIRM_POLL_NANOS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw notConfirmed.apply(read.pending());
      }
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
  synchronized void withdraw(long leasesUntilNanos) {
    if (!enabled) {
      return;
    }
    try {
      Duration left = outstanding(later(leasesUntil, leasesUntilNanos));
      if (left.isZero()) {
        store.withdraw(server, incarnation);
      } else {
        store.announce(server, incarnation, Long.MAX_VALUE, left.plusSeconds(1), left);
      }
    } catch (RuntimeException e) {
      log.debug("could not withdraw the announcement of {}: {}", server, e.toString());
    }
  }
}
