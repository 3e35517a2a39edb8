package dev.idgen.chaos;

import java.util.Optional;
import java.util.Set;

/**
 * One kind of fault the run injects: {@code server-kill}, {@code dc-partition} … ({@link FaultKinds#ALL}).
 * The run's fault thread ({@link FaultSchedule}) draws a kind, then calls its {@link #inject}, which applies
 * the fault, holds it, heals it, and logs it, all before it returns (an owner kill's restart excepted: it
 * runs on {@link FaultContext#restarts()}, and the schedule waits for it before the next kind that needs every
 * server).
 *
 * <p><b>Adding a kind</b> takes one class and one line:
 * <ol>
 *   <li>a final, package-private class in this package that extends {@link BasicFault} (or
 *       {@link BasicFault.OnNetwork} for a kind made with nftables rules), naming its kind, weight and traits
 *       in its constructor. It is a singleton and holds no state: what one injection draws or holds lives in its {@link #inject} call, what outlives
 *       it in {@link FaultContext}. Draw everything from {@link FaultContext#random()}, on the fault thread, in
 *       a fixed order (so that a seed always gives the same schedule). Log the fault with
 *       {@code run.log().fault(at, kind, lostBound, detail)} (its lost bound from {@link LossBounds}: what it
 *       may lose at most) and its time in force with {@code run.log().window(…)}; or, for a fault that holds
 *       for a while, call {@link FaultContext#hold}, which logs both, starts the burst that comes along, and
 *       heals in a {@code finally}. A cluster that cannot take it says why in {@link #unavailable};
 *   <li>its line in {@link FaultKinds#ALL}: its place there is its column in the table by kind.
 * </ol>
 * Its {@link #weight()} sets how often it is drawn after the first round, its {@link #traits()} how the
 * schedule treats it. Then document it (RELIABILITY.md, {@code --faults} in {@link ChaosCommand}).
 *
 * <p>Threads: {@link #inject} runs on the fault thread only, one fault at a time; what it starts beside
 * itself (advance bursts, an owner kill's restart) goes through the context's executors.
 */
interface Fault {
  /** How the schedule treats a kind. */
  enum Trait {
    /** Holds for a while: brings an advance burst along (first round always, then one time in three). */
    HOLDS,
    /**
     * Starts, stops, kills, freezes or cuts a server, or needs every server up: waits first for an owner
     * kill's restart under way.
     */
    NEEDS_SERVERS,
    /** Aimed at the owner of a strict sequence: only in runs with one (strict clients > 0). */
    OWNER,
    /** A planned stop: a run of these only must lose nothing ({@code restart_lost} = 0). */
    PLANNED,
    /** Never a default kind: injected only when {@code --faults} names it. */
    ON_REQUEST
  }

  /** Whether a held fault brings a burst along, and whether it is of the first round (one of each kind). */
  record Occasion(boolean withBurst, boolean firstRound) {}

  /** The kind's name as {@code --faults}, {@code run.txt} and the table by kind spell it. */
  String kind();

  /** How often it is drawn after the first round, relative to the other kinds of the run. */
  int weight();

  default Set<Trait> traits() {
    return Set.of();
  }

  /**
   * The kind this one has something to do only after ({@code decommission}: a joined spare, after a
   * {@code bootstrap}); in each of the first rounds ({@link FaultSchedule#firstRounds}) it comes after it.
   */
  default Optional<String> after() {
    return Optional.empty();
  }

  /** Why {@code cassandra} cannot take this kind; empty if it can. */
  default Optional<String> unavailable(ChaosCassandra cassandra) {
    return Optional.empty();
  }

  /** Applies one fault of this kind, holds it, heals it, and logs it ({@code fault}, {@code window}). */
  void inject(FaultContext run, Occasion occasion) throws Exception;
}
