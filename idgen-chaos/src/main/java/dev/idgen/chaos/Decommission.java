package dev.idgen.chaos;

import java.util.Optional;

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
  public Optional<String> after() {
    return Optional.of("bootstrap"); // only joined spares leave
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    Membership m = run.membership();
    var drawn = m.draw(run, kind(), MembershipPlan::decommissions, MembershipPlan::whyNoDecommission);
    if (drawn.isEmpty()) {
      return;
    }
    MembershipPlan.Choice c = drawn.get().getValue();
    m.change(run, kind(), c.node() + " of " + c.dc() + " (" + c.note() + ")", occasion.withBurst(), burst -> {
      burst.run();
      return m.changes().decommission(c.node());
    });
  }
}
