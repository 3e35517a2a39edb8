package dev.idgen.client;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import com.google.errorprone.annotations.Immutable;
import java.time.Duration;
import java.util.Objects;

/**
 * An immutable snapshot of one {@link IdSource}'s counters, for a service to export as metrics.
 *
 * <p>Counters only grow, from the moment the source was created; take two snapshots and subtract to
 * get rates. In a healthy steady state {@link #waits()} stays constant: callers are served from the
 * local lease while the next one is fetched in the background.
 *
 * <p>A final class with accessors rather than a record, so that counters can be added without breaking
 * callers: code that needs a snapshot of its own (a test of code that exports these counters) builds
 * one with {@link #builder(String)}, where a counter it does not set is 0.
 */
@Immutable
public final class IdSourceStats {
  private final String sequence;
  private final long idsServed;
  private final long leases;
  private final long leaseSize;
  private final long idsHeld;
  private final long waits;
  private final Duration waitTime;
  private final long failedCalls;
  private final long idsExpired;
  private final boolean strictOrdering;

  private IdSourceStats(Builder b) {
    this.sequence = b.sequence;
    this.idsServed = b.idsServed;
    this.leases = b.leases;
    this.leaseSize = b.leaseSize;
    this.idsHeld = b.idsHeld;
    this.waits = b.waits;
    this.waitTime = b.waitTime;
    this.failedCalls = b.failedCalls;
    this.idsExpired = b.idsExpired;
    this.strictOrdering = b.strictOrdering;
  }

  /**
   * Returns a builder of a snapshot of {@code sequence}, every counter 0 (sources build theirs this
   * way; tests of code that exports stats may too).
   *
   * @param sequence the sequence's name
   * @return a new builder
   */
  public static Builder builder(String sequence) {
    return new Builder(sequence);
  }

  /**
   * Returns the sequence's name.
   *
   * @return the sequence's name
   */
  public String sequence() {
    return sequence;
  }

  /**
   * Returns how many IDs were handed to callers. An ID counts once nothing can drop it any more: when
   * the call that took it returns it (a bulk call checks its IDs' leases first), or once its future took
   * it (just after the future completes, on the thread that completes it). So the count never goes down.
   *
   * @return IDs handed to callers
   */
  public long idsServed() {
    return idsServed;
  }

  /**
   * Returns how many {@code Allocate} calls delivered IDs.
   *
   * @return {@code Allocate} calls that delivered IDs
   */
  public long leases() {
    return leases;
  }

  /**
   * Returns the number of IDs the source currently asks for per lease; it follows the consumption
   * rate, between the configured minimum and maximum. 0 for a {@linkplain #strictOrdering() strict}
   * sequence, which leases nothing ahead.
   *
   * @return the current lease size
   */
  public long leaseSize() {
    return leaseSize;
  }

  /**
   * Returns how many IDs are leased and not yet handed out (abandoned if the process stops now).
   *
   * @return IDs held
   */
  public long idsHeld() {
    return idsHeld;
  }

  /**
   * Returns how many times a caller found nothing left and had to wait for a lease ({@code next()},
   * or a {@code nextAsync()} that could not complete at once).
   *
   * @return waits
   */
  public long waits() {
    return waits;
  }

  /**
   * Returns the total time callers spent waiting, over all {@link #waits()}.
   *
   * @return the total wait
   */
  public Duration waitTime() {
    return waitTime;
  }

  /**
   * Returns how many {@code Allocate} calls failed (retried or not).
   *
   * @return failed calls
   */
  public long failedCalls() {
    return failedCalls;
  }

  /**
   * Returns how many IDs were leased and dropped unused because their range's {@code valid_for} ran out
   * (a gap, never a duplicate); stays 0 with servers that set no {@code valid_for}, and in a steady
   * workload whose leases are used up in time. It also counts IDs a call took and dropped before its
   * caller got them: those of a bulk call whose lease expired while it waited, or whose source became
   * strict meanwhile, and an ID taken for a {@code nextAsync()} future cancelled in between whose lease
   * was over by then. For a {@linkplain #strictOrdering() strict} sequence it also counts the IDs of the
   * lease the source requested before it knew the ordering (when it was created), which nobody had asked
   * for yet, and the ID of a {@code nextAsync()} whose future was cancelled or failed before it took it.
   *
   * @return IDs expired
   */
  public long idsExpired() {
    return idsExpired;
  }

  /**
   * Returns whether the servers said that the sequence is {@code ORDERING_STRICT} (false until the
   * source's first response). Every ID of a strict sequence is larger than every ID whose allocation
   * completed before the caller asked, so the source caches none: each {@code next()} (or batch) is
   * one call to a server, {@link #waits()} counts every request and {@link #idsHeld()} stays 0.
   *
   * @return whether the sequence is strict
   */
  public boolean strictOrdering() {
    return strictOrdering;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IdSourceStats s
        && sequence.equals(s.sequence)
        && idsServed == s.idsServed
        && leases == s.leases
        && leaseSize == s.leaseSize
        && idsHeld == s.idsHeld
        && waits == s.waits
        && waitTime.equals(s.waitTime)
        && failedCalls == s.failedCalls
        && idsExpired == s.idsExpired
        && strictOrdering == s.strictOrdering;
  }

  @Override
  public int hashCode() {
    return Objects.hash(sequence, idsServed, leases, leaseSize, idsHeld, waits, waitTime, failedCalls, idsExpired,
        strictOrdering);
  }

  /**
   * Describes the counters, e.g. for a log line.
   *
   * @return the counters as {@code IdSourceStats[sequence=…, idsServed=…, …]}
   */
  @Override
  public String toString() {
    return "IdSourceStats[sequence=" + sequence + ", idsServed=" + idsServed + ", leases=" + leases
        + ", leaseSize=" + leaseSize + ", idsHeld=" + idsHeld + ", waits=" + waits + ", waitTime=" + waitTime
        + ", failedCalls=" + failedCalls + ", idsExpired=" + idsExpired
        + ", strictOrdering=" + strictOrdering + "]";
  }

  /** Builds an {@link IdSourceStats}; every counter not set is 0. Not thread-safe. */
  public static final class Builder {
    private final String sequence;
    private long idsServed;
    private long leases;
    private long leaseSize;
    private long idsHeld;
    private long waits;
    private Duration waitTime = Duration.ZERO;
    private long failedCalls;
    private long idsExpired;
    private boolean strictOrdering;

    private Builder(String sequence) {
      this.sequence = Objects.requireNonNull(sequence, "sequence");
    }

    /**
     * Sets {@link IdSourceStats#idsServed()}.
     *
     * @param n IDs handed to callers
     * @return this builder
     */
    @CanIgnoreReturnValue
    public Builder idsServed(long n) {
      this.idsServed = n;
      return this;
    }

    /**
     * Sets {@link IdSourceStats#leases()}.
     *
     * @param n {@code Allocate} calls that delivered IDs
     * @return this builder
     */
    @CanIgnoreReturnValue
    public Builder leases(long n) {
      this.leases = n;
      return this;
    }

    /**
     * Sets {@link IdSourceStats#leaseSize()}.
     *
     * @param n the current lease size
     * @return this builder
     */
    @CanIgnoreReturnValue
    public Builder leaseSize(long n) {
      this.leaseSize = n;
      return this;
    }

    /**
     * Sets {@link IdSourceStats#idsHeld()}.
     *
     * @param n IDs leased and not yet handed out
     * @return this builder
     */
    @CanIgnoreReturnValue
    public Builder idsHeld(long n) {
      this.idsHeld = n;
      return this;
    }

    /**
     * Sets {@link IdSourceStats#waits()}.
     *
     * @param n times a caller had to wait
     * @return this builder
     */
    @CanIgnoreReturnValue
    public Builder waits(long n) {
      this.waits = n;
      return this;
    }

    /**
     * Sets {@link IdSourceStats#waitTime()}.
     *
     * @param total the total time callers spent waiting
     * @return this builder
     */
    @CanIgnoreReturnValue
    public Builder waitTime(Duration total) {
      this.waitTime = Objects.requireNonNull(total, "total");
      return this;
    }

    /**
     * Sets {@link IdSourceStats#failedCalls()}.
     *
     * @param n failed {@code Allocate} calls
     * @return this builder
     */
    @CanIgnoreReturnValue
    public Builder failedCalls(long n) {
      this.failedCalls = n;
      return this;
    }

    /**
     * Sets {@link IdSourceStats#idsExpired()}.
     *
     * @param n IDs dropped unused because their range expired
     * @return this builder
     */
    @CanIgnoreReturnValue
    public Builder idsExpired(long n) {
      this.idsExpired = n;
      return this;
    }

    /**
     * Sets {@link IdSourceStats#strictOrdering()}.
     *
     * @param strict whether the sequence is {@code ORDERING_STRICT}
     * @return this builder
     */
    @CanIgnoreReturnValue
    public Builder strictOrdering(boolean strict) {
      this.strictOrdering = strict;
      return this;
    }

    /**
     * Returns the snapshot.
     *
     * @return a new, immutable snapshot
     */
    public IdSourceStats build() {
      return new IdSourceStats(this);
    }
  }
}
