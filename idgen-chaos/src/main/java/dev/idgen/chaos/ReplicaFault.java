package dev.idgen.chaos;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code replica-one}, {@code replica-two}: one, or two, of the three replicas of a datacenter isolated (every
 * packet of their link dropped) or paused (SIGSTOP), drawn: LOCAL_QUORUM holds with one, is lost with two (and
 * so the datacenter's pools, until the heal). Applied once the datacenter's servers are seen refilling (their
 * compare-and-set count moving between two reads 250 ms apart; the rate seen is in the fault's line,
 * {@code refills/s=…}), and a small-block sequence ({@code chaos-small}) keeps refills frequent, so that
 * rounds are caught half accepted. Only where a datacenter has three nodes.
 *
 * <p>Threads: the fault thread's ({@link FaultContext#hold}).
 */
final class ReplicaFault extends BasicFault {
  private final int count;

  /** {@code count} replicas: 1 or 2. */
  ReplicaFault(int count) {
    super(kindOf(count), 2, Set.of(Trait.HOLDS));
    this.count = count;
  }

  private static String kindOf(int count) {
    if (count != 1 && count != 2) {
      throw new IllegalArgumentException("replicas " + count + " (expected: 1 or 2)");
    }
    return count == 1 ? "replica-one" : "replica-two";
  }

  @Override
  public Optional<String> unavailable(ChaosCassandra cassandra) {
    boolean threeNodes = ChaosCassandra.DATACENTERS.stream().anyMatch(dc -> cassandra.nodes(dc).size() >= 3);
    return threeNodes ? Optional.empty() : Optional.of("no datacenter has three replicas (one node per datacenter)");
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    ChaosCassandra cassandra = run.cassandra();
    List<String> dcs = ChaosCassandra.DATACENTERS.stream().filter(d -> cassandra.nodes(d).size() >= 3).toList();
    String dc = dcs.get(run.random().nextInt(dcs.size()));
    List<String> nodes = new ArrayList<>(cassandra.nodes(dc));
    Collections.shuffle(nodes, run.random());
    List<String> picked = List.copyOf(nodes.subList(0, count));
    Optional<ChaosNetwork> network = run.network();
    boolean isolate = network.isPresent() && run.random().nextBoolean();
    String tag = run.tag();
    long hold = run.holdMillis();
    double refills = awaitRefills(run.fleet(), dc);
    String detail = dc + " " + String.join(",", picked) + (isolate ? " isolated " : " paused ") + tag
        + String.format(Locale.ROOT, " refills/s=%.1f", refills);
    HeldCut cut = new HeldCut();
    FaultContext.Step apply = isolate
        ? () -> cut.set(network.get().isolate(picked, tag))
        : () -> {
          for (String n : picked) {
            cassandra.pauseNode(n);
          }
        };
    FaultContext.Step heal = isolate
        ? cut::heal
        : () -> {
          for (String n : picked) {
            cassandra.resumeNode(n);
          }
        };
    run.hold(kind(), run.bounds().storeFault(run.fleet().size(), hold), dc + ":" + String.join(",", picked),
        detail, hold, occasion.withBurst(), apply, heal);
  }

  /**
   * Waits (at most 3 s) until the servers of {@code dc} are seen sending compare-and-sets (their count moving
   * between two reads 250 ms apart), so that the fault that follows lands among refills under way; returns
   * the rate seen (per second; 0 if none was seen in time).
   */
  private static double awaitRefills(Fleet fleet, String dc) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    long before = fleet.casAttempts(dc);
    long t0 = System.nanoTime();
    while (System.nanoTime() < deadline) {
      Thread.sleep(250);
      long now = fleet.casAttempts(dc);
      if (now > before && before >= 0) {
        return (now - before) * 1e9 / (System.nanoTime() - t0);
      }
      before = now;
      t0 = System.nanoTime();
    }
    return 0;
  }
}
