package dev.idgen.core.store.cassandra;

import com.google.errorprone.annotations.Immutable;

/**
 * What one tier's compare-and-set operations did since the store started. Immutable snapshot.
 *
 * <p>An unknown outcome (a timeout after the statement was sent) is resolved by reading the row back at
 * the same serial consistency, into exactly one of three cases: {@code resolvedApplied} (the row carries
 * an operation id of this operation), {@code resolvedNotApplied} (the row still carries the operation id
 * the attempt was conditioned on), {@code resolvedAmbiguous} (someone else wrote the row since: the
 * attempt may or may not have applied), or, when it cannot be read back, {@code unresolved}. So
 * {@code unknown = resolvedApplied + resolvedNotApplied + resolvedAmbiguous + unresolved}.
 *
 * @param attempts CAS statements sent
 * @param applied CAS statements that applied (including unknown outcomes resolved as applied)
 * @param conflicts CAS statements that lost a race (the row had changed)
 * @param unknown CAS statements whose outcome was unknown (timeout, CAS write unknown)
 * @param resolvedApplied unknown outcomes that the read-back showed had applied
 * @param resolvedNotApplied unknown outcomes that the read-back showed had not applied
 * @param resolvedAmbiguous unknown outcomes after which the row carried a third party's operation id
 * @param unresolved unknown outcomes that could not be read back; their IDs are abandoned, never used
 * @param recovered attempts left open (ambiguous or unresolved) that a later read of the row showed had
 *     applied, so that their IDs were used after all
 * @param idsLost IDs this tier may have taken but could not hand on (a crash-equivalent gap), counted;
 *     an ambiguous removal whose IDs are gone from the row is counted here even if another holder took
 *     them, so this is an upper bound of the real gap
 * @param regressions rows read back showing less than this process had seen them hold (a pool's {@code taken},
 *     the global cursor's {@code reserved}, both only grow): the store forgot acknowledged writes, and the row
 *     was moved past what it may have handed out before anything was taken from it again
 */
@Immutable
public record CasStats(long attempts, long applied, long conflicts, long unknown, long resolvedApplied,
    long resolvedNotApplied, long resolvedAmbiguous, long unresolved, long recovered, long idsLost,
    long regressions) {

  /** The sum of two snapshots, e.g. of two stores. */
  public CasStats plus(CasStats o) {
    return new CasStats(attempts + o.attempts, applied + o.applied, conflicts + o.conflicts,
        unknown + o.unknown, resolvedApplied + o.resolvedApplied, resolvedNotApplied + o.resolvedNotApplied,
        resolvedAmbiguous + o.resolvedAmbiguous, unresolved + o.unresolved, recovered + o.recovered,
        idsLost + o.idsLost, regressions + o.regressions);
  }
}
