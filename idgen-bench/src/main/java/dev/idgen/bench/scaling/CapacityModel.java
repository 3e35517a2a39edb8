package dev.idgen.bench.scaling;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code capacity}: the arithmetic of SCALING.md's "Capacity on paper", and a small simulation that checks it.
 *
 * <p><b>Arithmetic</b> ({@link #load}): the store operations a cluster makes per second for a workload — D
 * datacenters of S servers, Q sequences in use of k stripes, each sequence taking r IDs/s spread evenly over the
 * servers — with the server's default sizing by time (docs/operations.md, "Sizing the reserves"): a reserve of
 * rate ρ has the low-water mark L = clamp(ρ·R, min, C/(1+s)) and refills by a step of max(min, s·L), so a server
 * makes ρ / step node reservations (one LOCAL_SERIAL compare-and-set each) per second and stripe; a datacenter's
 * pool likewise takes DC blocks from the global cursor (SERIAL) and appends them (LOCAL_SERIAL). Besides, each
 * server polls its datacenter's floor log and renews its announcement every floor-refresh (one read, one write),
 * and its monitor reads, every refresh-interval, the store state (global cursor and every datacenter's pool, per
 * stripe: plain reads) of at most store-reads-per-refresh (50) of its loaded sequences: a bound per server, not a
 * cost per sequence.
 *
 * <p><b>Simulation</b> ({@link #simulatePool}): S servers draining one pool partition at a total rate, each
 * refilling its reserve by that rule from the partition; a compare-and-set reads the row and commits a random
 * time later (exponential, of mean τ: the measured refill time of one server), and
 * loses (a conflict) if another one committed in between; a loser retries after a random back-off drawn from
 * [c/2, c], c = min(250 ms, 2 ms·2^n), as the Cassandra store does. It gives the conflicts per second and the
 * refill latency against S, to set beside the measured servers curve.
 */
@Command(name = "capacity", mixinStandardHelpOptions = true,
    description = "The capacity arithmetic of SCALING.md for a workload, and a simulation of servers sharing a pool.")
final class CapacityModel implements Callable<Integer> {

  /** The server's defaults (reference.conf) that the arithmetic uses. */
  record Sizing(double outageRunwaySeconds, double refillStep, double minNodeBlock, double nodeCap,
      double isolationRunwaySeconds, double poolStep, double dcCap, double floorRefreshSeconds,
      double monitorIntervalSeconds, int monitorSequencesPerRefresh) {
    static final Sizing DEFAULTS = new Sizing(300, 0.25, 100, 100_000_000, 86_400, 0.25, 1e12, 1, 15, 50);

    Sizing withNodeCap(double cap) {
      return new Sizing(outageRunwaySeconds, refillStep, minNodeBlock, cap, isolationRunwaySeconds, poolStep, dcCap,
          floorRefreshSeconds, monitorIntervalSeconds, monitorSequencesPerRefresh);
    }

    /** The refill step of a server's reserve consumed at {@code rate} IDs/s. */
    double nodeStep(double rate) {
      double low = Math.max(minNodeBlock, Math.min(rate * outageRunwaySeconds, nodeCap / (1 + refillStep)));
      return Math.min(Math.max(minNodeBlock, refillStep * low), nodeCap);
    }

    /** The refill step of a datacenter pool consumed at {@code rate} IDs/s whose servers reserve {@code node}. */
    double poolStep(double rate, double node) {
      double low = Math.max(10 * node, Math.min(rate * isolationRunwaySeconds, dcCap / (1 + poolStep)));
      return Math.max(10 * node, poolStep * low);
    }
  }

  /** D datacenters of S servers each, Q sequences in use of k stripes, r IDs/s per sequence (the whole cluster). */
  record Workload(int datacenters, int serversPerDc, long sequences, int stripes, double idsPerSecondPerSequence) {}

  /**
   * Store operations per second. CAS: compare-and-sets; reads and writes: plain ones. Per partition: the busiest
   * pool partition (sequence, stripe, datacenter) and global cursor (sequence, stripe).
   */
  record Load(double poolCasPerDc, double globalCasPerCluster, double casPerPoolPartition,
      double casPerGlobalPartition, double monitorReadsPerDc, double floorOpsPerDc, double casPerMillionIds) {}

  static Load load(Workload w, Sizing z) {
    double perServerStripe = w.idsPerSecondPerSequence() / w.datacenters() / w.serversPerDc() / w.stripes();
    double nodeStep = z.nodeStep(perServerStripe);
    double nodeCasPerServerStripe = perServerStripe / nodeStep;
    double perPool = perServerStripe * w.serversPerDc();
    double poolStep = z.poolStep(perPool, nodeStep);
    // A pool refill is two CAS: the take from the global cursor (SERIAL) and the append to the pool (LOCAL_SERIAL).
    double poolRefills = perPool / poolStep;
    double casPerPoolPartition = w.serversPerDc() * nodeCasPerServerStripe + poolRefills;
    double casPerGlobalPartition = w.datacenters() * poolRefills;
    long partitions = w.sequences() * w.stripes();
    double poolCasPerDc = partitions * casPerPoolPartition;
    double globalCas = partitions * casPerGlobalPartition;
    // Per server and refresh: at most monitorSequencesPerRefresh sequences, per stripe their global cursor and
    // every datacenter's pool.
    double monitorReads = (double) Math.min(w.sequences(), z.monitorSequencesPerRefresh()) * w.stripes()
        * (1 + w.datacenters()) * w.serversPerDc() / z.monitorIntervalSeconds();
    double floorOps = 2.0 * w.serversPerDc() / z.floorRefreshSeconds();
    double idsPerSecond = w.idsPerSecondPerSequence() * w.sequences();
    double casPerMillion = idsPerSecond == 0 ? 0
        : (poolCasPerDc * w.datacenters() + globalCas) * 1e6 / idsPerSecond;
    return new Load(poolCasPerDc, globalCas, casPerPoolPartition, casPerGlobalPartition, monitorReads, floorOps,
        casPerMillion);
  }

  /** What {@link #simulatePool} found. */
  record PoolRun(int servers, double seconds, long attempts, long conflicts, double refillMeanMillis,
      double refillP99Millis, double emptyServerSeconds) {
    double conflictsPerSecond() {
      return conflicts / seconds;
    }

    double attemptsPerSecond() {
      return attempts / seconds;
    }
  }

  /**
   * S servers draining one pool partition at {@code totalRate} IDs/s for {@code seconds}, each refilling by the
   * sizing rule with at most one refill in flight; a compare-and-set reads the row, commits {@code casMillis}
   * later (exponential, of mean {@code casMillis}), and conflicts if another one committed in between.
   * Deterministic for a seed.
   */
  static PoolRun simulatePool(int servers, double totalRate, Sizing z, double casMillis, double seconds, long seed) {
    return new PoolSimulation(servers, totalRate, z, casMillis / 1000, seed).run(seconds);
  }

  /** The state of one {@link #simulatePool} run. Not thread-safe: one run, one thread. */
  private static final class PoolSimulation {
    private static final int LOW_WATER = 0;
    private static final int COMMIT = 1;

    private final int servers;
    private final double rate;
    private final double low;
    private final double step;
    private final double tau;
    private final SplittableRandom random;
    /** Per server: its reserve at its last update, that time, its refill in flight and that refill's attempt. */
    private final double[] held;
    private final double[] at;
    private final boolean[] refilling;
    private final double[] refillStart;
    private final double[] readAt;
    private final int[] attempt;
    /** Events {time, server, kind}, earliest first. */
    private final PriorityQueue<double[]> events = new PriorityQueue<>((a, b) -> Double.compare(a[0], b[0]));
    private final List<Double> refills = new ArrayList<>();
    private double lastCommit = -1;
    private double empty;
    private long attempts;
    private long conflicts;

    PoolSimulation(int servers, double totalRate, Sizing z, double tau, long seed) {
      this.servers = servers;
      this.rate = totalRate / servers;
      this.low = Math.max(z.minNodeBlock(), Math.min(rate * z.outageRunwaySeconds(), z.nodeCap() / (1 + z.refillStep())));
      this.step = z.nodeStep(rate);
      this.tau = tau;
      this.random = new SplittableRandom(seed);
      held = new double[servers];
      at = new double[servers];
      refilling = new boolean[servers];
      refillStart = new double[servers];
      readAt = new double[servers];
      attempt = new int[servers];
    }

    PoolRun run(double seconds) {
      for (int i = 0; i < servers; i++) {
        held[i] = low + step * random.nextDouble(); // staggered: the servers did not all start together
        events.add(new double[] {(held[i] - low) / rate, i, LOW_WATER});
      }
      while (!events.isEmpty() && events.peek()[0] <= seconds) {
        double[] e = events.poll();
        double t = e[0];
        int i = (int) e[1];
        drain(i, t);
        if (e[2] == LOW_WATER) {
          if (!refilling[i]) {
            refilling[i] = true;
            refillStart[i] = t;
            attempt[i] = 0;
            send(i, t);
          }
        } else if (lastCommit > readAt[i]) { // someone committed since this attempt read the row: it lost
          conflicts++;
          attempt[i]++;
          double c = Math.min(0.250, 0.002 * Math.pow(2, attempt[i]));
          send(i, t + c / 2 + random.nextDouble() * c / 2);
        } else {
          lastCommit = t;
          refilling[i] = false;
          held[i] += step;
          refills.add(t - refillStart[i]);
          events.add(new double[] {t + Math.max(0, held[i] - low) / rate, i, LOW_WATER});
        }
      }
      for (int i = 0; i < servers; i++) {
        drain(i, seconds);
      }
      double[] sorted = refills.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      double mean = Arrays.stream(sorted).average().orElse(0);
      double p99 = sorted.length == 0 ? 0
          : sorted[Math.min(sorted.length - 1, (int) Math.ceil(0.99 * sorted.length) - 1)];
      return new PoolRun(servers, seconds, attempts, conflicts, mean * 1000, p99 * 1000, empty);
    }

    /** An attempt that reads the row at {@code t} and commits a random time later (exponential, mean tau). */
    private void send(int i, double t) {
      attempts++;
      readAt[i] = t;
      events.add(new double[] {t - tau * Math.log(1 - random.nextDouble()), i, COMMIT});
    }

    /** Consumes server i's reserve up to time t, counting the time it was empty. */
    private void drain(int i, double t) {
      double need = (t - at[i]) * rate;
      if (need > held[i]) {
        empty += (need - held[i]) / rate;
        held[i] = 0;
      } else {
        held[i] -= need;
      }
      at[i] = t;
    }
  }

  @Option(names = "--datacenters", defaultValue = "1") int datacenters;
  @Option(names = "--servers", defaultValue = "20", description = "Servers per datacenter.") int servers;
  @Option(names = "--sequences", defaultValue = "10000") long sequences;
  @Option(names = "--stripes", defaultValue = "1") int stripes;
  @Option(names = "--rate", defaultValue = "10", description = "IDs/s per sequence, the whole cluster.") double rate;
  @Option(names = "--node-block-size", description = "node_block_size (default: the server's, 100,000,000).")
  Double nodeCap;
  @Option(names = "--simulate", split = ",", paramLabel = "S",
      description = "Also simulate S servers sharing one pool at --pool-rate IDs/s, e.g. 1,2,4,8,16.")
  int[] simulate;
  @Option(names = "--pool-rate", defaultValue = "20000", description = "IDs/s through the simulated pool.")
  double poolRate;
  @Option(names = "--cas-ms", defaultValue = "7", description = "Read-to-commit time of a CAS in the simulation.")
  double casMillis;
  @Option(names = "--seconds", defaultValue = "600", description = "Simulated time.") double seconds;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    Sizing z = nodeCap == null ? Sizing.DEFAULTS : Sizing.DEFAULTS.withNodeCap(nodeCap);
    Workload w = new Workload(datacenters, servers, sequences, stripes, rate);
    Load l = load(w, z);
    out.printf(Locale.ROOT, "%s%n", w);
    out.printf(Locale.ROOT, "  pool CAS per datacenter      %,.1f /s  (busiest pool partition %,.4f /s)%n",
        l.poolCasPerDc(), l.casPerPoolPartition());
    out.printf(Locale.ROOT, "  global CAS, whole cluster    %,.3f /s  (per global partition %,.6f /s)%n",
        l.globalCasPerCluster(), l.casPerGlobalPartition());
    out.printf(Locale.ROOT, "  CAS per million IDs          %,.3f%n", l.casPerMillionIds());
    out.printf(Locale.ROOT, "  monitor reads per datacenter %,.1f /s;  floor-log reads + announcements %,.1f /s%n",
        l.monitorReadsPerDc(), l.floorOpsPerDc());
    if (simulate != null) {
      out.printf(Locale.ROOT, "simulated pool: %,.0f IDs/s, node_block_size %,.0f, CAS %.1f ms, %.0f s%n", poolRate,
          z.nodeCap(), casMillis, seconds);
      out.println("servers,cas_per_s,conflicts_per_s,refill_mean_ms,refill_p99_ms,empty_server_seconds");
      for (int s : simulate) {
        PoolRun r = simulatePool(s, poolRate, z, casMillis, seconds, 42);
        out.printf(Locale.ROOT, "%d,%.1f,%.2f,%.1f,%.1f,%.1f%n", s, r.attemptsPerSecond(), r.conflictsPerSecond(),
            r.refillMeanMillis(), r.refillP99Millis(), r.emptyServerSeconds());
      }
    }
    out.flush();
    return 0;
  }
}
