package dev.idgen.chaos;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * {@code clock-server}: an idgen server's wall clock stepped 10 minutes ahead or behind (drawn) for 3 s to
 * {@code --max-hold}, then put back ({@link ClockFault}, {@link FakeClock}). A run with this kind starts every server
 * under a {@link FakeClock} of its own ({@link Fleet#startAll}); a run without it starts none so. The window
 * covers the step's and the heal's settling ({@link ClockFault#SETTLE}). Its bound: what the server may drop as
 * if killed, and what its unsettled compare-and-sets may cost while it holds.
 *
 * <p>Threads: the fault thread's ({@link FaultContext#hold}).
 */
final class ClockServer extends BasicFault {
  static final String KIND = "clock-server";
  static final Duration STEP = Duration.ofMinutes(10);

  ClockServer() {
    super(KIND, 5, Set.of(Trait.HOLDS));
  }

  @Override
  public Optional<String> unavailable(ChaosCassandra cassandra) {
    return FakeClock.unavailable();
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    ServerNode node = run.fleet().get(run.random().nextInt(run.fleet().size()));
    Duration offset = run.random().nextBoolean() ? STEP : STEP.negated();
    long hold = run.holdMillis();
    ClockFault fault = new ClockFault("server " + node.name(), run.fleet().clock(node), offset);
    long settle = ClockFault.SETTLE.toMillis();
    run.hold(kind(), run.bounds().serverKill() + run.bounds().storeFault(1, hold + 2 * settle), node.name(),
        fault.describe(), settle + hold, occasion.withBurst(), fault::inject, () -> {
          fault.heal();
          Thread.sleep(settle); // until the server surely reads the real time again
        });
  }
}
