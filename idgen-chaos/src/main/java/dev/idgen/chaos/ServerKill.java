package dev.idgen.chaos;

import java.util.Set;

/**
 * {@code server-kill}: {@code kill -9} of a random server, restarted on the same port after 0.5–2 s. Its lost
 * bound: the server's blocks and every client's calls in flight ({@link LossBounds#serverKill}).
 *
 * <p>Threads: the fault thread kills and restarts (an owner kill restarts on {@link Restarts}' thread).
 */
final class ServerKill extends BasicFault {
  ServerKill() {
    super("server-kill", 3, Set.of(Trait.HOLDS, Trait.NEEDS_SERVERS));
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    ServerNode node = run.fleet().get(run.random().nextInt(run.fleet().size()));
    killAndRestart(run, node, kind(), "", occasion.withBurst(), false);
  }

  /**
   * {@code kill -9} of {@code node}, started again after 0.5–2 s: here, or if {@code background} on the
   * restarts' thread (the fault thread goes on; {@link Restarts#awaitAll}). The window and the {@code down}
   * line (kind server-kill: a server was dead) are logged once it is SERVING again.
   */
  static void killAndRestart(FaultContext run, ServerNode node, String kind, String detail, boolean withBurst,
      boolean background) throws Exception {
    long delay = 500 + run.random().nextInt(1_500);
    RunLog log = run.log();
    RunClock clock = run.clock();
    log.fault(clock.millis(), kind, run.bounds().serverKill(), node.name() + detail + " restart-after-ms=" + delay);
    run.report(node, "kill"); // what it is about to lose, in its own words
    AdvanceBursts bursts = run.bursts();
    AdvanceBursts.Burst burst = withBurst ? bursts.plan(kind + ":" + node.name(), run.faultNo(), run.random())
        : null;
    long cursor = burst == null ? 0 : bursts.cursorNow(burst.seq(), burst.asked());
    run.say("kill -9 " + node + (kind.equals("server-kill") ? "" : " (" + kind + detail + ")"));
    String seqNo = run.faultLabel();
    long downAt = clock.millis();
    node.kill();
    FaultContext.Step restart = () -> {
      try {
        Thread.sleep(delay);
        run.fleet().start(node);
        run.started(node);
      } finally {
        long to = clock.millis();
        log.line("down", "server-kill", node.name(), downAt, to);
        log.window(seqNo, kind, downAt, to, node.name());
      }
      run.clients().resetConnectBackoff();
      run.say("restarted " + node);
    };
    if (burst != null) {
      bursts.start(burst, cursor);
      run.counted();
    }
    if (background) {
      run.restarts().submit(restart);
    } else {
      restart.run();
    }
  }
}
