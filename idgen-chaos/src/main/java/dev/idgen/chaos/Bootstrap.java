package dev.idgen.chaos;

import java.util.List;

/**
 * {@code bootstrap}: a spare node joins dc1 or dc2 (drawn among those that may grow: {@link MembershipPlan#bootstraps()})
 * and streams its share of the data ({@code cassandra.sh join}); it stays until a {@code decommission} takes it
 * out. Skipped, saying why, when every datacenter is at its topology's size + 1 or has no spare left. An advance
 * burst, when one comes along, starts as the node is launched.
 *
 * <p>Threads: the fault thread's ({@link Membership#change}).
 */
final class Bootstrap extends BasicFault.OnMembership {
  Bootstrap() {
    super("bootstrap", 3);
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    Membership m = run.membership();
    if (m.skippedAsBroken(run, kind())) {
      return;
    }
    MembershipPlan plan = m.plan(run);
    List<MembershipPlan.Choice> choices = plan.bootstraps();
    if (choices.isEmpty()) {
      m.skip(run, kind(), plan.whyNoBootstrap());
      return;
    }
    MembershipPlan.Choice c = choices.get(run.random().nextInt(choices.size()));
    m.change(run, kind(), c.node() + " into " + c.dc() + " (" + c.note() + ")", occasion.withBurst(), burst -> {
      burst.run();
      return m.changes().bootstrap(c.dc());
    });
  }
}
