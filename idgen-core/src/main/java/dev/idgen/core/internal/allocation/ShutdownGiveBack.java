package dev.idgen.core.internal.allocation;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.core.IdRange;
import dev.idgen.core.RangeStore;
import dev.idgen.core.Ticker;
import dev.idgen.core.internal.Daemons;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A graceful stop's give-back, within a deadline: every pool is closed first (nothing hands its IDs out any
 * more), then the reserves go back to the store largest first, until the deadline. A stop must end within
 * the orchestrator's grace period (a SIGKILL mid-way gives back less, and in no order), and 100,000 loaded
 * sequences took 92 s against a 40 s grace period. Largest first because the IDs given back per store write
 * are what is saved: a sequence holding 10,000 saves as many IDs as 10,000 holding one each. What is left at
 * the deadline stays abandoned, a counted gap ({@code idgen_ids_lost_total{reason="abandoned"}}), never a
 * duplicate.
 *
 * <p>Threads: up to {@value #THREADS} workers take sequences off one queue, largest first; taking one and
 * checking the deadline happen together under {@code lock}, so what goes back is always a prefix of that
 * order. The stripes of one sequence stay on one worker. The caller waits until the queue is done or the
 * deadline has passed (real time, as far as the ticker's deadline is ahead), then interrupts what is left:
 * a give-back cut short counts as abandoned unless the store confirmed it.
 */
@ThreadSafe
public final class ShutdownGiveBack {
  private static final Logger log = LoggerFactory.getLogger(ShutdownGiveBack.class);

  /** Sequences given back at once (each one is a store round trip). */
  static final int THREADS = 32;

  /** One sequence's reserve, taken from its closed pools. */
  private record Held(SequenceRuntime runtime, List<List<IdRange>> stripes, long ids) {}

  private final RangeStore store;
  private final Ticker ticker;
  private final long budgetNanos;
  private final long deadlineNanos;
  private final Object lock = new Object();
  @GuardedBy("lock") private final ArrayDeque<Held> queue = new ArrayDeque<>();
  private final AtomicLong skippedIds = new AtomicLong();
  private final AtomicLong givenSequences = new AtomicLong();
  private final AtomicLong givenIds = new AtomicLong();

  /** {@code budgetNanos} from now on the ticker; 0: give nothing back. */
  ShutdownGiveBack(RangeStore store, Ticker ticker, long budgetNanos) {
    this.store = store;
    this.ticker = ticker;
    this.budgetNanos = Math.min(budgetNanos, TimeUnit.DAYS.toNanos(1));
    this.deadlineNanos = ticker.nanos() + this.budgetNanos;
  }

  /** Closes every pool of {@code runtimes}, then gives back what they held, largest first, until the deadline. */
  void run(List<SequenceRuntime> runtimes) {
    List<Held> all = new ArrayList<>(runtimes.size());
    for (SequenceRuntime rt : runtimes) {
      @Nullable Held h = close(rt);
      if (h != null) {
        all.add(h);
      }
    }
    all.sort(Comparator.comparingLong(Held::ids).reversed());
    synchronized (lock) {
      queue.addAll(all);
    }
    if (all.isEmpty()) {
      return;
    }
    ExecutorService workers = Executors.newFixedThreadPool(Math.min(THREADS, all.size()),
        Daemons.threads("idgen-give-back-"));
    try {
      List<Future<?>> started = new ArrayList<>();
      for (int i = 0; i < Math.min(THREADS, all.size()); i++) {
        started.add(workers.submit(this::work));
      }
      workers.shutdown();
      if (!workers.awaitTermination(Math.max(0, deadlineNanos - ticker.nanos()), TimeUnit.NANOSECONDS)) {
        log.warn("give-back deadline reached with store writes still in flight: they count as lost unless"
            + " the store confirms them");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // what is not given back yet stays a gap
    } finally {
      workers.shutdownNow();
    }
    long notTaken;
    long notTakenIds = 0;
    synchronized (lock) {
      notTaken = queue.size();
      for (Held h : queue) {
        notTakenIds += h.ids();
      }
      queue.clear();
    }
    // The rate an operator sizes idgen.shutdown.give-back-deadline by: sequences given back per second.
    log.info("gave back the reserves of {} sequence(s), {} IDs, in {} ms", givenSequences.get(), givenIds.get(),
        TimeUnit.NANOSECONDS.toMillis(ticker.nanos() - (deadlineNanos - budgetNanos)));
    long lostIds = skippedIds.get() + notTakenIds;
    if (notTaken > 0 || lostIds > 0) {
      log.warn("give-back deadline of {} ms reached: {} sequence(s) not given back, {} IDs in all (a counted gap,"
          + " idgen_ids_lost_total{reason=\"abandoned\"}); the largest reserves went back first",
          TimeUnit.NANOSECONDS.toMillis(budgetNanos), notTaken, lostIds);
    }
  }

  /** Takes sequences off the queue, largest first, until it is empty or the deadline has passed. */
  private void work() {
    for (Held h = next(); h != null && !Thread.currentThread().isInterrupted(); h = next()) {
      giveBack(h);
    }
  }

  /** The largest reserve not taken yet, or null once the queue is empty or the deadline has passed. */
  @Nullable
  private Held next() {
    synchronized (lock) {
      return ticker.nanos() - deadlineNanos >= 0 ? null : queue.poll();
    }
  }

  /** Marks the runtime unloaded and closes its pools ({@link Runtimes#close}); null when there is nothing to give. */
  @Nullable
  private static Held close(SequenceRuntime rt) {
    List<List<IdRange>> stripes = Runtimes.close(rt);
    if (stripes.isEmpty()) {
      return null; // a strict runtime: its owner is released, what it held is a counted gap
    }
    long ids = 0;
    for (List<IdRange> held : stripes) {
      ids += IdRange.total(held);
    }
    return new Held(rt, stripes, ids);
  }

  private void giveBack(Held h) {
    givenSequences.incrementAndGet();
    SequenceRuntime rt = h.runtime();
    for (int k = 0; k < rt.pools.length; k++) {
      List<IdRange> held = h.stripes().get(k);
      long wait = Math.min(Runtimes.LATE_REFILL_WAIT_NANOS, deadlineNanos - ticker.nanos()); // within the deadline
      held.addAll(rt.pools[k].awaitLate(Math.max(0, wait))); // a refill in flight lands after the close
      if (held.isEmpty()) {
        continue;
      }
      if (ticker.nanos() - deadlineNanos >= 0) {
        skippedIds.addAndGet(IdRange.total(held)); // the later stripes of a sequence begun in time
        continue;
      }
      givenIds.addAndGet(Runtimes.giveBackStripe(store, rt, k, held));
    }
  }
}
