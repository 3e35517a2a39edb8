package dev.idgen.client;

import com.google.errorprone.annotations.ThreadSafe;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * New, never handed out before, IDs of one sequence, served from ranges leased in advance.
 *
 * <p>Get one with {@link IdGenClient#sequence(String)}. A source is safe for any number of threads. In
 * steady state {@link #next()} is served from memory without locking or allocating; the next lease is
 * fetched in the background before the current one runs out. A caller waits only when the source has
 * nothing left (at start-up, or when the servers fall behind), for at most the client's wait deadline.
 *
 * <p>IDs are unique across every source, client and process, but a source hands them out in no
 * particular order across threads, and IDs leased but not handed out when the process stops are
 * never used (a gap, never a duplicate). Nor are those still unused when their range's
 * {@code valid_for}, set by the server, has passed since the source requested it: the source drops
 * them (counted in {@link IdSourceStats#idsExpired()}) and serves the next lease. A bulk call that
 * waited for a lease returns none of the IDs it took before if their range expired meanwhile: it
 * takes fresh ones in their place.
 *
 * <p>A sequence created with {@code ORDERING_STRICT} is the exception: every ID of it must be larger
 * than every ID whose allocation completed before the caller asked, which an ID held in memory is not,
 * so its source holds none. It learns the ordering from the servers' first answer (to the request it
 * makes when it is created, whose IDs it then drops: a gap), and from then on each {@link #next()},
 * {@link #next(int)}, {@link #fill} and {@link #nextAsync()} is one call to a server for exactly the IDs
 * asked for, and every caller waits for it; {@link IdSourceStats#strictOrdering()} tells.
 *
 * <p>Code that must not block (an event loop, a reactive pipeline) uses {@link #tryNext()}, which
 * never waits, or {@link #nextAsync()}, whose future completes when a lease arrives. Neither waits
 * for the network; like {@link #next()}, they may take the source's lock, which is only ever held for
 * a few in-memory steps.
 *
 * <p>Implemented by the library only: methods may be added in later versions.
 */
@ThreadSafe
public interface IdSource {
  /**
   * Returns the name of the sequence this source allocates from.
   *
   * @return the sequence's name
   */
  String sequence();

  /**
   * Returns a new ID.
   *
   * @return an ID never handed out before
   * @throws IdGenClientException if the source has nothing left and no lease came within the wait
   *     deadline, the server refused the lease (for instance {@code NOT_FOUND}), the sequence is
   *     exhausted, or the client is closed; {@link IdGenClientException#reason()} says which
   */
  long next();

  /**
   * Returns a new ID if the source holds one now, never waiting for a lease. When it holds none (at
   * start-up, or when the servers fall behind), it makes sure a lease is on its way and returns empty;
   * call again later, or use {@link #nextAsync()}.
   *
   * <p>A source of an {@code ORDERING_STRICT} sequence never holds an ID, so for it this always returns
   * empty, without calling a server: use {@link #nextAsync()}.
   *
   * @return an ID never handed out before, or empty if the source holds none at the moment
   * @throws IdGenClientException if the source can never serve again (reason {@code EXHAUSTED} or
   *     {@code CLOSED}), or, once, if its last lease request was refused while it held nothing (reason
   *     {@code REJECTED}, as the next caller of {@link #next()} would hear); never {@code TIMED_OUT}
   */
  OptionalLong tryNext();

  /**
   * Returns a new ID without blocking the caller: a future that is already complete when the source
   * holds an ID (the usual case), and otherwise completes when a lease arrives.
   *
   * <p>A future that could not complete at once is completed on the client's executor thread (on
   * {@link IdGenClient#close()}, on the closing thread): dependent stages added without an executor of
   * their own run there, so they must not block (use the {@code ...Async} variants with an executor for
   * work that may). Cancelling the future gives up the wait; an ID already taken for it goes back to the
   * source, unless its lease is over (a gap, counted in {@link IdSourceStats#idsExpired()}, as for a
   * strict sequence, whose IDs are for their caller only).
   *
   * @return a future of an ID never handed out before; it fails with an {@link IdGenClientException}
   *     where {@link #next()} would throw one (reason {@code TIMED_OUT} after the client's wait deadline,
   *     {@code REJECTED}, {@code EXHAUSTED}, {@code CLOSED}; never {@code INTERRUPTED})
   */
  CompletableFuture<Long> nextAsync();

  /**
   * Returns {@code count} new IDs at once: cheaper than as many calls to {@link #next()}.
   *
   * @param count how many IDs, {@code >= 0}
   * @return a new array of {@code count} IDs, each never handed out before
   * @throws IllegalArgumentException if {@code count < 0}
   * @throws IdGenClientException as {@link #next()}; IDs already taken for this call are then lost (a
   *     gap, never a duplicate)
   */
  long[] next(int count);

  /**
   * Fills {@code ids[from]} up to, not including, {@code ids[to]} with new IDs, without allocating
   * (except for an {@code ORDERING_STRICT} sequence, whose IDs come from a call made for this fill).
   *
   * @param ids the array to fill
   * @param from the first index to fill
   * @param to one past the last index to fill
   * @throws IndexOutOfBoundsException if {@code from..to} is not a range of {@code ids}
   * @throws IdGenClientException as {@link #next()}; the IDs it leaves, from {@code ids[from]} on, are
   *     valid and each there once; every other slot it wrote (where it had written an ID it then
   *     dropped, its range having expired while the call waited, or moved) holds {@code -1}, never an
   *     ID (IDs are never negative)
   */
  void fill(long[] ids, int from, int to);

  /**
   * Returns a snapshot of this source's counters.
   *
   * @return the counters as of now
   */
  IdSourceStats stats();
}
