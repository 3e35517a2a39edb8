package dev.idgen.chaos;

import java.util.Set;

/**
 * {@code dc-oneway}: one direction only, dc1 → dc2 or dc2 → dc1 (drawn): the sending datacenter's nodes drop
 * what they send to the other's. (TCP connections then fail both ways, their answers being lost: what is
 * one-way is what the rules drop.) Held 3 s to {@code --max-hold}; only on a netns cluster.
 *
 * <p>Threads: the fault thread's ({@link FaultContext#hold}).
 */
final class DcOneWay extends BasicFault.OnNetwork {
  DcOneWay() {
    super("dc-oneway", 2, Set.of(Trait.HOLDS));
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    ChaosNetwork net = run.network().orElseThrow();
    String from = run.random().nextBoolean() ? "dc1" : "dc2";
    String to = from.equals("dc1") ? "dc2" : "dc1";
    String tag = run.tag();
    long hold = run.holdMillis();
    HeldCut cut = new HeldCut();
    run.hold(kind(), run.bounds().storeFault(run.fleet().size(), hold), from + "->" + to,
        from + "->" + to + " " + tag, hold, occasion.withBurst(),
        () -> cut.set(net.oneWay(run.cassandra(), from, to, tag)), cut::heal);
  }
}
