package dev.idgen.client;

import com.google.errorprone.annotations.ThreadSafe;

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
 * them (counted in {@link IdSourceStats#idsExpired()}) and serves the next lease.
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
   * Fills {@code ids[from]} up to, not including, {@code ids[to]} with new IDs, without allocating.
   *
   * @param ids the array to fill
   * @param from the first index to fill
   * @param to one past the last index to fill
   * @throws IndexOutOfBoundsException if {@code from..to} is not a range of {@code ids}
   * @throws IdGenClientException as {@link #next()}; the IDs already written are valid
   */
  void fill(long[] ids, int from, int to);

  /**
   * Returns a snapshot of this source's counters.
   *
   * @return the counters as of now
   */
  IdSourceStats stats();
}
