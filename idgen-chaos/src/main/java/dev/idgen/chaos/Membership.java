package dev.idgen.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The membership-change kinds' shared state and helpers ({@link Bootstrap}, {@link Decommission},
 * {@link Replace}, {@link RepairCleanup}, {@link AddDatacenter}): the cluster's {@link TopologyChanges}, what
 * outlives one change (the servers' contact points as the run started, which replacement comes next), what may
 * be done now ({@link #plan}), and how a change is run as a fault ({@link #change}): logged with what it did and
 * how long it took ({@link TopologyChanges.Change#describe()}), its window from its start to its end, an advance
 * burst started at the moment the kind chooses, its lost bound that of a fault keeping every server's store
 * unsettled for as long as it took.
 *
 * <p>A kind that cannot apply now (no spare left, nothing may leave) is skipped with its reason, logged
 * ({@code note skipped}); a change that fails (a timeout, nodetool's refusal) is logged ({@code note
 * change-failed}), and every later change of the run is skipped with that reason: the cluster may be half
 * changed (a node still streaming), which the next change must not build on. The run itself goes on, and its
 * check with it.
 *
 * <p>Threads: made and used by the fault thread only (one change at a time, as Cassandra requires).
 */
final class Membership {
  /**
   * How long one step of a change may take, as an operator would wait for it. Measured on 2 cores under load:
   * bootstraps of 100–530 s, and a decommission whose Paxos repair timed out against a busy peer and was retried
   * by Cassandra four times, then left the ring 6 s after a 10-minute bound (seed 26112807).
   */
  static final Duration CHANGE_TIMEOUT = Duration.ofMinutes(20);

  /** A change's body: it may start the burst that comes along ({@code burstNow}) at the moment that matters. */
  interface Body {
    TopologyChanges.Change run(Runnable burstNow) throws Exception;
  }

  private final CassandraCluster cluster;
  private final TopologyChanges changes;
  /** The members by datacenter when the first change was drawn: the servers' contact points. */
  private final Map<String, List<String>> contactPoints = new LinkedHashMap<>();
  /** Whether the next replacement is asked at a spare's address (they alternate; the first is). */
  private boolean nextAtSpare = true;
  /** Why every further change is skipped: an earlier one failed; null if none did. */
  private String broken;

  Membership(CassandraCluster cluster) {
    this.cluster = cluster;
    this.changes = new TopologyChanges(cluster, CHANGE_TIMEOUT);
    for (String dc : ChaosCassandra.DATACENTERS) {
      contactPoints.put(dc, cluster.nodes(dc));
    }
  }

  /** Why {@code cassandra} cannot take membership changes, or empty if it can (the launcher's netns cluster). */
  static Optional<String> unavailable(ChaosCassandra cassandra) {
    if (cassandra.network().isEmpty()) {
      return Optional.of("membership changes need a netns topology: " + cassandra.whyNoNetwork());
    }
    if (!(cassandra instanceof CassandraCluster)) {
      return Optional.of("membership changes need the launcher's cluster (cassandra.sh join, decommission)");
    }
    return Optional.empty();
  }

  TopologyChanges changes() {
    return changes;
  }

  CassandraCluster cluster() {
    return cluster;
  }

  /** Whether the next replacement is to be asked at a spare's address; the caller says which one it did. */
  boolean nextAtSpare() {
    return nextAtSpare;
  }

  /** A replacement was made: the next one asks for the other variant. */
  void replaced(boolean inPlace) {
    nextAtSpare = inPlace;
  }

  /** What may be done now, from the cluster's members and the keyspaces' replication (read now). */
  MembershipPlan plan(FaultContext run) {
    Map<String, List<String>> members = new LinkedHashMap<>();
    Map<String, Integer> sizes = new LinkedHashMap<>();
    for (String dc : cluster.datacenters()) {
      members.put(dc, cluster.nodes(dc));
      sizes.put(dc, cluster.topologyNodes(dc).size());
    }
    Set<String> faked = run.cassandraClocksOrNull() == null ? Set.of() : run.cassandraClocksOrNull().nodes();
    return new MembershipPlan(members, sizes, CassandraCluster.SPARES, contactPoints,
        changes.replicationByDatacenter(), faked);
  }

  /**
   * Skips the fault under way if an earlier change failed (logged, said); true if it did.
   */
  boolean skippedAsBroken(FaultContext run, String kind) {
    if (broken == null) {
      return false;
    }
    skip(run, kind, "an earlier change failed: " + broken);
    return true;
  }

  /** The fault under way cannot apply now: logged ({@code note skipped}) and said, with its reason. */
  /**
   * The plan of the cluster as it is now and one of the candidates {@code candidates} finds in it, drawn from the
   * run's random; empty, after logging why, when the cluster is broken or {@code candidates} is empty
   * ({@code why} says why then).
   */
  <T> Optional<Map.Entry<MembershipPlan, T>> draw(FaultContext run, String kind,
      java.util.function.Function<MembershipPlan, List<T>> candidates,
      java.util.function.Function<MembershipPlan, String> why) {
    if (skippedAsBroken(run, kind)) {
      return Optional.empty();
    }
    MembershipPlan plan = plan(run);
    List<T> all = candidates.apply(plan);
    if (all.isEmpty()) {
      skip(run, kind, why.apply(plan));
      return Optional.empty();
    }
    return Optional.of(Map.entry(plan, all.get(run.random().nextInt(all.size()))));
  }

  void skip(FaultContext run, String kind, String reason) {
    run.log().line("note", "skipped", run.faultLabel(), kind, oneLine(reason));
    run.say(kind + " skipped: " + reason);
  }

  /**
   * Runs {@code body} as fault {@code kind} on {@code what}: says it, starts the burst when the body asks (if
   * {@code withBurst}), and logs the fault (its bound from how long it took) and its window, with what the change
   * did, however it ended. A failure is logged and said, and marks the membership broken (see the class
   * comment); an interruption ends the run.
   */
  void change(FaultContext run, String kind, String what, boolean withBurst, Body body) throws InterruptedException {
    AdvanceBursts bursts = run.bursts();
    AdvanceBursts.Burst burst = withBurst ? bursts.plan(kind + ":" + what, run.faultNo(), run.random()) : null;
    long cursor = burst == null ? 0 : bursts.cursorNow(burst.seq(), burst.asked());
    boolean[] burstStarted = {false};
    Runnable burstNow = () -> {
      if (burst != null && !burstStarted[0]) {
        burstStarted[0] = true;
        bursts.start(burst, cursor);
        run.counted();
      }
    };
    List<String> before = cluster.members();
    run.say(kind + " " + what + ": starting");
    long from = run.clock().millis();
    String outcome = "interrupted";
    try {
      TopologyChanges.Change done = body.run(burstNow);
      outcome = done.describe();
      run.say(kind + " done: " + outcome);
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      outcome = "FAILED " + e.getMessage();
      broken = kind + " " + what + ": " + e.getMessage();
      run.log().line("note", "change-failed", run.faultLabel(), kind, oneLine(broken));
      run.say(kind + " " + what + " FAILED (no further membership change in this run): " + e);
      try {
        cluster.attach(); // what the launcher says the members are now
      } catch (Exception again) {
        run.say("cassandra.sh status after the failure: " + again);
      }
    } finally {
      long to = run.clock().millis();
      String detail = oneLine(what + " | " + outcome);
      run.log().fault(from, kind, run.bounds().storeFault(run.fleet().size(), to - from), detail);
      run.log().window(run.faultLabel(), kind, from, to, detail);
      List<String> after = cluster.members();
      for (String node : before) {
        if (!after.contains(node)) {
          run.network().ifPresent(n -> n.forget(node)); // its namespace is gone
        }
      }
    }
  }

  /** {@code text} on one line of at most 400 characters: a run.txt token list and a log line. */
  static String oneLine(String text) {
    String s = String.valueOf(text).replaceAll("\\s+", " ").strip();
    return s.length() > 400 ? s.substring(0, 400) + "…" : s;
  }

  /** The changes of one fault as one {@link TopologyChanges.Change} of {@code kind}: their steps in order. */
  static TopologyChanges.Change combined(String kind, String target, long t0Nanos, List<TopologyChanges.Change> parts) {
    List<String> steps = new ArrayList<>();
    parts.forEach(p -> steps.add(p.describe()));
    return new TopologyChanges.Change(kind, target, Duration.ofNanos(System.nanoTime() - t0Nanos),
        String.join("; ", steps));
  }
}
