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
 * the number of sequences), drops cached IDs at or below the new floors, then announces "alive, applied
 * up to version v" with a lease. An advance records its floor in every datacenter's log and returns only
 * when every live announcement shows that version ({@link #confirm}). A server that cannot renew its
 * announcement — store cut off, stalled poller, paused JVM — stops handing out IDs before its lease
 * ends ({@link #serving}), so that an announcement that expired means a server that no longer serves:
 * the advance may then complete without it. Availability above the floor is kept: a server cut off from
 * the store keeps serving its reserve until {@code lease - margin}; it is the advance that waits or says
 * who has not confirmed.
 *
 * <p>The fence is measured on this process's monotonic clock from the start of the cycle whose
 * announcement succeeded, and the store expires the announcement {@code lease} after it received it, so
 * the server stops first, with {@code margin} to spare for clock rates and for a pause between the
 * fence check and the socket write.
 *
 * <p>Threads: {@link #cycle} is serialized ({@code this}); {@link #serving} is a volatile read on the
 * request path.
 */
@ThreadSafe
final class FloorSync {
  private static final Logger log = LoggerFactory.getLogger(FloorSync.class);
  private static final long CONFIRM_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  /** What the allocator does with floors: raise one sequence's, or re-read all it holds. */
  interface Floors {
    void raise(String sequence, long floor);

    void reloadAll();
  }

  private final RangeStore store;
  private final Floors floors;
  private final Ticker ticker;
  private final String server;
  private final UUID incarnation = UUID.randomUUID();
  private final Duration lease;
  private final long servingNanos;
  private final boolean enabled;
  /** A seam for tests: runs at the start of every cycle (a stalled poller). */
  volatile Runnable beforeCycle = () -> {};

  @GuardedBy("this") private long applied;
  /** Until when (ticker nanos) this server may hand out IDs; meaningful only when enabled. */
  private volatile long servingUntil;
  private volatile boolean fencedLogged;
  /** Whether a cycle ever succeeded: before, the fence is the start, not a lost store. */
  private volatile boolean everServed;

  FloorSync(RangeStore store, Floors floors, Ticker ticker, String server, Duration lease) {
    this.store = store;
    this.floors = floors;
    this.ticker = ticker;
    this.server = server;
    this.lease = lease;
    // Stop serving a quarter of the lease early: the announcement must expire after we stop.
    this.servingNanos = lease.toNanos() - lease.toNanos() / 4;
    this.enabled = store.floorRefreshInterval().toNanos() > 0;
    this.servingUntil = ticker.nanos(); // not serving until the first cycle succeeds
  }

  boolean enabled() {
    return enabled;
  }

  String server() {
    return server;
  }

  /** Whether this server may hand out IDs now. One volatile read and a clock read. */
  boolean serving() {
    return !enabled || ticker.nanos() - servingUntil < 0;
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
    beforeCycle.run();
    FloorLog floorLog = store.floorLog(applied);
    if (!floorLog.complete()) {
      log.info("the floor log moved past version {} since this server last read it: re-reading the floor"
          + " of every sequence it holds", applied);
      floors.reloadAll();
    } else {
      for (FloorLog.Change c : floorLog.changes()) {
        floors.raise(c.sequence(), c.floor());
      }
    }
    store.announce(server, incarnation, floorLog.version(), lease);
    applied = floorLog.version();
    servingUntil = start + servingNanos;
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
   * others through their announcements.
   *
   * @throws AdvanceNotConfirmedException if some have not confirmed by {@code deadlineNanos}
   */
  void confirm(AdvanceReceipt receipt, String sequence, long floor, long deadlineNanos) {
    if (!enabled || receipt.versions().isEmpty()) {
      return;
    }
    cycleQuietly();
    for (;;) {
      List<String> pending;
      try {
        pending = store.unconfirmed(receipt);
      } catch (StoreUnavailableException e) {
        pending = List.of("(could not read the servers' announcements: " + e.getMessage() + ")");
      }
      if (pending.isEmpty()) {
        return;
      }
      if (ticker.nanos() - deadlineNanos >= 0) {
        throw new AdvanceNotConfirmedException(sequence, floor, pending, lease.toString());
      }
      try {
        TimeUnit.NANOSECONDS.sleep(CONFIRM_POLL_NANOS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AdvanceNotConfirmedException(sequence, floor, pending, lease.toString());
      }
    }
  }

  /** Withdraws the announcement (graceful stop); best effort. */
  void withdraw() {
    if (!enabled) {
      return;
    }
    try {
      store.withdraw(server, incarnation);
    } catch (RuntimeException e) {
      log.debug("could not withdraw the announcement of {}: {}", server, e.toString());
    }
  }
}
