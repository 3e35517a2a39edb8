package dev.idgen.chaos;

import dev.idgen.chaos.RunLog.SequenceSpec;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@code owner-kill}: {@code kill -9} of the server that owns the strict sequence now ({@link RunSequences#STRICT}:
 * its owner as {@code GetSequence} names it, by its gRPC target; a server of its home datacenter if no owner
 * can be found within 15 s, said in the fault's line), restarted after 0.5–2 s as for a server kill, but on
 * the restarts' thread ({@link Restarts}): the fault thread goes on meanwhile, and waits for the restart only
 * before a fault that starts, stops, kills or cuts a server, and at the end. Its window runs from the kill to
 * the restarted server's SERVING. Only in runs with strict clients.
 *
 * <p>Threads: drawn and killed on the fault thread, restarted on {@link Restarts}' thread.
 */
final class OwnerKill extends BasicFault {
  OwnerKill() {
    super("owner-kill", 2, Set.of(Trait.HOLDS, Trait.NEEDS_SERVERS, Trait.OWNER));
  }

  @Override
  public void inject(FaultContext run, Occasion occasion) throws Exception {
    List<SequenceSpec> strict = run.sequences().strict();
    SequenceSpec seq = strict.get(run.random().nextInt(strict.size()));
    ServerNode fallback = homeServer(run, seq);
    Optional<ServerNode> owner = run.owners().currentOwner(seq);
    ServerKill.killAndRestart(run, owner.orElse(fallback), kind(), " of " + seq.name()
        + (owner.isPresent() ? "" : " owner-unknown"), occasion.withBurst(), true);
  }

  /** A server of {@code seq}'s home datacenter, drawn: the one aimed at when no owner can be found. */
  static ServerNode homeServer(FaultContext run, SequenceSpec seq) {
    List<ServerNode> home = run.fleet().nodes().stream()
        .filter(n -> n.datacenter().equals(seq.homeDatacenter())).toList();
    return home.get(run.random().nextInt(home.size()));
  }
}
