package dev.idgen.core.internal.allocation;

import dev.idgen.core.NotOwnerException;
import dev.idgen.core.OwnerRecord;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.Ticker;
import java.util.Optional;

/**
 * A strict sequence's owner lease as its runtime, the allocator and the owner rounds use it: the one pool it
 * serves, whether this process holds the lease, and the owner to forward to. The runtime holds it; the
 * lease's own room ({@code internal.strict}'s {@code StrictOwner}) implements it, so that this package never
 * imports that one.
 *
 * <p>Threads: every implementation is thread-safe; {@link #serving}, {@link #servingEpoch},
 * {@link #ownerTarget}, {@link #forgetOwner} and {@link #lastSeen} never wait for a store read (a network
 * thread asks), the others may run store I/O under the lease's monitor.
 */
public interface OwnerLease {
  /** The pool of the sequence's one stripe, fenced by each new lease. */
  StripePool pool();

  /** Whether this process holds the lease now: the hot path's check. */
  boolean serving();

  /** The epoch of the lease this process holds now, 0 when it holds none. */
  long servingEpoch();

  /** Claims the sequence when nobody holds it, or throws {@link NotOwnerException} with where to forward. */
  void ensureServing();

  /** One owner round: renew, track the owner, take over. */
  void tick();

  /** The target of the other server that owns the sequence, as last read; empty if none is known. */
  Optional<String> ownerTarget();

  /** The owner at {@code target} refused a forwarded call: read the row again before forwarding. */
  void forgetOwner(String target);

  /** The owner row as last read. */
  Optional<OwnerRecord> lastSeen();

  /** Stops serving and releases the row (an unload or a graceful stop); best effort. */
  void release();

  /** Opens the lease of one strict sequence as it loads. */
  @FunctionalInterface
  interface Opener {
    OwnerLease open(SequenceDefinition definition, RangeStore store, Ticker ticker, StripePool.Settings settings);
  }
}
