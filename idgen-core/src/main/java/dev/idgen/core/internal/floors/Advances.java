package dev.idgen.core.internal.floors;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.FloorAtMaxException;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.Ticker;
import dev.idgen.core.internal.allocation.ClientLeases;
import dev.idgen.core.internal.allocation.Runtimes;
import dev.idgen.core.internal.allocation.SequenceRuntime;

/**
 * {@code AdvanceSequence} for an {@link dev.idgen.core.Allocator}: moves a sequence past a floor everywhere, in an order that
 * leaves no moment at which an ID at or below it can still be handed out once the call returns.
 *
 * <p>The store first ({@link RangeStore#advance}: its stripes and reserves, then every datacenter's floor log),
 * then everything of the sequence on this server ({@link Runtimes#applyFloor}), then the other live servers'
 * confirmations of the log version ({@link FloorSync#confirm}; a server that cannot confirm stops serving by
 * itself before its announcement expires), and last the wait for the client leases handed out below the floor,
 * on this server and on those that confirmed ({@link ClientLeases#advanceWaitsUntil}).
 *
 * <p>Threads: no state of its own; any number of advances may run at once, here and on other servers. Floors
 * only rise, in the store and in memory, so concurrent advances of one sequence leave the highest, and each
 * returns once its own floor is in force. A refill racing with an advance either returns IDs above the floor
 * (the store's floor came first) or lands in a pool after the floor was raised there, which trims it. The wait
 * runs on the caller's thread (the server calls from a worker, never from a network thread), through the
 * allocator's sleeper, which tests replace.
 */
@ThreadSafe
public final class Advances {
  private final RangeStore store;
  private final Runtimes runtimes;
  private final FloorSync sync;
  private final ClientLeases clientLeases;
  private final Ticker ticker;
  private final long confirmTimeoutNanos;

  public Advances(RangeStore store, Runtimes runtimes, FloorSync sync, ClientLeases clientLeases, Ticker ticker,
      long confirmTimeoutNanos) {
    this.store = store;
    this.runtimes = runtimes;
    this.sync = sync;
    this.clientLeases = clientLeases;
    this.ticker = ticker;
    this.confirmTimeoutNanos = confirmTimeoutNanos;
  }

  /** See {@link dev.idgen.core.Allocator#advance}; the caller checked the name, and that the allocator is open. */
  public SequenceDefinition advance(String sequence, long floor, Sleeper sleeper) {
    SequenceRuntime rt = runtimes.load(sequence);
    SequenceDefinition def = rt.definition;
    if (floor >= def.max()) {
      throw new FloorAtMaxException(sequence, floor, def.max());
    }
    // Store first: a refill racing with us then either returns IDs above the floor, or lands in a pool
    // after raiseFloor has set the floor that trims it.
    AdvanceReceipt receipt = store.advance(def, floor);
    // Client leases handed out before the floor was in force: this server's own, and those the other
    // servers announce with their confirmations (each knows when its last one for a floored sequence ends).
    long own = runtimes.applyFloor(sequence, floor);
    long others = sync.confirm(receipt, sequence, floor, System.nanoTime() + confirmTimeoutNanos,
        clientLeases.heldNanos());
    long until = clientLeases.advanceWaitsUntil(own, others, ticker.nanos());
    long wait = until == Long.MIN_VALUE ? 0 : until - ticker.nanos();
    if (wait > 0) {
      try {
        sleeper.sleep(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StoreUnavailableException("sequence '" + sequence + "': floor " + floor + " is in force"
            + " on every server, but the wait for client leases to expire was interrupted; advance again"
            + " to be sure", e);
      }
    }
    return def;
  }

  /** How an advance waits: {@link java.util.concurrent.TimeUnit#sleep} but for tests. */
  @FunctionalInterface
  public interface Sleeper {
    void sleep(long nanos) throws InterruptedException;
  }
}
