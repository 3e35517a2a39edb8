package dev.idgen.client;

import java.time.Duration;
import java.util.Objects;

/**
 * An immutable snapshot of one {@link IdSource}'s counters, for a service to export as metrics.
 *
 * <p>Counters only grow, from the moment the source was created; take two snapshots and subtract to
 * get rates. In a healthy steady state {@link #waits()} stays constant: callers are served from the
 * local lease while the next one is fetched in the background.
 *
 * @param sequence the sequence's name
 * @param idsServed IDs handed to callers
 * @param leases {@code Allocate} calls that delivered IDs
 * @param leaseSize the number of IDs the source currently asks for per lease; follows the consumption
 *     rate, between the configured minimum and maximum
 * @param idsHeld IDs leased and not yet handed out (abandoned if the process stops now)
 * @param waits times a caller found nothing left and had to wait for a lease
 * @param waitTime the total time callers spent waiting, over all {@link #waits()}
 * @param failedCalls {@code Allocate} calls that failed (retried or not)
 * @param idsExpired IDs leased and dropped unused because their range's {@code valid_for} ran out (a
 *     gap, never a duplicate); stays 0 with servers that set no {@code valid_for}, and in a steady
 *     workload whose leases are used up in time
 */
public record IdSourceStats(
    String sequence,
    long idsServed,
    long leases,
    long leaseSize,
    long idsHeld,
    long waits,
    Duration waitTime,
    long failedCalls,
    long idsExpired) {

  /**
   * Creates a snapshot (sources do; tests of code that exports stats may too).
   *
   * @param sequence the sequence's name
   * @param idsServed IDs handed to callers
   * @param leases {@code Allocate} calls that delivered IDs
   * @param leaseSize the number of IDs the source currently asks for per lease
   * @param idsHeld IDs leased and not yet handed out
   * @param waits times a caller found nothing left and had to wait for a lease
   * @param waitTime the total time callers spent waiting
   * @param failedCalls {@code Allocate} calls that failed (retried or not)
   * @param idsExpired IDs dropped unused because their range's {@code valid_for} ran out
   * @throws NullPointerException if {@code sequence} or {@code waitTime} is null
   */
  public IdSourceStats {
    Objects.requireNonNull(sequence, "sequence");
    Objects.requireNonNull(waitTime, "waitTime");
  }

  /**
   * Creates a snapshot with no expired IDs: the constructor of the counters that came before
   * {@link #idsExpired()}, kept for code written against it.
   *
   * @param sequence the sequence's name
   * @param idsServed IDs handed to callers
   * @param leases {@code Allocate} calls that delivered IDs
   * @param leaseSize the number of IDs the source currently asks for per lease
   * @param idsHeld IDs leased and not yet handed out
   * @param waits times a caller found nothing left and had to wait for a lease
   * @param waitTime the total time callers spent waiting
   * @param failedCalls {@code Allocate} calls that failed (retried or not)
   * @throws NullPointerException if {@code sequence} or {@code waitTime} is null
   */
  public IdSourceStats(String sequence, long idsServed, long leases, long leaseSize, long idsHeld, long waits,
      Duration waitTime, long failedCalls) {
    this(sequence, idsServed, leases, leaseSize, idsHeld, waits, waitTime, failedCalls, 0);
  }
}
