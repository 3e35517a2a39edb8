package dev.idgen.core.store.cassandra;

import com.google.errorprone.annotations.Immutable;

/**
 * What one tier's compare-and-set operations did since the store started. Immutable snapshot.
 *
 * @param attempts CAS statements sent
 * @param applied CAS statements that applied (including unknown outcomes resolved as applied)
 * @param conflicts CAS statements that lost a race (the row had changed)
 * @param unknown CAS statements whose outcome was unknown (timeout, CAS write unknown)
 * @param resolvedApplied unknown outcomes that the read-back showed had applied
 * @param resolvedNotApplied unknown outcomes that the read-back showed had not applied
 * @param unresolved unknown outcomes that could not be read back; their IDs are abandoned, never used
 * @param idsLost IDs this tier took but could not hand on (a crash-equivalent gap), counted
 */
@Immutable
public record CasStats(long attempts, long applied, long conflicts, long unknown, long resolvedApplied,
    long resolvedNotApplied, long unresolved, long idsLost) {}
