package dev.idgen.chaos;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Cassandra nodes a run restarted under a fake clock for {@code clock-cassandra} ({@link ClockCassandra}):
 * at most {@link #MAX_NODES}, restarted ({@code kill -9}, then started on its data on a fake wall clock) at the
 * start of a run with that kind, so that a run without it pays nothing. A node under a fake clock stays
 * under it when another fault kills and restarts it ({@link CassandraCluster#restart(String)}); membership
 * changes leave it alone ({@link MembershipPlan#untouchable()}). At the end ({@link #close}) every clock is put
 * back on the real time and, on a cluster the run did not start, each node is restarted on the real clock, as the
 * run found it.
 *
 * <p>Threads: the fault thread adds and steps; the shutdown hook may put every clock back at any time
 * ({@link #zeroAll}), hence a concurrent map.
 */
final class CassandraClocks {
  /**
   * How many nodes a run fakes at most: each costs a restart (95–156 s measured under a run's load, hence at the
   * start of the run, before the load: {@link ClockCassandra#prepare}), and its waits' workaround some CPU.
   */
  static final int MAX_NODES = 1;

  private final CassandraCluster cluster;
  private final Path dir;
  private final Map<String, FakeClock> clocks = new ConcurrentHashMap<>();

  /** Clocks of {@code cluster}'s nodes, their files in {@code dir}. */
  CassandraClocks(CassandraCluster cluster, Path dir) {
    this.cluster = cluster;
    this.dir = dir;
  }

  /** The nodes under a fake clock. */
  Set<String> nodes() {
    return Set.copyOf(clocks.keySet());
  }

  /**
   * {@code node}'s clock, restarting it under one first if it has none (then returns after it serves CQL); the
   * node that had one before loses it if that would make more than {@link #MAX_NODES}.
   */
  FakeClock of(String node) throws IOException, InterruptedException {
    FakeClock clock = clocks.get(node);
    if (clock == null) {
      for (String other : List.copyOf(clocks.keySet())) {
        if (clocks.size() >= MAX_NODES) {
          clocks.remove(other).set(Duration.ZERO); // still on a fake wall clock, on the real time: harmless
        }
      }
      clock = ClockFault.underFakeClock(cluster, node, dir);
      clocks.put(node, clock);
    }
    return clock;
  }

  /** Puts every clock back on the real time; never throws (the shutdown hook's). */
  void zeroAll() {
    for (Map.Entry<String, FakeClock> e : clocks.entrySet()) {
      try {
        e.getValue().set(Duration.ZERO);
      } catch (IOException ex) {
        System.err.println("chaos: could not put cassandra " + e.getKey() + "'s clock back: " + ex);
      }
    }
  }

  /**
   * Every clock back on the real time, and if {@code restartOnRealClock} every faked node restarted without
   * the shim (a cluster that outlives the run).
   */
  void close(boolean restartOnRealClock) throws IOException, InterruptedException {
    zeroAll();
    if (restartOnRealClock) {
      for (String node : List.copyOf(clocks.keySet())) {
        ClockFault.restoreRealClock(cluster, node);
        clocks.remove(node);
      }
    }
  }
}
