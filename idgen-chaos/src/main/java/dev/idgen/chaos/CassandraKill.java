package dev.idgen.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code cassandra-kill}: {@code kill -9} of one Cassandra node, started again on its data directory after 1–5 s
 * (its commit log is replayed); the fault holds until the node serves CQL again. Only where the harness runs
 * the nodes with their schema flushed ({@link ChaosCassandra#canKill()}: the netns topologies). Its bound
 * counts it as held 30 s beyond its downtime (its restart).
 *
 * <p>Threads: the fault thread's ({@link FaultContext#hold}).
 */
final class CassandraKill extends BasicFault {
  CassandraKill() {
    super("cassandra-kill", 4, Set.of(Trait.HOLDS));
  }

  @Override
  public Optional<String> unavailable(ChaosCassandra cassandra) {
    return cassandra.canKill() ? Optional.empty() : Optional.of(cassandra.whyNoKill());
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    ChaosCassandra cassandra = run.cassandra();
    List<String> all = new ArrayList<>(cassandra.nodes("dc1"));
    all.addAll(cassandra.nodes("dc2"));
    String node = all.get(run.random().nextInt(all.size()));
    long down = 1_000 + run.random().nextInt(4_000);
    // Held: the downtime, then the restart (its commit log replayed), which takes 10-30 s on an idle machine
    // (minutes under a run's full load on 2 cores).
    run.hold(kind(), run.bounds().storeFault(run.fleet().size(), down + 30_000), node, node + " restart-after-ms="
        + down, down, occasion.withBurst(), () -> cassandra.kill(node), () -> cassandra.restart(node));
  }
}
