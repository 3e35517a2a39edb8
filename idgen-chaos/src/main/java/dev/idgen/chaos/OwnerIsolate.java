package dev.idgen.chaos;

import dev.idgen.chaos.RunLog.SequenceSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code owner-isolate}: the strict sequence's owner (a server of its home datacenter if none can be found)
 * cut off, drawn: from every Cassandra node only (clients and the other servers still reach it and forward to
 * it: it must stop serving when its lease runs out, before another server takes over), or from everything
 * (every packet of its namespace's link). Held long enough for a take-over (1.5 owner leases + 1 s) in the
 * first round and then one time in two, else as the other network faults. Only on a netns cluster, in runs
 * with strict clients.
 *
 * <p>Threads: the fault thread's ({@link FaultContext#hold}).
 */
final class OwnerIsolate extends BasicFault.OnNetwork {
  OwnerIsolate() {
    super("owner-isolate", 2, Set.of(Trait.HOLDS, Trait.NEEDS_SERVERS, Trait.OWNER));
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    ChaosNetwork net = run.network().orElseThrow();
    List<SequenceSpec> strict = run.sequences().strict();
    SequenceSpec seq = strict.get(run.random().nextInt(strict.size()));
    ServerNode fallback = OwnerKill.homeServer(run, seq);
    boolean whole = run.random().nextBoolean();
    long hold = run.holdMillis();
    boolean takeOver = run.random().nextBoolean() || occasion.firstRound();
    if (takeOver) {
      hold = Math.max(hold, ownerLeaseMillis(run.settings()) * 3 / 2 + 1_000);
    }
    Optional<ServerNode> owner = run.owners().currentOwner(seq);
    ServerNode node = owner.orElse(fallback);
    int slot = run.fleet().nodes().indexOf(node);
    List<String> nodes = new ArrayList<>();
    ChaosCassandra cassandra = run.cassandra();
    ChaosCassandra.DATACENTERS.forEach(dc -> nodes.addAll(ChaosNetwork.addresses(cassandra, cassandra.nodes(dc))));
    String tag = run.tag();
    HeldCut cut = new HeldCut();
    run.hold(kind(), run.bounds().storeFault(1, hold), node.name(), node.name() + " of " + seq.name()
        + (owner.isPresent() ? "" : " owner-unknown") + (whole ? " from everything " : " from cassandra ") + tag
        + (takeOver ? " take-over" : ""), hold, occasion.withBurst(),
        () -> cut.set(whole ? net.isolate(List.of(ChaosNetwork.serverHost(slot)), tag)
            : net.isolateFrom(ChaosNetwork.serverHost(slot), nodes, tag)),
        cut::heal);
  }

  /** The servers' owner lease: the run's, or their default. */
  private static long ownerLeaseMillis(ChaosRun.Settings settings) {
    return settings.strictOwnerLease() == null ? ChaosRun.DEFAULT_OWNER_LEASE_MILLIS
        : settings.strictOwnerLease().toMillis();
  }
}
