package dev.idgen.chaos;

import dev.idgen.chaos.RunLog.SequenceSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * {@code fresh-advance}: an {@code AdvanceSequence} right after a sequence is created, while a server of each
 * datacenter loads it and makes its first refill, at a floor inside the first DC block; in two episodes of
 * three the loaders are frozen (SIGSTOP) as soon as the global cursor shows a datacenter's first take, until
 * both pools show the floor; then runtimes loaded after the advance (other servers, servers that unloaded it as
 * idle, servers restarted later) allocate from it. The episode itself is {@link FreshAdvance}'s; this class
 * draws it from the seed: the creating server, one loader per datacenter with its count, whether they are
 * frozen at the first global take, when the advance starts (0–30 ms after the freeze, or 0–100 ms after the
 * loaders), its floor inside the first DC block and its server (not a loader). Its lost bound:
 * {@link LossBounds#freshAdvance}.
 *
 * <p>Threads: drawn and run on the fault thread; the episode's calls on the advance pool, its prober on a
 * thread of its own ({@link FreshAdvance}).
 */
final class FreshAdvanceFault extends BasicFault {
  FreshAdvanceFault() {
    super("fresh-advance", 3, Set.of(Trait.NEEDS_SERVERS));
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    FreshAdvance episodes = run.freshAdvance();
    FreshAdvance.Plan plan = draw(run.fleet(), run.random(), FreshAdvance.PREFIX + run.faultNo());
    Fleet fleet = run.fleet();
    long bound = run.bounds().freshAdvance(plan.pause() ? plan.loaders().size() : 0);
    String loaderNames = plan.loaders().stream().map(i -> fleet.get(i).name()).toList().toString().replace(" ", "");
    String detail = plan.name() + " loaders=" + loaderNames + " advance-on=" + fleet.get(plan.advancer()).name()
        + " advance-after-ms=" + plan.advanceAfterMillis() + " floor-offset=" + plan.floorOffset()
        + (plan.pause() ? " freeze-at-first-take" : "");
    long at = run.clock().millis();
    run.log().fault(at, kind(), bound, detail);
    run.say("fresh-advance " + detail);
    String outcome = plan.name();
    try {
      outcome = episodes.run(plan, new FreshAdvance.Hooks() {
        @Override
        public void created(SequenceSpec spec) {
          run.sequences().added(spec);
        }

        @Override
        public void advanceFailed(String sequence, long floor) {
          run.bursts().failed(sequence, floor);
        }
      });
      run.say("fresh-advance: " + outcome);
    } finally {
      run.log().window(run.faultLabel(), kind(), at, run.clock().millis(), outcome);
    }
    episodes.startProber();
  }

  /** An episode named {@code name}, drawn from {@code random} in the schedule's fixed order. */
  private static FreshAdvance.Plan draw(Fleet fleet, Random random, String name) {
    List<Integer> loaders = new ArrayList<>();
    List<Long> counts = new ArrayList<>();
    for (String dc : ChaosCassandra.DATACENTERS) {
      List<Integer> slots = new ArrayList<>();
      for (int i = 0; i < fleet.size(); i++) {
        if (fleet.get(i).datacenter().equals(dc)) {
          slots.add(i);
        }
      }
      loaders.add(slots.get(random.nextInt(slots.size())));
      counts.add(1L + random.nextInt(10));
    }
    boolean pause = random.nextInt(3) != 0;
    long advanceAfter = random.nextInt(pause ? 30 : 100);
    long floorOffset = FreshAdvance.MIN_FLOOR_OFFSET
        + random.nextInt((int) (FreshAdvance.MAX_FLOOR_OFFSET - FreshAdvance.MIN_FLOOR_OFFSET));
    List<Integer> others = new ArrayList<>();
    for (int i = 0; i < fleet.size(); i++) {
      if (!loaders.contains(i)) {
        others.add(i);
      }
    }
    int advancer = others.get(random.nextInt(others.size()));
    int creator = random.nextInt(fleet.size());
    return new FreshAdvance.Plan(name, creator, loaders, counts, pause, advanceAfter, floorOffset, advancer);
  }
}
