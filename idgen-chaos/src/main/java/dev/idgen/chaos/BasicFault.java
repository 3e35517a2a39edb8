package dev.idgen.chaos;

import java.util.Optional;
import java.util.Set;

/**
 * What every kind states and nothing else: its name, its weight and its traits, given once at construction
 * (a kind is a stateless singleton in {@link FaultKinds#ALL}). Immutable.
 */
abstract class BasicFault implements Fault {
  private final String kind;
  private final int weight;
  private final Set<Trait> traits;

  BasicFault(String kind, int weight, Set<Trait> traits) {
    this.kind = kind;
    this.weight = weight;
    this.traits = Set.copyOf(traits);
  }

  @Override
  public final String kind() {
    return kind;
  }

  @Override
  public final int weight() {
    return weight;
  }

  @Override
  public final Set<Trait> traits() {
    return traits;
  }

  /** A kind made with nftables rules in the cluster's network namespaces: only where there are some. */
  abstract static class OnNetwork extends BasicFault {
    OnNetwork(String kind, int weight, Set<Trait> traits) {
      super(kind, weight, traits);
    }

    @Override
    public final Optional<String> unavailable(ChaosCassandra cassandra) {
      return FaultKinds.needsNetwork(cassandra);
    }
  }

  /**
   * A membership change of the launcher's netns cluster ({@link Membership}): only there, and only on request
   * (each takes 15–110 s, and it changes the cluster the run leaves behind).
   */
  abstract static class OnMembership extends BasicFault {
    OnMembership(String kind, int weight) {
      super(kind, weight, Set.of(Trait.HOLDS, Trait.ON_REQUEST));
    }

    @Override
    public final Optional<String> unavailable(ChaosCassandra cassandra) {
      return Membership.unavailable(cassandra);
    }
  }
}
