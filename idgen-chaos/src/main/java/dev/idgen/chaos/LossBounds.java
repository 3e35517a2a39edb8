package dev.idgen.chaos;

import dev.idgen.chaos.RunLog.SequenceSpec;

/**
 * <b>The lost-ID bound</b>: what each fault may lose at most, logged with the fault ({@code fault} line) and
 * summed by the checker into {@code lost_bound}. IDs leave the global cursors and are then either received by
 * a client, still held (a datacenter pool, a live server's memory) at the end, or lost. Each fault may lose
 * at most:
 * <ul>
 *   <li>server-kill (and owner-kill): per sequence and stripe, one node block (a server's pool never holds more
 *       than one block) plus one DC block (a refill taken from the global cursor but not yet appended to the
 *       datacenter's pool); plus whatever its open calls had been given and not delivered, at most every
 *       client's one call in flight per sequence ({@code stubs × sequences × max lease + raw callers × max
 *       count});
 *   <li>cassandra-pause: per live server, twice (one operation that fails at its deadline and its retry) one
 *       node block plus one DC block per sequence and stripe, for compare-and-sets whose outcome could not be
 *       resolved in time;
 *   <li>the network faults, the replica faults and cassandra-kill: the same per server they can reach (every
 *       server; the isolated one for server-isolate and owner-isolate), once per second held plus twice (an
 *       unresolved outcome takes at least a second: the nodes' CAS contention timeout), counting a Cassandra
 *       kill as held 30 s beyond its downtime (its restart);
 *   <li>client-kill: its open calls ({@code sequences × max lease} for a stub, {@code max count} for a raw
 *       caller): ranges sent and never read;
 *   <li>advance-burst: nothing counted: IDs at or below the highest floor are excluded from the reckoning,
 *       since an advance drops them on purpose;
 *   <li>server-restart, rolling-restart: nothing of a per-server sequence (a planned stop gives its reserves
 *       back), but what the owner of a strict sequence held ({@link #strictStop});
 *   <li>fresh-advance: what a kill of each frozen loader may lose, and per server a node block and a DC block
 *       of the new sequence;
 *   <li>redefine: per change of a sequence's definition (an update, a delete, an undelete), per server, its
 *       blocks ({@link #redefine}): every server gives back what it holds of it.
 * </ul>
 * Block sizes are the largest each sequence has had or may have had so far ({@link RunSequences#widest}): the
 * redefine kind changes them, and servers keep blocks taken under the old ones.
 * Calls that end CANCELLED or DEADLINE_EXCEEDED (timeouts during faults, stubs closed at the end) add what
 * they asked for and did not receive (the checker reads this from the records).
 *
 * <p>Threads: computed on the fault thread from the run's sequences and clients as they are then (both
 * concurrent collections); holds no state of its own.
 */
final class LossBounds {
  private final ChaosRun.Settings settings;
  private final RunSequences sequences;
  private final Clients clients;
  private final Fleet fleet;

  LossBounds(ChaosRun.Settings settings, RunSequences sequences, Clients clients, Fleet fleet) {
    this.settings = settings;
    this.sequences = sequences;
    this.clients = clients;
    this.fleet = fleet;
  }

  /**
   * What one server may hold and lose of every sequence: per stripe, a node block and a DC block, of the largest
   * sizes each has had (or may have had: an update tried) in the run.
   */
  long blocksPerServer() {
    return sequences.all().stream().mapToLong(this::blocksPerServer).sum();
  }

  /** {@link #blocksPerServer()} of one sequence. */
  private long blocksPerServer(SequenceSpec spec) {
    SequenceSpec s = sequences.widest(spec);
    return s.stripes() * (s.nodeBlock() + s.dcBlock());
  }

  /** A server's {@code kill -9}: its blocks, and every client's calls in flight. */
  long serverKill() {
    return blocksPerServer() + callsInFlight();
  }

  /** Every Cassandra node of a datacenter paused: twice each server's blocks. */
  long cassandraPause() {
    return 2 * fleet.size() * blocksPerServer();
  }

  /**
   * What a planned stop may lose: nothing of a per-server sequence (its reserves go back), but what the owner
   * of a strict sequence held, which is never given back (docs/design.md): a node block and a DC block each.
   */
  long strictStop() {
    return sequences.strict().stream().mapToLong(s -> s.nodeBlock() + s.dcBlock()).sum();
  }

  /** Every client's calls in flight, at most. */
  long callsInFlight() {
    long bound = 0;
    for (ChaosClient c : clients.all()) {
      bound += client(c.kind());
    }
    return bound;
  }

  /** What a client of {@code kind} may have open: its calls in flight, at most. */
  long client(ChaosClient.Kind kind) {
    return switch (kind) {
      case STUB -> sequences.of(kind).size() * ChaosClient.stubMaxLease(settings.callScale());
      case RAW -> ChaosClient.rawMaxCount(settings.callScale());
      case STRICT -> (long) (ChaosClient.STRICT_CALLERS + 1) * ChaosClient.STRICT_MAX_COUNT; // + its stub
    };
  }

  /**
   * What a fault that keeps {@code serversCut} servers from their store for {@code holdMillis} may lose: for
   * each, per sequence and stripe, a node block and a DC block per unresolved compare-and-set, at most one a
   * second (the nodes' CAS contention timeout) plus two.
   */
  long storeFault(int serversCut, long holdMillis) {
    return serversCut * blocksPerServer() * (holdMillis / 1_000 + 2);
  }

  /**
   * {@code changes} changes of {@code s}'s definition (an update, a delete, an undelete): each makes every server
   * give back what it holds of it, which a give-back that fails loses: its blocks on every server, each time.
   */
  long redefine(SequenceSpec s, int changes) {
    return changes * fleet.size() * blocksPerServer(s);
  }

  /** A fresh-advance episode: a kill of each of its {@code frozen} loaders, and its sequence's blocks per server. */
  long freshAdvance(int frozen) {
    return frozen * serverKill() + fleet.size() * (FreshAdvance.NODE_BLOCK + FreshAdvance.DC_BLOCK);
  }
}
