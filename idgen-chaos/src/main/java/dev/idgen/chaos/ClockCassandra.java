package dev.idgen.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code clock-cassandra}: a Cassandra node's wall clock stepped by ±500 ms or ±10 minutes (drawn) for 3 s to
 * {@code --max-hold}, then put back ({@link ClockFault}). The node is drawn among dc1's and dc2's members; the
 * first time a node is drawn it is restarted under libfaketime first ({@link CassandraClocks}: {@code kill -9},
 * started on its data; at most {@value CassandraClocks#MAX_NODES} nodes per run, later faults draw among those),
 * inside the fault's window, which then also covers the restart. Only where nodes can be killed and started again
 * ({@link ChaosCassandra#canKill()}: the netns topologies) and libfaketime is installed; only on request (the
 * restarts, here and at the end of a run that did not start the cluster, take 20–150 s each). Its bound: every
 * server's unsettled compare-and-sets while it holds, as for a Cassandra kill, counting a restart as 60 s.
 *
 * <p>Threads: the fault thread's ({@link FaultContext#hold}).
 */
final class ClockCassandra extends BasicFault {
  static final String KIND = "clock-cassandra";
  private static final List<Duration> STEPS = List.of(Duration.ofMillis(500), Duration.ofMillis(-500),
      Duration.ofMinutes(10), Duration.ofMinutes(-10));

  ClockCassandra() {
    super(KIND, 6, Set.of(Trait.HOLDS, Trait.ON_REQUEST));
  }

  @Override
  public Optional<String> unavailable(ChaosCassandra cassandra) {
    if (!(cassandra instanceof CassandraCluster) || !cassandra.canKill()) {
      return Optional.of("a node must be started again under libfaketime, and " + cassandra.whyNoKill());
    }
    return FakeClock.unavailable();
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    CassandraClocks clocks = run.cassandraClocks();
    List<String> members = new ArrayList<>();
    for (String dc : ChaosCassandra.DATACENTERS) {
      members.addAll(run.cassandra().nodes(dc));
    }
    List<String> candidates = clocks.roomForMore() ? members
        : members.stream().filter(clocks.nodes()::contains).sorted().toList();
    if (candidates.isEmpty()) {
      candidates = members; // the faked nodes left the cluster (cannot happen: changes leave them alone)
    }
    String node = candidates.get(run.random().nextInt(candidates.size()));
    Duration offset = STEPS.get(run.random().nextInt(STEPS.size()));
    long hold = run.holdMillis();
    boolean restart = !clocks.nodes().contains(node);
    long settle = ClockFault.SETTLE.toMillis();
    ClockFault[] fault = new ClockFault[1];
    String detail = "clock cassandra " + node + " " + FakeClock.format(offset) + " s"
        + (restart ? " (restarted under libfaketime first)" : "");
    run.hold(kind(), run.bounds().storeFault(run.fleet().size(), hold + 2 * settle + (restart ? 60_000 : 0)), node,
        detail, settle + hold, occasion.withBurst(), () -> {
          long t0 = System.nanoTime();
          FakeClock clock = clocks.of(node);
          if (restart) {
            run.say(String.format(java.util.Locale.ROOT, "cassandra %s restarted under libfaketime in %.1f s", node,
                (System.nanoTime() - t0) / 1e9));
          }
          fault[0] = new ClockFault("cassandra " + node, clock, offset);
          fault[0].inject();
        }, () -> {
          if (fault[0] != null) {
            fault[0].heal();
            Thread.sleep(settle); // until the node surely reads the real time again
          }
        });
  }
}
