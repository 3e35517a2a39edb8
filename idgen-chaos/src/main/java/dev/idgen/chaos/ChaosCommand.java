package dev.idgen.chaos;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code idgen-chaos}: runs a chaos run ({@link ChaosRun}), then the checker ({@link Checker}) on what it
 * recorded. Exit status 0 only if the run completed and the checker found no violation.
 *
 * <pre>
 * flock /tmp/idgen-cassandra.lock java -jar idgen-chaos/target/idgen-chaos-0.2.0-SNAPSHOT-all.jar \
 *     --topology netns-3x3 --duration 10m --servers 3 --clients 6 --out target/chaos-long
 * </pre>
 * It prints which fault kinds the cluster cannot take and why ({@link FaultKinds#injectable}); asking for one of
 * them, or for a netns topology where namespaces cannot be made (no root), fails before anything starts.
 */
@Command(name = "idgen-chaos", mixinStandardHelpOptions = true, subcommands = DiskSoakCommand.class,
    description = "Fault-injection run against real idgen servers on the local two-datacenter Cassandra, "
        + "then an independent check of what the clients received.")
public final class ChaosCommand implements Callable<Integer> {

  @Option(names = "--duration", defaultValue = "2m", converter = DurationConverter.class,
      description = "how long clients allocate and faults are injected, e.g. 90s, 10m, 1h (default: ${DEFAULT-VALUE})")
  Duration duration;

  @Option(names = "--seed", description = "the fault schedule's seed (default: random, printed)")
  Long seed;

  @Option(names = "--servers", defaultValue = "3", description = "idgen servers, >= 3, alternately in dc1 and dc2")
  int servers;

  @Option(names = "--clients", defaultValue = "4", description = "clients, >= 2: half client stubs, half raw Allocate callers")
  int clients;

  @Option(names = "--out", defaultValue = "target/chaos", description = "where the records and logs go")
  Path out;

  @Option(names = "--use-running-cassandra",
      description = "use the launcher's cluster that is running (of --topology, in --cassandra-base-dir) instead "
          + "of starting one")
  boolean useRunningCassandra;

  @Option(names = "--topology", defaultValue = "two-dc",
      description = "the launcher's topology: two-dc (one node per datacenter, on loopback), netns-3x3 (three "
          + "nodes per datacenter, each, and each server, in a network namespace: the network faults; needs "
          + "root) or netns-3x1 (default: ${DEFAULT-VALUE})")
  String topology;

  @Option(names = "--cassandra-base-dir", description = "the launcher's run directory (default: the launcher's "
      + "own for two-dc, ~/.cache/idgen-cassandra/run-netns for netns-*)")
  Path cassandraBaseDir;

  @Option(names = "--max-hold", defaultValue = "20s", converter = DurationConverter.class,
      description = "the longest a network, replica or Cassandra-kill fault holds; each holds 3 s to this "
          + "(default: ${DEFAULT-VALUE})")
  Duration maxHold;

  @Option(names = "--repo-root", defaultValue = ".", description = "the idgen checkout (for idgen-testing/cassandra/cassandra.sh)")
  Path repoRoot;

  @Option(names = "--server-jar", description = "the shaded server jar "
      + "(default: <repo-root>/idgen-server/target/idgen-server-0.2.0-SNAPSHOT-all.jar)")
  Path serverJar;

  @Option(names = "--rate", defaultValue = "5000", description = "the most IDs per second each client takes (default: ${DEFAULT-VALUE})")
  long rate;

  @Option(names = "--call-scale", defaultValue = "1",
      description = "IDs per call, times the defaults, on every sequence but chaos-small (which keeps its small "
          + "blocks and calls, so that its pools stay busy): raw callers ask for up to 5,000 x N IDs (mostly up "
          + "to 200 x N), stubs take batches of up to 64 x N IDs from leases of up to 5,000 x N, and the blocks "
          + "are N times larger; the calls, the records and the compare-and-sets stay about as many, so the IDs "
          + "per second grow (1 to " + ChaosClient.MAX_CALL_SCALE
          + ", default: ${DEFAULT-VALUE})")
  int callScale;

  @Option(names = "--int32-space", defaultValue = "2000000",
      description = "how many IDs the 32-bit sequence has left below 2147483647 (default: ${DEFAULT-VALUE})")
  long int32Space;

  @Option(names = "--faults", split = ",", paramLabel = "KIND",
      description = "the fault kinds to inject, comma-separated, from: server-kill, cassandra-pause, client-kill, "
          + "advance-burst, server-restart, rolling-restart, cassandra-kill, owner-kill, fresh-advance, reserve-range, "
          + "redefine (UpdateSequence of block sizes and of a drained sequence's max, DeleteSequence and "
          + "UndeleteSequence of a spare), clock-server (a wall-clock shim built with cc); and on a netns topology also dc-partition, dc-oneway, server-isolate, "
          + "replica-one, replica-two, owner-isolate, clock-cassandra (the same shim), and the membership changes "
          + "bootstrap, decommission, replace, repair-cleanup, add-dc (default: every kind the topology allows but "
          + "those only on request: rolling-restart, clock-cassandra and the membership changes; the owner kinds "
          + "only with strict clients). A run of server-restart and rolling-restart only must lose no ID: the "
          + "checker fails it if lost > 0")
  List<String> faults;

  @Option(names = "--rounds", defaultValue = "1",
      description = "rounds of every kind of --faults, each in an order of its own, before kinds are drawn by "
          + "weight; they complete whatever --duration says (default: ${DEFAULT-VALUE})")
  int rounds;

  @Option(names = "--per-round", split = ",", paramLabel = "KIND=N",
      description = "kinds injected N times in each of the --rounds, e.g. clock-server=2,clock-cassandra=2 "
          + "(default: once)")
  Map<String, Integer> perRound;

  @Option(names = "--strict-clients", defaultValue = "" + ChaosRun.DEFAULT_STRICT_CLIENTS,
      description = "clients that call Allocate on the strict sequence chaos-strict (ORDERING_STRICT, home dc1), "
          + ChaosClient.STRICT_CALLERS + " threads each, 1 ID or a few per call on random servers; every call is "
          + "recorded and the checker holds them to the strict order. 0: no strict sequence, no owner faults "
          + "(default: ${DEFAULT-VALUE})")
  int strictClients;

  @Option(names = "--strict-rate", defaultValue = "" + ChaosRun.DEFAULT_STRICT_RATE,
      description = "the most calls per second each strict client makes (default: ${DEFAULT-VALUE})")
  long strictRate;

  @Option(names = "--strict-owner-lease", converter = DurationConverter.class,
      description = "the servers' idgen.strict.owner-lease, e.g. 4s (default: theirs, 10 s): how long a strict "
          + "sequence is unavailable after its owner dies")
  Duration strictOwnerLease;

  @Option(names = "--unload-idle-after", converter = DurationConverter.class, defaultValue = "2s",
      description = "the servers' idgen.allocator.unload-idle-after (theirs: 1h): sequences idle this long on a "
          + "server are unloaded (a fresh-advance sequence between its calls; a strict sequence on a server that "
          + "only forwards it, unless forwarding counts as use) and loaded again at their next call; 0s: never "
          + "(default: ${DEFAULT-VALUE})")
  Duration unloadIdleAfter;

  public static void main(String[] args) {
    System.exit(new CommandLine(new ChaosCommand()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    return execute().ok() ? 0 : 1;
  }

  /**
   * Runs and checks against the launcher's cluster of {@code --repo-root} (started and stopped here unless
   * {@code --use-running-cassandra}); the report's {@link Checker.Report#ok()} is the verdict.
   */
  public Checker.Report execute() throws Exception {
    if (!CassandraCluster.TOPOLOGIES.contains(topology)) {
      throw new CommandLine.ParameterException(new CommandLine(this), "--topology: " + topology + " (expected one of "
          + CassandraCluster.TOPOLOGIES + ")");
    }
    Path base = cassandraBaseDir;
    if (base == null && topology.startsWith("netns-")) {
      base = Path.of(System.getProperty("user.home"), ".cache", "idgen-cassandra", "run-netns");
    }
    CassandraCluster launcher = new CassandraCluster(repoRoot.toAbsolutePath().normalize(), topology,
        base == null ? null : base.toAbsolutePath());
    Optional<String> unavailable = launcher.unavailable();
    if (unavailable.isPresent()) {
      throw new IllegalStateException("--topology " + topology + " cannot run here: " + unavailable.get()
          + " (run as root, or use --topology two-dc, which has no network faults)");
    }
    if (useRunningCassandra) {
      launcher.attach();
    }
    return execute(launcher, launcher);
  }

  /** Runs and checks against {@code cassandra}, which is already running (ChaosIT: the tests' cluster). */
  Checker.Report execute(ChaosCassandra cassandra) throws Exception {
    return execute(cassandra, null);
  }

  private Checker.Report execute(ChaosCassandra cassandra, CassandraCluster launcher) throws Exception {
    if (servers < 3) {
      throw new CommandLine.ParameterException(new CommandLine(this), "--servers: " + servers + " (expected: >= 3)");
    }
    if (clients < 2) {
      throw new CommandLine.ParameterException(new CommandLine(this), "--clients: " + clients + " (expected: >= 2)");
    }
    List<String> kinds = faults == null || faults.isEmpty()
        ? FaultKinds.defaultKinds(cassandra).stream()
            .filter(k -> strictClients > 0 || !FaultKinds.OWNER_KINDS.contains(k)).toList()
        : faults.stream().map(String::trim).distinct().toList();
    if (!FaultKinds.NAMES.containsAll(kinds)) {
      throw new CommandLine.ParameterException(new CommandLine(this), "--faults: " + kinds + " (expected some of "
          + FaultKinds.NAMES + ")");
    }
    Map<String, String> cannot = FaultKinds.injectable(cassandra);
    List<String> asked = kinds.stream().filter(cannot::containsKey).toList();
    if (!asked.isEmpty()) {
      throw new CommandLine.ParameterException(new CommandLine(this), "--faults: this cluster cannot take "
          + asked.stream().map(k -> k + " (" + cannot.get(k) + ")").toList());
    }
    if (!cannot.isEmpty() && (faults == null || faults.isEmpty())) {
      System.out.println("chaos: fault kinds NOT injected on this cluster: " + String.join(", ", cannot.keySet()));
      cannot.forEach((k, why) -> System.out.println("chaos:   " + k + ": " + why));
    }
    long s = seed != null ? seed : new SecureRandom().nextLong();
    System.out.println("chaos seed=" + s + " kinds=" + String.join(",", kinds));
    Path root = repoRoot.toAbsolutePath().normalize();
    Path jar = serverJar != null ? serverJar : root.resolve("idgen-server/target/idgen-server-0.2.0-SNAPSHOT-all.jar");
    Path dir = out.toAbsolutePath().normalize();
    new ChaosRun(new ChaosRun.Settings(duration, s, servers, clients, dir, useRunningCassandra,
        jar.toAbsolutePath(), root, rate, int32Space, kinds, maxHold, callScale, strictClients, strictRate,
        strictOwnerLease, unloadIdleAfter, rounds, perRound == null ? Map.of() : perRound), cassandra, launcher)
        .run();
    return Checker.check(dir, System.out);
  }

  /** "90s", "10m", "1h", "500ms", or ISO-8601 ("PT10M"). */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      String v = value.trim().toLowerCase(Locale.ROOT);
      if (v.startsWith("pt")) {
        return Duration.parse(v);
      }
      if (v.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      }
      long n = Long.parseLong(v.substring(0, v.length() - 1));
      return switch (v.charAt(v.length() - 1)) {
        case 's' -> Duration.ofSeconds(n);
        case 'm' -> Duration.ofMinutes(n);
        case 'h' -> Duration.ofHours(n);
        default -> throw new CommandLine.TypeConversionException("'" + value + "': expected e.g. 90s, 10m, 1h");
      };
    }
  }
}
