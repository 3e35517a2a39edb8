package dev.idgen.chaos;

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
    var drawn = m.draw(run, kind(), MembershipPlan::bootstraps, MembershipPlan::whyNoBootstrap);
    if (drawn.isEmpty()) {
      return;
    }
    MembershipPlan.Choice c = drawn.get().getValue();
    m.change(run, kind(), c.node() + " into " + c.dc() + " (" + c.note() + ")", occasion.withBurst(), burst -> {
      burst.run();
      return m.changes().bootstrap(c.dc());
    });
  }
}
