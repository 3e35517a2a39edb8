package dev.idgen.chaos;

import java.util.List;
import java.util.Set;

/**
 * {@code server-isolate}: a random server cut off, in both directions, from its own datacenter's nodes (rules
 * in its own namespace), while the clients, in the root namespace, still reach it: it serves from its
 * reserve, cannot refill or learn floors, and an advance cannot be confirmed by it. Held 3 s to
 * {@code --max-hold}; only on a netns cluster.
 *
 * <p>Threads: the fault thread's ({@link FaultContext#hold}).
 */
final class ServerIsolate extends BasicFault.OnNetwork {
  ServerIsolate() {
    super("server-isolate", 2, Set.of(Trait.HOLDS, Trait.NEEDS_SERVERS));
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    ChaosNetwork net = run.network().orElseThrow();
    ChaosCassandra cassandra = run.cassandra();
    int slot = run.random().nextInt(run.fleet().size());
    ServerNode node = run.fleet().get(slot);
    List<String> targets = ChaosNetwork.addresses(cassandra, cassandra.nodes(node.datacenter()));
    String tag = run.tag();
    long hold = run.holdMillis();
    HeldCut cut = new HeldCut();
    run.hold(kind(), run.bounds().storeFault(1, hold), node.name(), node.name() + " from " + node.datacenter()
        + " " + tag, hold, occasion.withBurst(),
        () -> cut.set(net.isolateFrom(ChaosNetwork.serverHost(slot), targets, tag)), cut::heal);
  }
}
