package dev.idgen.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What the live servers' announcements said of an advance, read by {@link RangeStore#confirmations}: who has
 * not confirmed it yet, and how long client leases that the confirming servers handed out may still be
 * used, at the latest, counted from the read.
 *
 * @param pending the live servers that have not confirmed, as {@code datacenter/name}; empty when all have
 * @param leasesOutstanding the longest time any live server said its client leases of floored sequences may
 *     still be used; empty if some server did not say (a server of an older version, or a store that does
 *     not record it): the advancing server then waits its own client lease lifetime
 */
public record Confirmations(List<String> pending, Optional<Duration> leasesOutstanding) {
  public Confirmations {
    pending = List.copyOf(pending);
  }
}
