package dev.idgen.chaos;

import java.util.Set;

/**
 * {@code dc-partition}: dc1 | dc2 in both directions: every node of each datacenter drops what comes from, and
 * goes to, the other's nodes (nftables rules in the nodes' namespaces), held 3 s to {@code --max-hold}. On
 * netns-3x3 neither side then has a SERIAL quorum for the global cursors; on netns-3x1 dc1 keeps one. Only on
 * a netns cluster.
 *
 * <p>Threads: the fault thread's ({@link FaultContext#hold}).
 */
final class DcPartition extends BasicFault.OnNetwork {
  DcPartition() {
    super("dc-partition", 4, Set.of(Trait.HOLDS));
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    ChaosNetwork net = run.network().orElseThrow();
    String tag = run.tag();
    long hold = run.holdMillis();
    HeldCut cut = new HeldCut();
    run.hold(kind(), run.bounds().storeFault(run.fleet().size(), hold), "dc1|dc2", "dc1|dc2 " + tag, hold,
        occasion.withBurst(), () -> cut.set(net.partition(run.cassandra(), tag)), cut::heal);
  }
}
