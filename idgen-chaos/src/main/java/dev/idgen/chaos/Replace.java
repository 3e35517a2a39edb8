package dev.idgen.chaos;

/**
 * {@code replace}: a node killed ({@code kill -9}) and, once a peer sees it down, replaced by a fresh node that
 * takes its tokens and streams its data ({@code replace_address_first_boot}): at a spare's address and in place
 * alternately, the first at a spare's. The node is drawn among those that may be replaced
 * ({@link MembershipPlan#replaceable()}: a datacenter of three nodes or more whose keyspaces all have two replicas
 * or more there, never a node under a fake clock); a replacement at a spare's address that cannot be made (no
 * spare left, or the servers would keep fewer than two contact points) is made in place, the fault's line saying
 * why. The burst that may come along starts right before the kill.
 *
 * <p>Threads: the fault thread's ({@link Membership#change}).
 */
final class Replace extends BasicFault.OnMembership {
  Replace() {
    super("replace", 3);
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    Membership m = run.membership();
    var drawn = m.draw(run, kind(), MembershipPlan::replaceable, MembershipPlan::whyNoReplace);
    if (drawn.isEmpty()) {
      return;
    }
    String node = drawn.get().getValue();
    MembershipPlan.Choice c = drawn.get().getKey().replacement(node, m.nextAtSpare());
    m.replaced(c.inPlace());
    m.change(run, kind(), node + " " + c.note(), occasion.withBurst(), burst -> {
      burst.run();
      return m.changes().replace(node, c.inPlace());
    });
  }
}
