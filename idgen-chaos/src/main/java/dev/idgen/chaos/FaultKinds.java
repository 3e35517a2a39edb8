package dev.idgen.chaos;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Every fault kind, in the order of the table by kind ({@link FaultTable}), and what the run and the checker
 * derive from them: their names, weights and traits, and which kinds a cluster can take. Immutable; a new kind
 * is one line in {@link #ALL} (see {@link Fault}).
 */
final class FaultKinds {
  /** Every kind. */
  static final List<Fault> ALL = List.of(
      new ServerKill(),
      new CassandraPause(),
      new ClientKill(),
      new AdvanceBurstFault(),
      new ServerRestart(),
      new RollingRestart(),
      new DcPartition(),
      new DcOneWay(),
      new ServerIsolate(),
      new ReplicaFault(1),
      new ReplicaFault(2),
      new CassandraKill(),
      new OwnerKill(),
      new OwnerIsolate(),
      new FreshAdvanceFault(),
      new ReserveRangeFault(),
      new RedefineFault(),
      new ClockServer(),
      new ClockCassandra(),
      new Bootstrap(),
      new Decommission(),
      new Replace(),
      new RepairCleanup(),
      new AddDatacenter());

  /** Every kind's name, in the order of {@link #ALL}. */
  static final List<String> NAMES = ALL.stream().map(Fault::kind).toList();
  /** How often each kind is drawn after the first round, relative to the others of the run. */
  static final Map<String, Integer> WEIGHTS = ALL.stream()
      .collect(Collectors.toUnmodifiableMap(Fault::kind, Fault::weight));
  /** Kinds aimed at the owner of a strict sequence: only in runs with one (strict clients > 0). */
  static final Set<String> OWNER_KINDS = with(Fault.Trait.OWNER);
  /** Planned stops: in a run of only these the restarts must lose nothing ({@code restart_lost} = 0). */
  static final Set<String> GRACEFUL = with(Fault.Trait.PLANNED);

  private FaultKinds() {}

  /** The kind named {@code name}. */
  static Fault named(String name) {
    return ALL.stream().filter(f -> f.kind().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no fault kind " + name + ": expected one of " + NAMES));
  }

  static boolean has(String name, Fault.Trait trait) {
    return named(name).traits().contains(trait);
  }

  /** The kinds {@code cassandra} cannot take, each with the reason, in the order of {@link #ALL}. */
  static Map<String, String> injectable(ChaosCassandra cassandra) {
    Map<String, String> not = new LinkedHashMap<>();
    for (Fault f : ALL) {
      f.unavailable(cassandra).ifPresent(why -> not.put(f.kind(), why));
    }
    return not;
  }

  /** Every kind {@code cassandra} can take but those only on request: what a run injects unless told otherwise. */
  static List<String> defaultKinds(ChaosCassandra cassandra) {
    Map<String, String> not = injectable(cassandra);
    return ALL.stream().filter(f -> !f.traits().contains(Fault.Trait.ON_REQUEST) && !not.containsKey(f.kind()))
        .map(Fault::kind).toList();
  }

  /** For the kinds made with nftables rules in the namespaces: why {@code cassandra} has none, if so. */
  static Optional<String> needsNetwork(ChaosCassandra cassandra) {
    return cassandra.network().isPresent() ? Optional.empty()
        : Optional.of("no network namespaces: " + cassandra.whyNoNetwork());
  }

  private static Set<String> with(Fault.Trait trait) {
    return ALL.stream().filter(f -> f.traits().contains(trait)).map(Fault::kind)
        .collect(Collectors.toUnmodifiableSet());
  }
}
