package dev.idgen.chaos;

import java.util.List;

/**
 * {@code repair-cleanup}: a full repair of the run's keyspace ({@code nodetool repair -full} on dc1's first node),
 * then {@code nodetool cleanup} on every member, one after the other: what an operator runs after a change of
 * the ring. Always applicable on a netns cluster; its burst starts with the repair.
 *
 * <p>Threads: the fault thread's ({@link Membership#change}).
 */
final class RepairCleanup extends BasicFault.OnMembership {
  RepairCleanup() {
    super("repair-cleanup", 3);
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    Membership m = run.membership();
    if (m.skippedAsBroken(run, kind())) {
      return;
    }
    String keyspace = run.keyspace();
    m.change(run, kind(), keyspace, occasion.withBurst(), burst -> {
      long t0 = System.nanoTime();
      burst.run();
      TopologyChanges.Change repaired = m.changes().repair(keyspace);
      TopologyChanges.Change cleaned = m.changes().cleanup();
      return Membership.combined(kind(), keyspace, t0, List.of(repaired, cleaned));
    });
  }
}
