package dev.idgen.chaos;

import java.util.Set;

/**
 * {@code cassandra-pause}: SIGSTOP of every node of dc1 or dc2 for 2–6 s, then SIGCONT ({@code docker pause}
 * and {@code unpause} when ChaosIT's cluster runs in containers; always resumed: also in a {@code finally} and
 * the shutdown hook). Shorter than the servers' {@code cas-deadline} (10 s), so every compare-and-set with an
 * unknown outcome is read back and resolved once the nodes answer.
 *
 * <p>Threads: the fault thread's ({@link FaultContext#hold}).
 */
final class CassandraPause extends BasicFault {
  CassandraPause() {
    super("cassandra-pause", 2, Set.of(Trait.HOLDS));
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    ChaosCassandra cassandra = run.cassandra();
    String dc = run.random().nextBoolean() ? "dc1" : "dc2";
    long pauseMillis = 2_000 + run.random().nextInt(4_000);
    run.hold(kind(), run.bounds().cassandraPause(), dc, dc + " " + cassandra.describe(dc), pauseMillis,
        occasion.withBurst(), () -> cassandra.pause(dc), () -> cassandra.resume(dc));
  }
}
