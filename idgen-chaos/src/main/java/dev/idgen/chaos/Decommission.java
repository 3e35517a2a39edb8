package dev.idgen.chaos;

import java.util.List;

/**
 * {@code decommission}: a joined spare of dc1 or dc2 leaves ({@code nodetool decommission}: it streams its ranges
 * away and leaves the ring; the launcher stops it and removes its namespace), drawn among those whose datacenter
 * keeps at least the largest replication factor any keyspace has there ({@link MembershipPlan#decommissions()}).
 * Skipped, saying why, when none may leave (no spare joined: a {@code bootstrap} comes first).
 *
 * <p>Threads: the fault thread's ({@link Membership#change}).
 */
final class Decommission extends BasicFault.OnMembership {
  Decommission() {
    super("decommission", 3);
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    Membership m = run.membership();
    if (m.skippedAsBroken(run, kind())) {
      return;
    }
    MembershipPlan plan = m.plan(run);
    List<MembershipPlan.Choice> choices = plan.decommissions();
    if (choices.isEmpty()) {
      m.skip(run, kind(), plan.whyNoDecommission());
      return;
    }
    MembershipPlan.Choice c = choices.get(run.random().nextInt(choices.size()));
    m.change(run, kind(), c.node() + " of " + c.dc() + " (" + c.note() + ")", occasion.withBurst(), burst -> {
      burst.run();
      return m.changes().decommission(c.node());
    });
  }
}
