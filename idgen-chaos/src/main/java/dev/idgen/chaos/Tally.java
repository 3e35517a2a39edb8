package dev.idgen.chaos;

/**
 * The checker's running totals over every sequence, added to by each check as it goes (a violation count, or
 * a count of what was judged). Mutable and single-threaded, as the checker is; read once every sequence was
 * checked, into {@link Checker.Report}.
 */
final class Tally {
  long duplicates;
  long outOfBounds;
  long belowFloor;
  long unleased;
  long lost;
  /** What the strict sequences lost (not blamed on planned restarts). */
  long strictLost;
  /** Stub IDs judged against an OK advance, those asked for soon after one, and those not judged (straddling). */
  long stubJudged;
  long stubSoonAfter;
  long stubStraddling;
  /** The fresh-advance sequences' IDs judged against a floor, and those at or below it. */
  long freshJudged;
  long freshBelow;
}
