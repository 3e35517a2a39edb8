package dev.idgen.core.internal.floors;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.RangeStore;
import dev.idgen.core.internal.Daemons;
import dev.idgen.core.internal.allocation.ClientLeases;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the floor-sync cycles of one allocator ({@link FloorSync#cycle}) every floor-refresh interval of its
 * store, where other processes share the store, and says when the allocator is {@link #ready}: once its store
 * answers and, where floors are synced, once a cycle has let it serve. A store that connects in the background
 * gets its first cycle as soon as it answers, not a refresh interval later.
 *
 * <p>It also looks at the marks of client leases every {@link ClientLeases#LOOK_EVERY}, for any store, so that
 * an advance waits only for leases that can still be in use, not for one handed out long before it came
 * ({@link dev.idgen.core.internal.allocation.SequenceRuntime#lastHandedOut} says why a late look is never unsafe).
 *
 * <p>Threads: the cycles run on the poller's own daemon thread (the first one on the constructing thread when
 * the store is there from the start, so that the allocator serves at once), the reads of the other servers'
 * heartbeats ({@link FloorSync#observe}) on a second one, the looks at the marks on a third (a slow store read
 * must not make every advance wait longer); {@link #close} ends them. The readiness is a
 * {@link CompletableFuture}, safe from any thread.
 */
@ThreadSafe
public final class FloorPoller {
  private static final Logger log = LoggerFactory.getLogger(FloorPoller.class);

  private final FloorSync sync;
  /** Runs the cycles; null for a store of one process, whose floors need no sync. */
  @Nullable private final ScheduledExecutorService thread;
  /** Reads the other servers' heartbeats ({@link FloorSync#observe}); null where floors need no sync. */
  @Nullable private final ScheduledExecutorService observer;
  private final CompletableFuture<Void> ready = new CompletableFuture<>();
  /** Looks at the marks of client leases; null where clients get no lease lifetime. */
  @Nullable private final ScheduledExecutorService marks;

  /** {@code lookAtMarks}: the periodic look at the lease marks, null when clients get no lease lifetime. */
  public FloorPoller(RangeStore store, FloorSync sync, @Nullable Runnable lookAtMarks) {
    this.sync = sync;
    if (lookAtMarks != null) {
      marks = Executors.newSingleThreadScheduledExecutor(Daemons.threads("idgen-lease-marks-"));
      long every = ClientLeases.LOOK_EVERY.toNanos();
      // A task that threw would never run again, and every advance would wait a whole lease: it must not throw.
      Runnable quietly = () -> {
        try {
          lookAtMarks.run();
        } catch (RuntimeException e) {
          log.warn("looking at the client lease marks failed (looked at again in {} ms): {}",
              ClientLeases.LOOK_EVERY.toMillis(), e.toString());
        }
      };
      Future<?> unused = marks.scheduleWithFixedDelay(quietly, every, every, TimeUnit.NANOSECONDS); // close() ends it
    } else {
      marks = null;
    }
    CompletableFuture<Void> storeReady = store.ready().toCompletableFuture();
    if (sync.enabled()) {
      observer = Executors.newSingleThreadScheduledExecutor(Daemons.threads("idgen-heartbeats-"));
      thread = start(storeReady, store.floorRefreshInterval().toNanos());
    } else {
      observer = null;
      thread = null;
      CompletableFuture<?> unusedReady = storeReady.thenRun(() -> ready.complete(null));
    }
    CompletableFuture<?> unusedFailed = storeReady.exceptionally(error -> {
      ready.completeExceptionally(error);
      return null;
    });
  }

  private ScheduledExecutorService start(CompletableFuture<Void> storeReady, long refreshNanos) {
    if (storeReady.isDone() && !storeReady.isCompletedExceptionally()) {
      syncFloors(); // serve from the start when the store is there
    }
    ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(
        Daemons.threads("idgen-floor-sync-"));
    Future<?> unused = poller.scheduleWithFixedDelay(this::syncFloors, refreshNanos, refreshNanos,
        TimeUnit.NANOSECONDS); // catches its own failures; shutdownNow() in close() ends it
    // The other servers' heartbeats (FloorSync.observe reads them every eighth of a lease), on a thread of
    // their own: a slow read of a remote datacenter must not delay the cycles that keep this server serving.
    Future<?> unusedObserver = observer.scheduleWithFixedDelay(sync::observe, refreshNanos, refreshNanos,
        TimeUnit.NANOSECONDS);
    if (!storeReady.isDone()) {
      // A store that connects in the background: the first cycle as soon as it answers, not a refresh
      // interval later (until that cycle, this server hands out no IDs).
      CompletableFuture<?> unusedFirstSync = storeReady.thenRun(() -> {
        try {
          poller.execute(this::syncFloors);
        } catch (RejectedExecutionException e) {
          // closed meanwhile
        }
      });
    }
    return poller;
  }

  /** One floor-sync cycle; the allocator is {@link #ready} once one has let it serve. */
  private void syncFloors() {
    sync.cycleQuietly();
    if (sync.serving()) {
      ready.complete(null);
    }
  }

  /** See {@link dev.idgen.core.Allocator#ready()}. */
  public CompletionStage<Void> ready() {
    return ready.copy();
  }

  /** Stops the cycles (a cycle in flight is interrupted). */
  public void close() {
    if (thread != null) {
      thread.shutdownNow();
    }
    if (observer != null) {
      observer.shutdownNow();
    }
    if (marks != null) {
      marks.shutdownNow();
    }
  }
}
