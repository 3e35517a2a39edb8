package dev.idgen.chaos;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * The fault schedule, drawn from the seed: after a warm-up (10 s, or an eighth of a short run), the first
 * round injects each chosen kind once, in a seeded order, 0.5–1.5 s apart; then kinds are drawn by weight
 * ({@link Fault#weight()}), 1–5 s apart, until a cool-down before the end (20 s, or a sixth). The first round
 * always completes, even on a slow machine, so that every run sees every kind. A run told
 * {@link ChaosRun.Settings#rounds()} rounds gets that many such rounds, each in an order of its own, with a
 * kind given more than once a round ({@link ChaosRun.Settings#perRound()}) that many times: counts a recorded
 * run must reach (five of each membership change, twenty clock steps) are then met by construction rather
 * than by the luck of the draw, however long each fault takes. A fault that
 * {@link Fault.Trait#HOLDS} brings an advance burst along (always in the first round, then one time in three;
 * only in runs that have advance bursts, so that a run without them keeps every ID in the reckoning). Before
 * each fault, every live server's counters are logged ({@code counters}), for the checker's table by kind.
 *
 * <p>Threads: runs on the run's main thread, which is the fault thread: the only one that draws from the
 * seeded random and numbers the faults.
 */
final class FaultSchedule {
  private final FaultContext run;

  FaultSchedule(FaultContext run) {
    this.run = run;
  }

  /** Injects faults for {@code runNanos}, then returns (the first round may take longer). */
  void run(long runNanos) throws Exception {
    long start = System.nanoTime();
    long warmup = Math.min(TimeUnit.SECONDS.toNanos(10), runNanos / 8);
    long cooldown = Math.min(TimeUnit.SECONDS.toNanos(20), runNanos / 6);
    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(warmup));
    Random random = run.random();
    List<String> kinds = run.settings().faultKinds();
    List<String> firstRound = firstRounds(kinds, run.settings().rounds(), run.settings().perRound(), random);
    // (`drawn` counts the draws; the context also counts the bursts that come along with the faults that hold.)
    int drawn = 0;
    while (drawn < firstRound.size() || System.nanoTime() - start < runNanos - cooldown) {
      // Between faults: 1-5 s; in the first round 0.5-1.5 s, so that a short run gets through every kind.
      Thread.sleep(drawn < firstRound.size() ? 500 + random.nextInt(1_000) : 1_000 + random.nextInt(4_000));
      if (drawn >= firstRound.size() && System.nanoTime() - start >= runNanos - cooldown) {
        break;
      }
      boolean firstRoundFault = drawn < firstRound.size();
      drawn++;
      Fault fault = FaultKinds.named(firstRoundFault ? firstRound.get(drawn - 1) : drawByWeight(kinds, random));
      boolean withBurst = fault.traits().contains(Fault.Trait.HOLDS) && kinds.contains("advance-burst")
          && (firstRoundFault || random.nextInt(3) == 0);
      if (fault.traits().contains(Fault.Trait.NEEDS_SERVERS)) {
        run.restarts().awaitAll();
      }
      run.nextFault();
      run.fleet().snapshotCounters(run.faultLabel());
      fault.inject(run, new Fault.Occasion(withBurst, firstRoundFault));
      run.counted();
    }
    long left = runNanos - (System.nanoTime() - start);
    if (left > 0) {
      Thread.sleep(TimeUnit.NANOSECONDS.toMillis(left));
    }
    run.say("faults injected: " + run.injected());
  }

  /**
   * The faults of the first {@code rounds} rounds, in order: in each, every kind of {@code kinds} once, or
   * {@code perRound} times, shuffled, then each kind that comes {@link Fault#after()} another put after it
   * (their places are shared out alternately, the other first, so that each one has one before it).
   */
  static List<String> firstRounds(List<String> kinds, int rounds, Map<String, Integer> perRound, Random random) {
    List<String> out = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      List<String> round = new ArrayList<>();
      for (String k : kinds) {
        round.addAll(Collections.nCopies(perRound.getOrDefault(k, 1), k));
      }
      Collections.shuffle(round, random);
      for (String k : kinds) {
        Optional<String> first = FaultKinds.named(k).after();
        if (first.isPresent() && round.contains(first.get())) {
          interleave(round, first.get(), k);
        }
      }
      out.addAll(round);
    }
    return out;
  }

  /** Puts {@code first} and {@code then} back in their places in {@code round} alternately, {@code first} first. */
  private static void interleave(List<String> round, String first, String then) {
    List<Integer> places = new ArrayList<>();
    for (int i = 0; i < round.size(); i++) {
      if (round.get(i).equals(first) || round.get(i).equals(then)) {
        places.add(i);
      }
    }
    int firsts = Collections.frequency(round, first);
    int thens = places.size() - firsts;
    int f = 0;
    int t = 0;
    for (int place : places) {
      // Alternate while both are left; then the rest of whichever has more.
      boolean takeFirst = t >= thens || (f < firsts && f <= t);
      round.set(place, takeFirst ? first : then);
      if (takeFirst) {
        f++;
      } else {
        t++;
      }
    }
  }

  /** One of {@code kinds}, drawn by their weights. */
  private static String drawByWeight(List<String> kinds, Random random) {
    int weights = kinds.stream().mapToInt(FaultKinds.WEIGHTS::get).sum();
    int pick = random.nextInt(weights);
    for (String k : kinds) {
      pick -= FaultKinds.WEIGHTS.get(k);
      if (pick < 0) {
        return k;
      }
    }
    return kinds.get(kinds.size() - 1);
  }
}
