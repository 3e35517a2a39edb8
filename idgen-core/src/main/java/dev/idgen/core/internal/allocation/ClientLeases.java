package dev.idgen.core.internal.allocation;

import com.google.errorprone.annotations.Immutable;
import dev.idgen.core.internal.Daemons;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How long client stubs may use the ranges this server hands out (their lease lifetime, stamped on responses),
 * and so how long an advance waits after the servers confirmed its floor: until the client leases handed out
 * below the floor have expired, with a margin for a client's late expiry. Immutable.
 */
@Immutable
public final class ClientLeases {
  private static final Logger log = LoggerFactory.getLogger(Daemons.ALLOCATOR_LOG);

  /**
   * How often the allocator looks at every loaded sequence's mark ({@link SequenceRuntime#lookAtMark}): an
   * advance waits at most this much longer than the last lease handed out below its floor can be in use.
   */
  public static final Duration LOOK_EVERY = Duration.ofSeconds(1);

  private final long lifetimeNanos;
  /** How long past a client lease's lifetime an advance waits for it: a client's expiry may run late. */
  private final long marginNanos;
  /**
   * Whether a server that stops renewing its announcement has seen its client leases expire before the
   * announcement does (it stops serving a quarter of the server lease before): only then may an advance skip
   * the servers whose announcements expired. Otherwise every advance waits a whole lease lifetime.
   */
  private final boolean endBeforeAnnouncements;

  public ClientLeases(Duration lifetime, Duration serverLease) {
    this.lifetimeNanos = lifetime.toNanos();
    this.marginNanos = Math.max(TimeUnit.SECONDS.toNanos(1), lifetimeNanos / 4);
    this.endBeforeAnnouncements = lifetimeNanos + marginNanos <= serverLease.toNanos() / 4;
    if (!endBeforeAnnouncements && lifetimeNanos > 0) {
      log.warn("the client lease lifetime ({}) plus its margin is longer than a quarter of the server lease ({}):"
          + " every AdvanceSequence waits a whole client lease lifetime", lifetime, serverLease);
    }
  }

  /** Whether clients get a lease lifetime at all (zero: they hand IDs on at once, and nothing is waited for). */
  public boolean enabled() {
    return lifetimeNanos > 0;
  }

  public Duration lifetime() {
    return Duration.ofNanos(lifetimeNanos);
  }

  /** How long after a range was handed out an advance must assume it in use: the lifetime and the margin. */
  public long heldNanos() {
    return lifetimeNanos + marginNanos;
  }

  /**
   * Until when (ticker nanos) an advance waits, given until when this server's client leases ({@code own}) and
   * the other servers' ({@code others}) hold IDs below its floor ({@link Long#MIN_VALUE}: none), at
   * {@code now}: the later of the two, or a whole {@link #heldNanos} from now where expired announcements
   * cannot vouch that their servers' leases ended. {@link Long#MIN_VALUE}: no wait.
   */
  public long advanceWaitsUntil(long own, long others, long now) {
    long until = Runtimes.later(own, others);
    if (!endBeforeAnnouncements && enabled()) {
      until = Runtimes.later(until, now + heldNanos());
    }
    return until;
  }
}
