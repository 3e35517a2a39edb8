package dev.idgen.chaos;

import java.util.List;

/**
 * {@code add-dc}: a third datacenter added to the run's keyspace and removed again, in Cassandra's order: dc3's
 * first spare joins without bootstrap, {@code ALTER KEYSPACE} gives the keyspace one replica there,
 * {@code nodetool rebuild} streams its data from dc1; it holds 3 s to {@code --max-hold}; then the keyspace
 * drops dc3 and its node is decommissioned, so that the kind can come again. The burst that may come along
 * starts right after the {@code ALTER}: an advance must then cover dc3's pools too (what TopologyChangesIT
 * found the servers missing). No server runs in dc3. Skipped, saying why, if dc3 is a member already.
 *
 * <p>Threads: the fault thread's ({@link Membership#change}).
 */
final class AddDatacenter extends BasicFault.OnMembership {
  static final String DC = "dc3";

  AddDatacenter() {
    super("add-dc", 3);
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    Membership m = run.membership();
    if (m.skippedAsBroken(run, kind())) {
      return;
    }
    if (m.cluster().datacenters().contains(DC)) {
      m.skip(run, kind(), DC + " is in the cluster already: " + m.cluster().nodes(DC));
      return;
    }
    if (m.cluster().spare(DC).isEmpty()) {
      m.skip(run, kind(), DC + " has no spare node left");
      return;
    }
    long hold = run.holdMillis();
    List<String> keyspaces = List.of(run.keyspace());
    m.change(run, kind(), m.cluster().spare(DC).get() + " as " + DC + " of " + run.keyspace() + ", held " + hold
        + " ms", occasion.withBurst(), burst -> {
          long t0 = System.nanoTime();
          TopologyChanges.Change joined = m.changes().joinDatacenter(DC);
          TopologyChanges.Change altered = m.changes().replicate(DC, keyspaces);
          burst.run();
          TopologyChanges.Change rebuilt = m.changes().rebuild(DC, keyspaces);
          Thread.sleep(hold); // dc3 replicates the keyspace while the servers work
          TopologyChanges.Change removed = m.changes().removeDatacenter(DC, keyspaces);
          return Membership.combined(kind(), DC, t0, List.of(joined, altered, rebuilt, removed));
        });
  }
}
