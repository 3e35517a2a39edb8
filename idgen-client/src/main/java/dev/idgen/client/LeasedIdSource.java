package dev.idgen.client;

import com.google.errorprone.annotations.ThreadSafe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;

/**
 * The {@link IdSource} of one sequence in one client: leased ranges held in memory, handed out
 * lock-free, and refilled in the background through {@code IdGen.Allocate}. This class is the top of the
 * chain {@link SourceState} → {@link LeaseExpiry} → {@link Refiller} → {@link Waiters}: it holds the
 * fast paths and falls through to those rooms, and to {@link StrictRequest} for strict sequences. Its
 * design is in docs/client.md, "Inside a source (for maintainers)".
 *
 * <p>Threads: the fast path ({@link #next()}, and the first take of {@link #tryNext()}, {@link
 * #nextAsync()} and {@link #fill}) reads the volatile {@code current} lease and takes an index with one
 * {@code getAndAdd} ({@link #fill}: a compare-and-set that takes all it needs or nothing): no lock, no
 * allocation, no clock read, and no call out of this class but {@link Lease}'s final methods, unless the
 * index is the lease's refill mark. A caller that finds the lease used
 * up takes the source's lock (see {@link SourceState}), installs the next range, or waits, or makes a
 * strict request. {@link #close()} may run concurrently with any of them: it expires the current lease in
 * one atomic step, so that a thread that read it before gets nothing more from it.
 */
@ThreadSafe
final class LeasedIdSource extends Waiters implements IdSource {
  LeasedIdSource(
      String sequence, ClientSettings settings, Endpoints endpoints, ScheduledExecutorService executor) {
    super(sequence, settings, endpoints, executor);
  }

  /** Requests the first lease, so that the first callers are less likely to wait. */
  void start() {
    boolean launch;
    lock.lock();
    try {
      launch = requestLocked(true);
    } finally {
      lock.unlock();
    }
    if (launch) {
      launch();
    }
  }

  @Override
  public String sequence() {
    return sequence;
  }

  @Override
  public long next() {
    Lease l = current;
    long i = l.take(1);
    if (i < l.count) {
      if (i == l.refillAt) {
        refillMarkReached(null, 0);
      }
      return l.id(i);
    }
    return nextSlow();
  }

  private long nextSlow() {
    if (strict) {
      long[] id = new long[1];
      StrictRequest.fill(this, id, 0, 1, System.nanoTime() + settings.waitDeadlineNanos(), false);
      return id[0];
    }
    Waiter w = new Waiter();
    try {
      for (;;) {
        Lease l = awaitLease(w, 1);
        if (l == null) {
          break; // the source learned that the sequence is strict while this caller waited
        }
        long i = l.take(1);
        if (i < l.count) {
          if (i == l.refillAt) {
            refillMarkReached(w, 0);
          }
          return l.id(i);
        }
      }
    } finally {
      w.done();
    }
    long[] id = new long[1];
    StrictRequest.fill(this, id, 0, 1, w.deadlineOr(System.nanoTime() + settings.waitDeadlineNanos()), w.counted);
    return id[0];
  }

  @Override
  public OptionalLong tryNext() {
    Lease l = current;
    long i = l.take(1);
    if (i < l.count) {
      if (i == l.refillAt) {
        refillMarkReached(null, 0);
      }
      return OptionalLong.of(l.id(i));
    }
    OptionalLong id = OptionalLong.empty();
    boolean launch = false;
    lock.lock();
    try {
      for (;;) {
        if (closed) {
          throw failure(IdGenClientException.Reason.CLOSED, null, "the IdGenClient is closed", null);
        }
        l = current;
        i = l.take(1);
        if (i < l.count) {
          id = OptionalLong.of(l.id(i));
          // |=: an install on an earlier pass may have decided a request (and set inFlight) already.
          launch |= i == l.refillAt && requestLocked(false);
          break;
        }
        if (!queue.isEmpty()) {
          launch |= installNextLocked();
          continue;
        }
        if (exhausted != null) {
          throw exhaustedLocked();
        }
        if (strict) {
          break; // holds nothing, ever: only a call of its own serves a caller, which tryNext cannot wait for
        }
        if (rejections != reportedRejections) {
          throw rejectedLocked();
        }
        launch |= requestLocked(true);
        break;
      }
    } finally {
      lock.unlock();
      if (launch) {
        launch();
      }
    }
    return id;
  }

  @Override
  public CompletableFuture<Long> nextAsync() {
    Lease l = current;
    long i = l.take(1);
    if (i < l.count) {
      if (i == l.refillAt) {
        refillMarkReached(null, 0);
      }
      return CompletableFuture.completedFuture(l.id(i));
    }
    return nextAsyncSlow();
  }

  private CompletableFuture<Long> nextAsyncSlow() {
    if (strict) {
      CompletableFuture<Long> f = new CompletableFuture<>();
      StrictRequest.complete(this, f, System.nanoTime() + settings.waitDeadlineNanos(), false);
      return f;
    }
    AsyncWaiter w = null;
    boolean launch = false;
    lock.lock();
    try {
      for (;;) {
        if (closed) {
          return CompletableFuture.failedFuture(
              failure(IdGenClientException.Reason.CLOSED, null, "the IdGenClient is closed", null));
        }
        Lease l = current;
        long i = l.take(1);
        if (i < l.count) {
          launch |= i == l.refillAt && requestLocked(false);
          return CompletableFuture.completedFuture(l.id(i));
        }
        if (!queue.isEmpty()) {
          launch |= installNextLocked();
          continue;
        }
        if (exhausted != null) {
          return CompletableFuture.failedFuture(exhaustedLocked());
        }
        if (strict) {
          break; // w stays null: a strict request, once unlocked
        }
        if (rejections != reportedRejections) {
          // The last request failed while nobody waited: this caller is the first to hear.
          return CompletableFuture.failedFuture(rejectedLocked());
        }
        w = new AsyncWaiter(rejections);
        asyncWaiters.addLast(w);
        waits++;
        waitingDemand++;
        launch |= requestLocked(true);
        break;
      }
    } finally {
      lock.unlock();
      if (launch) {
        launch();
      }
    }
    if (w == null) {
      CompletableFuture<Long> f = new CompletableFuture<>();
      StrictRequest.complete(this, f, System.nanoTime() + settings.waitDeadlineNanos(), false);
      return f;
    }
    scheduleAsyncTimeout(w);
    return w.future;
  }

  @Override
  public long[] next(int count) {
    if (count < 0) {
      throw new IllegalArgumentException("count: " + count + " (expected: >= 0)");
    }
    long[] ids = new long[count];
    fill(ids, 0, count);
    return ids;
  }

  @Override
  public void fill(long[] ids, int from, int to) {
    Objects.checkFromToIndex(from, to, ids.length);
    int need = to - from;
    if (need == 0) {
      return;
    }
    Lease l = current;
    long i = l.takeAll(need);
    if (i >= 0) {
      for (int k = 0; k < need; k++) {
        ids[from + k] = l.id(i + k);
      }
      if (l.refillAt >= i && l.refillAt < i + need) {
        refillMarkReached(null, 0);
      }
      return; // the fast path: one take from the current lease, nothing else
    }
    fillSlow(ids, from, to);
  }

  /**
   * A fill that one take from the current lease cannot serve: its IDs are taken under the lock and held
   * until it returns them, checked against their leases (see {@link #keepUnexpired}), or fails. Whatever
   * it leaves in {@code ids} then holds only IDs it keeps, each once; every other slot it wrote is {@code
   * NO_ID}, on every way out.
   */
  private void fillSlow(long[] ids, int from, int to) {
    if (strict) {
      StrictRequest.fill(this, ids, from, to, System.nanoTime() + settings.waitDeadlineNanos(), false);
      return;
    }
    Waiter w = new Waiter();
    int pos = from;
    // One past the last slot written: keepUnexpired moves the IDs it keeps to the front, out of the
    // slots behind them, which a failure must clear too, not only those up to pos.
    int written = from;
    try {
      while (pos < to) {
        int end = awaitIds(w, ids, pos, to);
        if (end < 0) {
          break; // the source learned that the sequence is strict while this caller waited
        }
        pos = end;
        written = Math.max(written, pos);
        if (pos == to) {
          pos = keepUnexpired(w, ids, from, pos, false);
        }
      }
    } catch (RuntimeException | Error e) {
      Arrays.fill(ids, keepUnexpired(w, ids, from, pos, true), written, NO_ID);
      throw e;
    } finally {
      w.done();
    }
    if (pos == to) {
      return;
    }
    // The caller waited with cached IDs, leased perhaps before it asked: not new enough for a strict
    // sequence. Dropped (its strict request asks for them too); NO_ID wherever it wrote one until then.
    dropHeld(w);
    Arrays.fill(ids, from, written, NO_ID);
    long deadline = System.nanoTime() + settings.waitDeadlineNanos();
    StrictRequest.fill(this, ids, from, to, w.deadlineOr(deadline), w.counted);
  }

  @Override
  public IdSourceStats stats() {
    lock.lock();
    try {
      return IdSourceStats.builder(sequence).idsServed(leasedServedLocked() + strictServed)
          .leases(leases).leaseSize(strict ? 0 : leaseSize).idsHeld(idsLeftLocked()).waits(waits)
          .waitTime(Duration.ofNanos(waitNanos)).failedCalls(failedCalls).idsExpired(idsExpired)
          .strictOrdering(strict).build();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Cancels the call in flight, any scheduled retry and expiry tasks, drops what the source holds (a
   * gap, never a duplicate; the current lease through {@link Lease#expire()}, so that a thread that
   * read it before gets nothing more from it), and fails waiting and later callers with
   * {@link IdGenClientException.Reason#CLOSED}.
   */
  void close() {
    Runnable stopRequest;
    List<ScheduledFuture<?>> expiryTasks = new ArrayList<>();
    List<Runnable> after = new ArrayList<>();
    List<StrictRequest> requests;
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      requests = new ArrayList<>(strictRequests);
      strictRequests.clear();
      dropAllLocked(expiryTasks);
      stopRequest = stopRequestLocked();
      changed.signalAll();
      serveAsyncLocked(after); // fails them: closed
    } finally {
      lock.unlock();
    }
    after.forEach(Runnable::run);
    stopRequest.run();
    for (ScheduledFuture<?> t : expiryTasks) {
      t.cancel(false);
    }
    for (StrictRequest q : requests) {
      q.end(IdGenClientException.Reason.CLOSED);
    }
  }

}
