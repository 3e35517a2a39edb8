package dev.idgen.core.internal.strict;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.core.ForwardingRangeStore;
import dev.idgen.core.IdRange;
import dev.idgen.core.NotOwnerException;
import dev.idgen.core.OwnerRecord;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.Ticker;
import dev.idgen.core.WallClock;
import dev.idgen.core.internal.allocation.OwnerLease;
import dev.idgen.core.internal.allocation.StripePool;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This process's part in the ownership of one {@link dev.idgen.core.Ordering#STRICT} sequence: whether it holds the
 * owner lease (and may serve the sequence from its pool), and otherwise which server does.
 *
 * <p>The lease is the sequence's {@link OwnerRecord} in the store. The owner renews it every quarter
 * lease by a compare-and-set that keeps the epoch and changes the version; it serves only until
 * {@code L − margin} after the <em>start</em> of its last successful renewal, on its own monotonic
 * clock and on its wall clock both ({@link WallClock}: a suspended VM's monotonic clock stands still;
 * {@code margin} is {@code idgen.strict.owner-lease-margin}). A server of the home datacenter that sees the
 * row unchanged for a whole lease {@code L}, on its monotonic clock from the <em>end</em> of the read that
 * first showed it, takes over with {@code epoch + 1}:
 * by then the owner's last renewal began more than {@code L} ago, so it stopped serving (clocks need not
 * agree, only drift less than the margin over {@code L}). A row that this process wrote, one an earlier
 * process of this server's name wrote ({@link #ours}), or one its owner released at a graceful stop (empty
 * target), is taken at once.
 *
 * <p>A new lease fences the pool ({@link StripePool#fence}): whatever an earlier lease of this process
 * held is dropped, and the store refuses reservations of lower epochs ({@link RangeStore#reserveStrict}),
 * so the first block of a new owner is above everything any earlier owner could hand out.
 *
 * <p>Threads: {@link #tick} and {@link #ensureServing} run store I/O under this object's monitor (one at a
 * time per sequence; they are rare: every quarter lease, and on calls while no owner is known), on the owner
 * rounds' thread and on workers. What a network thread asks never takes that monitor, so it never waits for a
 * store read: {@link #serving} reads one volatile field; {@link #ownerTarget} and {@link #lastSeen} read the
 * row last read, an immutable {@link Seen} published through a volatile field (written under the monitor);
 * {@link #forgetOwner} only counts a refusal, which a round that read the row before it does not clear.
 */
@ThreadSafe
public final class StrictOwner implements OwnerLease {
  private static final Logger log = LoggerFactory.getLogger(StrictOwner.class);

  /** Who this process is, as owner rows name it, and how long its leases last. */
  public record Identity(String server, UUID incarnation, java.util.function.Supplier<String> targetSupplier,
      Duration lease, Duration margin, WallClock wall) {
    /** The gRPC target other servers forward to; asked for at each claim (the port is bound by then). */
    String target() {
      return targetSupplier.get();
    }

    long leaseNanos() {
      return lease.toNanos();
    }

    /** Served until L minus this after a renewal began: covers clock drift ({@code idgen.strict.owner-lease-margin}). */
    long marginNanos() {
      return margin.toNanos();
    }

    /** The default margin: a tenth of the lease. */
    public static Duration defaultMargin(Duration lease) {
      return lease.dividedBy(10);
    }
  }

  private final SequenceDefinition definition;
  private final RangeStore store;
  private final Ticker ticker;
  private final Identity self;
  private final StripePool pool;
  /** Whether this process is in the sequence's home datacenter, whose servers alone may own it. */
  private final boolean home;
  /** The epoch the pool's reservations carry; 0 while this process holds no lease. */
  private volatile long poolEpoch;
  /** The lease this process holds, or null. */
  private volatile Lease lease;

  /**
   * The owner row as last read (null: none), since when (ticker nanos, after the read) it has not changed, and
   * whether its owner released it at a graceful stop (empty target).
   */
  private record Seen(@Nullable OwnerRecord row, long sinceNanos, boolean released) {}

  /** Written under this object's monitor, read without it: see the class comment. */
  private volatile Seen seen = new Seen(null, 0, false);
  @GuardedBy("this") private boolean read;
  /**
   * Refusals by (or failures to reach) the owner last read ({@link #forgetOwner}), and how many of them the last
   * read of the row began after: while they differ, the row is read again before a call is forwarded anywhere.
   */
  private final AtomicLong refusals = new AtomicLong();
  private volatile long refusalsRead;
  /** When the last round ran (ticker nanos): calls re-read the row at most every {@link #MIN_REREAD_NANOS}. */
  @GuardedBy("this") private long lastTickNanos = Long.MIN_VALUE;
  private static final long MIN_REREAD_NANOS = 50_000_000L;

  /**
   * A lease held: its row as written, and until when this process may serve, on both clocks (ticker nanos,
   * wall-clock millis): a VM suspended while it held the lease finds its monotonic clock barely moved, but
   * its wall clock moved on; a wall clock stepped back is caught by the monotonic one.
   */
  private record Lease(OwnerRecord row, long validUntilNanos, long validUntilMillis) {
    boolean holds(long nanos, long millis) {
      return nanos - validUntilNanos < 0 && millis < validUntilMillis;
    }
  }

  public StrictOwner(SequenceDefinition definition, RangeStore store, Ticker ticker, Identity self,
      StripePool.Settings settings) {
    this.definition = definition;
    this.store = store;
    this.ticker = ticker;
    this.self = self;
    this.home = definition.homeDatacenter().equals(store.datacenter());
    this.pool = new StripePool(definition, 0, new ForwardingRangeStore(store) {
      @Override
      public IdRange reserve(SequenceDefinition d, int stripe, long size) {
        long epoch = poolEpoch;
        if (epoch == 0) {
          throw new NotOwnerException(d.name(), null, Duration.ZERO, "sequence '" + d.name()
              + "': this server holds no owner lease (a strict sequence's pool is refilled by its owner only)");
        }
        return delegate().reserveStrict(d, epoch, size);
      }

      @Override
      public long giveBack(SequenceDefinition d, int stripe, java.util.List<IdRange> ranges) {
        return 0; // never: a strict pool only grows upwards
      }
    }, settings);
  }

  @Override
  public StripePool pool() {
    return pool;
  }

  /** Whether this process holds the lease now: the hot path's check, before it takes from the pool. */
  @Override
  public boolean serving() {
    Lease l = lease;
    return l != null && l.holds(ticker.nanos(), self.wall().millis());
  }

  /**
   * The epoch of the owner lease this process holds now, or 0 when it holds none: what the server's owner
   * gauge shows. One volatile read, like {@link #serving}.
   */
  @Override
  public long servingEpoch() {
    Lease l = lease;
    return l != null && l.holds(ticker.nanos(), self.wall().millis()) ? l.row().epoch() : 0;
  }

  /**
   * Makes sure the call may be served here: claims the sequence when nobody holds it (no row, a released
   * row, or this process's own), otherwise throws {@link NotOwnerException} with the owner to forward to,
   * or none while the owner's lease runs out.
   */
  @Override
  public synchronized void ensureServing() {
    if (serving()) {
      return;
    }
    long now = ticker.nanos();
    Seen s = seen;
    if (!read || s.row() == null || s.released() || ours(s.row())) {
      tick();
      if (!serving() && !read) {
        // The claim lost a race: the row changed between the read and the write (an unload of this sequence
        // releasing its row while a call inside it loads it anew). Read once more and claim what is there now.
        tick();
      }
    } else if (rereadDue() || now - s.sinceNanos() >= self.leaseNanos()) {
      // The owner named refused or could not be reached, or the row says a take-over is due: read it again,
      // at most every 50 ms whatever the call rate (a call waits for the next read rather than fail on the
      // old row: after a graceful stop, that read finds the row released).
      long wait = MIN_REREAD_NANOS - (now - lastTickNanos);
      if (wait > 0) {
        try {
          TimeUnit.NANOSECONDS.timedWait(this, wait);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (ticker.nanos() - lastTickNanos >= MIN_REREAD_NANOS) {
        tick(); // unless another call read it meanwhile
      }
    }
    if (serving()) {
      return;
    }
    throw notOwner();
  }

  @GuardedBy("this")
  private NotOwnerException notOwner() {
    String name = definition.name();
    Seen s = seen;
    OwnerRecord row = s.row();
    if (row != null && !s.released() && !rereadDue() && !ours(row) && !row.target().isEmpty()) {
      long quiet = ticker.nanos() - s.sinceNanos();
      if (quiet < self.leaseNanos()) {
        return new NotOwnerException(name, row.target(), Duration.ZERO, "sequence '" + name
            + "' is owned by " + row.server() + " (" + row.target() + ")");
      }
      // The owner stopped renewing: it is dead or cut off; a take-over follows within a quarter lease.
      return new NotOwnerException(name, null, Duration.ofNanos(self.leaseNanos() / 4), "sequence '" + name
          + "': its owner " + row.server() + " stopped renewing its lease; a server of datacenter "
          + definition.homeDatacenter() + " takes over within about " + self.lease().dividedBy(4).toMillis() + " ms");
    }
    if (!home) {
      return new NotOwnerException(name, null, Duration.ofNanos(self.leaseNanos() / 4), "sequence '" + name
          + "' is owned by a server of datacenter " + definition.homeDatacenter() + ", and none is known to own"
          + " it now (strict sequences are served in their home datacenter only)");
    }
    long left = row == null ? 0 : Math.max(0, self.leaseNanos() - (ticker.nanos() - s.sinceNanos()));
    return new NotOwnerException(name, null, Duration.ofNanos(left + self.leaseNanos() / 4), "sequence '"
        + name + "' has no owner that can serve it now (its owner's lease has not expired yet; the take-over"
        + " is due in about " + Duration.ofNanos(left).toMillis() + " ms)");
  }

  /**
   * The gRPC target of the other server that owns the sequence, as last read; empty if none is known. Never
   * waits for the monitor (a network thread asks).
   */
  @Override
  public Optional<String> ownerTarget() {
    Seen s = seen;
    OwnerRecord row = s.row();
    if (serving() || rereadDue() || row == null || s.released() || ours(row) || row.target().isEmpty()
        || ticker.nanos() - s.sinceNanos() >= self.leaseNanos()) {
      return Optional.empty();
    }
    return Optional.of(row.target());
  }

  /** Whether the owner last read refused a call since the last read of the row began. */
  private boolean rereadDue() {
    return refusals.get() != refusalsRead;
  }

  /**
   * The owner at {@code target} refused a forwarded call or could not be reached: the next call reads the
   * row again (at most every 50 ms) before it forwards anywhere. The take-over clock keeps running: it
   * restarts only when the row changes.
   */
  @Override
  public void forgetOwner(String target) {
    OwnerRecord row = seen.row();
    if (row != null && row.target().equals(target)) {
      refusals.incrementAndGet(); // no monitor: a network thread calls this
    }
  }

  /**
   * One round, every quarter lease: the owner renews; another server of the home datacenter tracks the
   * row and takes over once it has not changed for a lease; a server of another datacenter only reads it.
   */
  @Override
  public synchronized void tick() {
    long refusalsBefore = refusals.get(); // a refusal during the read still asks for another one
    OwnerRecord row;
    try {
      row = store.owner(definition).orElse(null);
    } catch (RuntimeException e) {
      // The lease, if held, runs out by itself (its validity only moves on a successful renewal).
      log.debug("reading the owner of sequence '{}' failed: {}", definition.name(), e.toString());
      return;
    }
    long now = ticker.nanos();
    lastTickNanos = now;
    refusalsRead = refusalsBefore;
    long since = seen.sinceNanos();
    if (!read || !java.util.Objects.equals(row, seen.row())) {
      since = now;
      read = true;
    }
    boolean released = row != null && row.target().isEmpty();
    seen = new Seen(row, since, released);
    Lease held = lease;
    if (held != null) {
      if (row != null && row.isOwnedBy(self.incarnation()) && row.epoch() == held.row().epoch()
          && !row.target().isEmpty()) {
        // Ours (a renewal whose outcome looked unknown may have applied): renew from the row as it is.
        renew(new Lease(row, held.validUntilNanos(), held.validUntilMillis()));
        return;
      }
      drop("its owner row changed (now " + describe(row) + ")");
    }
    if (!home) {
      return;
    }
    boolean free = row == null || released || ours(row);
    if (free || now - since >= self.leaseNanos()) {
      claim(row);
    }
  }

  /**
   * Whether {@code row} was written by this process, or by an earlier process of this server's name. Names
   * are unique among live processes (docs/design.md, "Unique server names"), so that process is gone: a
   * restart takes its sequences over at once, as its first announcement retires the earlier process's rows,
   * instead of forwarding their calls to its own address until the dead process's lease runs out.
   */
  private boolean ours(OwnerRecord row) {
    return row.isOwnedBy(self.incarnation()) || row.server().equals(self.server());
  }

  @GuardedBy("this")
  private void renew(Lease held) {
    OwnerRecord next = new OwnerRecord(self.server(), self.incarnation(), self.target(), held.row().epoch(),
        UUID.randomUUID());
    long start = ticker.nanos();
    long startMillis = self.wall().millis();
    boolean applied;
    try {
      applied = store.replaceOwner(definition, held.row(), next);
    } catch (RuntimeException e) {
      log.warn("renewing the owner lease of sequence '{}' failed (it ends in {} ms unless a renewal succeeds): {}",
          definition.name(), Math.max(0, (held.validUntilNanos() - ticker.nanos()) / 1_000_000), e.toString());
      return;
    }
    if (applied) {
      lease = new Lease(next, start + self.leaseNanos() - self.marginNanos(),
          startMillis + (self.leaseNanos() - self.marginNanos()) / 1_000_000);
      seen = new Seen(next, ticker.nanos(), false);
    }
    // Not applied: the next read says why; the lease meanwhile runs out by itself.
  }

  @GuardedBy("this")
  private void claim(@Nullable OwnerRecord row) {
    long epoch = row == null ? 1 : row.epoch() + 1;
    OwnerRecord next = new OwnerRecord(self.server(), self.incarnation(), self.target(), epoch, UUID.randomUUID());
    long start = ticker.nanos();
    long startMillis = self.wall().millis();
    boolean applied;
    try {
      applied = store.replaceOwner(definition, row, next);
    } catch (RuntimeException e) {
      log.warn("taking the owner lease of sequence '{}' failed: {}", definition.name(), e.toString());
      return;
    }
    if (!applied) {
      read = false; // someone else was faster: read again next time
      return;
    }
    // Fence first: nothing an earlier lease held may be handed out under this one.
    pool.fence();
    poolEpoch = epoch;
    lease = new Lease(next, start + self.leaseNanos() - self.marginNanos(),
          startMillis + (self.leaseNanos() - self.marginNanos()) / 1_000_000);
    seen = new Seen(next, ticker.nanos(), false);
    log.info("this server owns strict sequence '{}' now (epoch {}; previous owner: {})", definition.name(), epoch,
        describe(row));
  }

  @GuardedBy("this")
  private void drop(String why) {
    lease = null;
    poolEpoch = 0;
    pool.fence();
    log.warn("this server no longer owns strict sequence '{}': {}; what it held is dropped (a counted gap)",
        definition.name(), why);
  }

  /**
   * A graceful stop or an unload: stops serving, then releases the row (empty target, same epoch), so
   * that another server takes over at once instead of after a lease. Best effort: if the write fails,
   * the lease expires by itself.
   */
  @Override
  public synchronized void release() {
    Lease held = lease;
    lease = null;
    poolEpoch = 0;
    pool.close();
    if (held == null) {
      return;
    }
    OwnerRecord next = new OwnerRecord(self.server(), self.incarnation(), "", held.row().epoch(), UUID.randomUUID());
    try {
      store.replaceOwner(definition, held.row(), next);
    } catch (RuntimeException e) {
      log.info("could not release the owner lease of sequence '{}' (it expires by itself): {}", definition.name(),
          e.toString());
    }
  }

  /** The owner row as last read, for the sequence's live state; never waits for the monitor. */
  @Override
  public Optional<OwnerRecord> lastSeen() {
    return Optional.ofNullable(seen.row());
  }

  private static String describe(@Nullable OwnerRecord row) {
    if (row == null) {
      return "none";
    }
    return row.server() + " epoch " + row.epoch() + (row.target().isEmpty() ? " (released)" : "");
  }
}
