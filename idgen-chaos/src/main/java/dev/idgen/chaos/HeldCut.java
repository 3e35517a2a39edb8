package dev.idgen.chaos;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The nftables rules a network fault made ({@link ChaosNetwork.Cut}), kept from its apply step for its heal
 * step. Set and healed on the fault thread; atomic only so that the two steps' lambdas can share it.
 */
final class HeldCut {
  private final AtomicReference<ChaosNetwork.Cut> cut = new AtomicReference<>();

  void set(ChaosNetwork.Cut applied) {
    cut.set(applied);
  }

  /** Deletes the rules, if any were made (none: applying failed first; {@code healAll} covers a half-made one). */
  void heal() throws Exception {
    ChaosNetwork.Cut c = cut.get();
    if (c != null) {
      c.heal();
    }
  }
}
