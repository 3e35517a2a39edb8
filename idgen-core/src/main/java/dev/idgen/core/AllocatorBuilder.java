package dev.idgen.core;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import javax.annotation.Nullable;

/**
 * Configures an {@link Allocator} ({@link Allocator#builder}). Defaults are the public constants of
 * {@link Allocator}. Not thread-safe: configure it on one thread, then {@link #build}; the allocator reads
 * the settings once, when it is built.
 */
public final class AllocatorBuilder {
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  // Read by the allocator's constructor.
  final RangeStore store;
  long maxIdsPerCall = Allocator.DEFAULT_MAX_IDS_PER_CALL;
  @Nullable Executor executor;
  Ticker ticker = Ticker.system();
  Duration outageRunway = Allocator.DEFAULT_OUTAGE_RUNWAY;
  long minNodeBlock = Allocator.DEFAULT_MIN_NODE_BLOCK;
  double refillStep = Allocator.DEFAULT_REFILL_STEP;
  String serverName = defaultServerName();
  Duration serverLease = Allocator.DEFAULT_SERVER_LEASE;
  Duration confirmTimeout = Allocator.DEFAULT_ADVANCE_CONFIRM_TIMEOUT;
  Duration clientLeaseLifetime = Duration.ZERO;
  Duration unloadIdleAfter = Allocator.DEFAULT_UNLOAD_IDLE_AFTER;
  Duration giveBackDeadline = Allocator.DEFAULT_GIVE_BACK_DEADLINE;
  @Nullable Supplier<String> ownerTarget;
  Duration ownerLease = Allocator.DEFAULT_OWNER_LEASE;
  @Nullable Duration ownerLeaseMargin;
  WallClock wall = WallClock.system();
  Duration undeleteWindow = Allocator.DEFAULT_UNDELETE_WINDOW;

  AllocatorBuilder(RangeStore store) {
    this.store = Objects.requireNonNull(store, "store");
  }

  /** The largest count one {@link Allocator#allocate} call may ask for. Default 1,000,000. */
  public AllocatorBuilder maxIdsPerCall(long max) {
    this.maxIdsPerCall = atLeastOne("maxIdsPerCall", max);
    return this;
  }

  /** Where refills run. Default: a daemon thread pool owned (and shut down) by the allocator. */
  public AllocatorBuilder executor(Executor executor) {
    this.executor = Objects.requireNonNull(executor, "executor");
    return this;
  }

  /**
   * The wall clock that leases are checked against besides the ticker (a suspended VM's monotonic clock
   * stands still). Default {@link WallClock#system()}.
   */
  public AllocatorBuilder wallClock(WallClock wall) {
    this.wall = Objects.requireNonNull(wall, "wall");
    return this;
  }

  /**
   * How long before its owner lease ends, on its own clocks, an owner stops serving a strict sequence: what
   * clock drift between servers may eat over one lease (another server takes over a lease after the
   * owner's row has not changed for a whole lease on its clock). Default a tenth of the owner lease; less
   * than half of it.
   */
  public AllocatorBuilder ownerLeaseMargin(Duration margin) {
    this.ownerLeaseMargin = atLeast("ownerLeaseMargin", margin, Duration.ZERO, ">= 0");
    return this;
  }

  /**
   * How long a deleted sequence can be restored ({@code UndeleteSequence}) before a purge may remove it for
   * good: its expire time is its delete time plus this. Default 30 days.
   */
  public AllocatorBuilder undeleteWindow(Duration window) {
    this.undeleteWindow = atLeast("undeleteWindow", window, Duration.ZERO, ">= 0");
    return this;
  }

  /** The time source for rate estimates and back-off. Default {@link Ticker#system()}. */
  public AllocatorBuilder ticker(Ticker ticker) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    return this;
  }

  /**
   * How long this server's reserve of a stripe must last at its measured rate when the store stops
   * answering: a refill starts as soon as less than this is left. Longer: fewer store writes, and a
   * larger gap when the server crashes. Default 5 minutes.
   */
  public AllocatorBuilder outageRunway(Duration runway) {
    if (runway.isNegative() || runway.isZero()) {
      throw new IllegalArgumentException("outageRunway: " + runway + " (expected: > 0)");
    }
    this.outageRunway = runway;
    return this;
  }

  /** The smallest block a node reserves (the sequence's node_block_size caps it). Default 100. */
  public AllocatorBuilder minNodeBlock(long min) {
    this.minNodeBlock = atLeastOne("minNodeBlock", min);
    return this;
  }

  /**
   * How far beyond the low-water mark a refill tops the reserve up, as a fraction of the mark (above 0,
   * at most 4). Larger: fewer store writes, a larger gap on a crash. Default 0.25.
   */
  public AllocatorBuilder refillStep(double fraction) {
    if (!(fraction > 0 && fraction <= 4)) {
      throw new IllegalArgumentException("refillStep: " + fraction + " (expected: > 0 and <= 4)");
    }
    this.refillStep = fraction;
    return this;
  }

  /**
   * This server's name in the store's announcements, unique among live servers (host and port).
   * Default: host name, process id and a per-process counter.
   */
  public AllocatorBuilder serverName(String name) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("serverName: '" + name + "' (expected: not blank)");
    }
    this.serverName = name;
    return this;
  }

  /**
   * How long this server's announcement lasts without renewal; it stops serving after 3/4 of it if it
   * cannot renew. Longer keeps a cut-off server serving longer, and makes advances wait longer for a
   * crashed server that does not come back under its name. Default 10 minutes.
   */
  public AllocatorBuilder serverLease(Duration lease) {
    this.serverLease = atLeast("serverLease", lease, Duration.ofSeconds(4), ">= 4s");
    return this;
  }

  /** How long an advance waits for every live server to confirm it. Default 10 s. */
  public AllocatorBuilder advanceConfirmTimeout(Duration timeout) {
    this.confirmTimeout = atLeast("advanceConfirmTimeout", timeout, Duration.ZERO, ">= 0");
    return this;
  }

  /**
   * How long a client stub may use a range it was handed; an advance waits this long after the
   * servers confirmed. Zero (the default here) for callers that hand IDs on at once.
   */
  public AllocatorBuilder clientLeaseLifetime(Duration lifetime) {
    this.clientLeaseLifetime = atLeast("clientLeaseLifetime", lifetime, Duration.ZERO, ">= 0");
    return this;
  }

  /**
   * Unload a sequence not allocated from for this long, giving its reserve back to the store (it is
   * loaded again by its next call). Zero: never. Default 1 hour.
   */
  public AllocatorBuilder unloadIdleAfter(Duration idle) {
    this.unloadIdleAfter = atLeast("unloadIdleAfter", idle, Duration.ZERO, ">= 0");
    return this;
  }

  /**
   * How long {@link Allocator#close} may spend giving reserves back to the store, largest first (ticker time);
   * what is not given back by then is abandoned, a counted gap. Zero: give nothing back. Default 3 s.
   */
  public AllocatorBuilder giveBackDeadline(Duration deadline) {
    this.giveBackDeadline = atLeast("giveBackDeadline", deadline, Duration.ZERO, ">= 0");
    return this;
  }

  /**
   * The gRPC target ({@code host:port}) other servers forward calls of strict sequences to when this
   * server owns them. Default: the server name.
   */
  public AllocatorBuilder ownerTarget(String target) {
    if (target == null || target.isBlank()) {
      throw new IllegalArgumentException("ownerTarget: '" + target + "' (expected: host:port)");
    }
    this.ownerTarget = () -> target;
    return this;
  }

  /** {@link #ownerTarget(String)}, asked for when this server first claims a sequence (after it bound its port). */
  public AllocatorBuilder ownerTarget(Supplier<String> target) {
    this.ownerTarget = Objects.requireNonNull(target, "target");
    return this;
  }

  /**
   * How long an owner lease of a strict sequence lasts without renewal (renewed every quarter of it).
   * Shorter: a faster take-over when an owner dies (calls fail for about 1.25 of it), more store writes
   * (4 per lease per strict sequence). Default 10 s; at least 1 s.
   */
  public AllocatorBuilder ownerLease(Duration lease) {
    this.ownerLease = atLeast("ownerLease", lease, Duration.ofSeconds(1), ">= 1s");
    return this;
  }

  public Allocator build() {
    if (ownerLeaseMargin != null && ownerLeaseMargin.multipliedBy(2).compareTo(ownerLease) >= 0) {
      throw new IllegalArgumentException("ownerLeaseMargin: " + ownerLeaseMargin + " (expected: less than half"
          + " the owner lease, " + ownerLease + ")");
    }
    return new Allocator(this);
  }

  /** {@code value}, if it is at least {@code min}; else the setting's error, which says what is {@code expected}. */
  private static Duration atLeast(String setting, Duration value, Duration min, String expected) {
    if (value.compareTo(min) < 0) {
      throw new IllegalArgumentException(setting + ": " + value + " (expected: " + expected + ")");
    }
    return value;
  }

  private static long atLeastOne(String setting, long value) {
    if (value < 1) {
      throw new IllegalArgumentException(setting + ": " + value + " (expected: >= 1)");
    }
    return value;
  }

  private static String defaultServerName() {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.io.IOException e) {
      host = "localhost";
    }
    return host + "/" + ProcessHandle.current().pid() + "#" + INSTANCES.incrementAndGet();
  }
}
