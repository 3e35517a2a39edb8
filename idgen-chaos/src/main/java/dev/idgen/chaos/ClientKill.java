package dev.idgen.chaos;

import java.util.Set;

/**
 * {@code client-kill}: a random client dies mid-stream ({@link ChaosClient#kill()}: its channels shut down at
 * once, open calls cut, leases stranded) and a new one takes its place. Its lost bound: its calls in flight
 * ({@link LossBounds#client}).
 *
 * <p>Threads: the fault thread's; the window is an instant.
 */
final class ClientKill extends BasicFault {
  ClientKill() {
    super("client-kill", 3, Set.of());
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws InterruptedException {
    Clients clients = run.clients();
    ChaosClient victim = clients.all().get(run.random().nextInt(clients.all().size()));
    long at = run.clock().millis();
    run.log().fault(at, kind(), run.bounds().client(victim.kind()), victim.toString());
    run.say("killing " + victim);
    clients.killAndReplace(victim);
    run.log().window(run.faultLabel(), kind(), at, at, victim.toString());
  }
}
