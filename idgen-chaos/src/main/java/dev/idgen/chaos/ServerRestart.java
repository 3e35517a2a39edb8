package dev.idgen.chaos;

import java.time.Duration;
import java.util.Set;

/**
 * {@code server-restart}: a planned restart of a random server: SIGTERM, wait until it has exited (its shutdown
 * gives its reserves back to its datacenter's pool), start it again on the same port, wait until it reports
 * SERVING. Loses nothing of a per-server sequence ({@link LossBounds#strictStop}: what a strict owner held).
 *
 * <p>Threads: the fault thread's, from the SIGTERM to the SERVING.
 */
final class ServerRestart extends BasicFault {
  ServerRestart() {
    super("server-restart", 1, Set.of(Trait.NEEDS_SERVERS, Trait.PLANNED));
  }
  /** How long a graceful stop may take (SIGTERM to exit) before the server is killed and the run fails. */
  static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    ServerNode node = run.fleet().get(run.random().nextInt(run.fleet().size()));
    run.log().fault(run.clock().millis(), kind(), run.bounds().strictStop(), node.name());
    long from = run.clock().millis();
    restart(run, node);
    run.log().window(run.faultLabel(), kind(), from, run.clock().millis(), node.name());
  }

  /**
   * A planned restart of {@code node}: SIGTERM, wait until it has exited, start it again on the same port,
   * wait until it reports SERVING. A stop that does not end within {@link #STOP_TIMEOUT} ends in a
   * {@code kill -9}, logged with exit code -1 (the checker then counts it as a failed stop). The caller logs
   * the fault.
   */
  static void restart(FaultContext run, ServerNode node) throws Exception {
    RunLog log = run.log();
    RunClock clock = run.clock();
    run.report(node, "stop"); // its counters so far: this incarnation takes them along when it exits
    run.say("SIGTERM " + node);
    long downAt = clock.millis();
    try {
      int exit = node.stop(STOP_TIMEOUT);
      long stoppedAt = clock.millis();
      long[] returned = node.returnedAtStop();
      log.line("stopped", node.name(), exit, returned == null ? -1 : returned[0],
          returned == null ? -1 : returned[1], stoppedAt - downAt);
      run.say("stopped " + node + " in " + (stoppedAt - downAt) + " ms, exit " + exit
          + (returned == null ? ", no give-back logged" : ", gave back " + returned[0] + " IDs, abandoned "
              + returned[1]));
      run.fleet().start(node);
      run.started(node);
    } finally {
      log.line("down", "server-restart", node.name(), downAt, clock.millis());
    }
    run.clients().resetConnectBackoff();
    run.say("restarted " + node);
  }
}
