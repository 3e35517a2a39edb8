package dev.idgen.chaos;

import java.util.Set;

/**
 * {@code rolling-restart}: every server in turn, as {@code server-restart} ({@link ServerRestart#restart}),
 * the next one once the previous one is SERVING again. Not a default kind: it takes half a minute or more.
 *
 * <p>Threads: the fault thread's, from the first SIGTERM to the last SERVING.
 */
final class RollingRestart extends BasicFault {
  RollingRestart() {
    super("rolling-restart", 1, Set.of(Trait.NEEDS_SERVERS, Trait.PLANNED, Trait.ON_REQUEST));
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    Fleet fleet = run.fleet();
    String names = fleet.nodes().stream().map(ServerNode::name).toList().toString().replace(" ", "");
    run.log().fault(run.clock().millis(), kind(), fleet.size() * run.bounds().strictStop(), names);
    run.say("rolling restart of " + fleet.size() + " servers");
    long from = run.clock().millis();
    for (ServerNode node : fleet.nodes()) {
      ServerRestart.restart(run, node);
    }
    run.log().window(run.faultLabel(), kind(), from, run.clock().millis(), names);
  }
}
