package dev.idgen.core.internal.strict;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.OwnerRecord;
import dev.idgen.core.internal.Daemons;
import dev.idgen.core.internal.allocation.Runtimes;
import dev.idgen.core.internal.allocation.SequenceRuntime;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The owner leases of the {@link dev.idgen.core.Ordering#STRICT} sequences loaded in one {@link dev.idgen.core.Allocator}, each a
 * {@link StrictOwner}: the rounds that renew them and watch the other owners, every quarter lease; where to
 * forward a call of a sequence another server owns; and a refusal from that owner.
 *
 * <p>Threads: the rounds run on one daemon thread of their own ({@link #close} ends it; tests run rounds by
 * hand); each {@link StrictOwner} runs its store I/O under its own monitor, so a round and a call claiming the
 * same sequence take turns. {@link #forwardTarget}, {@link #refused} and {@link #lastSeen} never take that
 * monitor (held across store reads) and do no store I/O, so that a server may call them on a network thread. A runtime unloaded, or an allocator closed,
 * gets no more rounds: its lease is released as its pools close ({@link Runtimes}).
 */
@ThreadSafe
public final class StrictOwners {
  /** The allocator's logger: these lines were its own, and operators may filter by it. */
  private static final Logger log = LoggerFactory.getLogger(Daemons.ALLOCATOR_LOG);

  private final Runtimes runtimes;
  private final ScheduledExecutorService thread;
  private volatile boolean closed;

  public StrictOwners(Runtimes runtimes, long leaseNanos) {
    this.runtimes = runtimes;
    this.thread = Executors.newSingleThreadScheduledExecutor(Daemons.threads("idgen-owners-"));
    long period = leaseNanos / 4;
    // The task catches its own failures; close() ends it.
    Future<?> unused = thread.scheduleWithFixedDelay(this::tickQuietly, period, period, TimeUnit.NANOSECONDS);
  }

  /** One owner round for every strict sequence loaded here. */
  public void tickQuietly() {
    for (SequenceRuntime rt : runtimes.loaded()) {
      if (rt.owner == null || rt.unloaded || closed) {
        continue;
      }
      try {
        rt.owner.tick();
      } catch (RuntimeException e) {
        log.warn("the owner round of strict sequence '{}' failed (retried next round): {}", rt.definition.name(),
            e.toString());
      }
    }
  }

  /** See {@link dev.idgen.core.Allocator#forwardTarget}. */
  public Optional<String> forwardTarget(String sequence) {
    SequenceRuntime rt = runtimes.get(sequence);
    if (rt == null || rt.owner == null) {
      return Optional.empty();
    }
    Optional<String> target = rt.owner.ownerTarget();
    if (target.isPresent()) {
      // A forwarded call uses the sequence here too: its ranges pass through this server to a client (their
      // lease counts for advances), and the idle sweep must not unload a sequence busy with forwarding.
      rt.touch();
    }
    return target;
  }

  /** See {@link dev.idgen.core.Allocator#ownerRefused}. */
  public void refused(String sequence, String target) {
    SequenceRuntime rt = runtimes.get(sequence);
    if (rt != null && rt.owner != null) {
      rt.owner.forgetOwner(target);
    }
  }

  /** See {@link dev.idgen.core.Allocator#owner}. */
  public Optional<OwnerRecord> lastSeen(String sequence) {
    SequenceRuntime rt = runtimes.get(sequence);
    return rt == null || rt.owner == null ? Optional.empty() : rt.owner.lastSeen();
  }

  /** No more rounds, from now on. */
  public void close() {
    closed = true;
    thread.shutdownNow();
  }
}
