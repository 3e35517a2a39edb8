package dev.idgen.core;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the live servers' announcements said of an advance, read by {@link RangeStore#confirmations}: who has
 * not confirmed it yet, how long client leases that the confirming servers handed out may still be used, at
 * the latest, counted from the read, and each announcement's heartbeat.
 *
 * @param pending the servers whose announcement the store still holds and that have not confirmed, as
 *     {@code datacenter/name}; empty when all have
 * @param leasesOutstanding the longest time any confirming server said its client leases of floored
 *     sequences may still be used; empty if one did not say (a server of an older version, or a store that
 *     does not record it): the advancing server then waits its own client lease lifetime
 * @param heartbeats by {@code datacenter/name}, the heartbeats of the announcements that carry one: the
 *     advancing server counts a pending server as gone once its heartbeat has stayed the same for that
 *     server's lease on its own monotonic clock, whatever the store's clocks say ({@link dev.idgen.core.internal.floors.FloorSync#confirm}).
 *     A pending server without one counts until the store drops its announcement
 */
public record Confirmations(List<String> pending, Optional<Duration> leasesOutstanding,
    Map<String, Heartbeat> heartbeats) {
  public Confirmations {
    pending = List.copyOf(pending);
    heartbeats = Map.copyOf(heartbeats);
  }

  /** Without heartbeats: every pending server counts until the store drops its announcement. */
  public Confirmations(List<String> pending, Optional<Duration> leasesOutstanding) {
    this(pending, leasesOutstanding, Map.of());
  }

  /**
   * One announcement's heartbeat.
   *
   * @param beat a value that changes with every renewal of the announcement and with every new process
   *     under the name; compared only for equality, never with a clock
   * @param lease the lease the server announced: it stops serving within that time after the start of the
   *     renewal that wrote {@code beat} unless it renews again
   */
  public record Heartbeat(String beat, Duration lease) {}
}
