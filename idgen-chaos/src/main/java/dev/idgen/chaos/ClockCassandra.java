package dev.idgen.chaos;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

/**
 * {@code clock-cassandra}: a Cassandra node's wall clock stepped by ±500 ms or ±10 minutes (drawn) for 3 s to
 * {@code --max-hold}, then put back ({@link ClockFault}). The node is one of dc1 or dc2 drawn from the seed and
 * restarted on a fake wall clock at the start of the run, before the servers ({@link #prepare}, {@link CassandraClocks}:
 * {@code kill -9}, started on its data: 95–156 s measured under a run's load, so not during one). Only where nodes
 * can be killed and started again ({@link ChaosCassandra#canKill()}: the netns topologies) and the wall-clock
 * shim can be built ({@link FakeClock}); only on request (that restart, and one on the real clock at the end of a run that did not start the
 * cluster). Its bound: every server's unsettled compare-and-sets while it holds, as for a Cassandra pause.
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
      return Optional.of("a node must be started again on a fake wall clock, and " + cassandra.whyNoKill());
    }
    return FakeClock.unavailable();
  }

  /**
   * At the start of a run with this kind, before its servers and clients: one node of dc1 or dc2, drawn from the
   * seed (apart from the schedule's random), restarted on a fake wall clock. Returns it.
   */
  static String prepare(FaultContext run) throws IOException, InterruptedException {
    List<String> members = members(run.cassandra());
    String node = members.get(new Random(run.settings().seed() * 31 + 17).nextInt(members.size()));
    long t0 = System.nanoTime();
    run.cassandraClocks().of(node);
    run.log().line("note", "cassandra-clock", node, "restarted-on-fake-clock-ms",
        (System.nanoTime() - t0) / 1_000_000);
    run.say(String.format(Locale.ROOT, "cassandra %s restarted on a fake wall clock in %.1f s (clock-cassandra)", node,
        (System.nanoTime() - t0) / 1e9));
    return node;
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    CassandraClocks clocks = run.cassandraClocks();
    List<String> members = members(run.cassandra());
    List<String> faked = members.stream().filter(clocks.nodes()::contains).sorted().toList();
    // The node prepared at the start; failing that (it left the cluster: changes leave it alone), one restarted now.
    List<String> candidates = faked.isEmpty() ? members : faked;
    String node = candidates.get(run.random().nextInt(candidates.size()));
    Duration offset = STEPS.get(run.random().nextInt(STEPS.size()));
    long hold = run.holdMillis();
    boolean restart = !clocks.nodes().contains(node);
    long settle = ClockFault.SETTLE.toMillis();
    ClockFault[] fault = new ClockFault[1];
    String detail = "clock cassandra " + node + " " + FakeClock.format(offset) + " s"
        + (restart ? " (restarted on a fake wall clock first)" : "");
    run.hold(kind(), run.bounds().storeFault(run.fleet().size(), hold + 2 * settle + (restart ? 60_000 : 0)), node,
        detail, settle + hold, occasion.withBurst(), () -> {
          fault[0] = new ClockFault("cassandra " + node, clocks.of(node), offset);
          fault[0].inject();
        }, () -> {
          if (fault[0] != null) {
            fault[0].heal();
            Thread.sleep(settle); // until the node surely reads the real time again
          }
        });
  }

  private static List<String> members(ChaosCassandra cassandra) {
    List<String> members = new ArrayList<>();
    for (String dc : ChaosCassandra.DATACENTERS) {
      members.addAll(cassandra.nodes(dc));
    }
    return members;
  }
}
