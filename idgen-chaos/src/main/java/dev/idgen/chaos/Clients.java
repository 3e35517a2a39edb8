package dev.idgen.chaos;

import dev.idgen.chaos.RunLog.SequenceSpec;
import dev.idgen.client.IdSourceStats;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The run's recording clients ({@link ChaosClient}: stubs, raw callers, strict clients), each with a number of
 * its own ({@code client-N.bin}, a {@code client} line in {@code run.txt}); the fresh-advance episodes take a
 * number here too ({@link #nextId}).
 *
 * <p>Threads: the main thread starts the first clients, the fault thread kills and replaces them and takes
 * numbers, the main thread stops them at the end; the restarts and the shutdown hook iterate them: a
 * copy-on-write list, and numbers taken by those two threads only, one after the other.
 */
final class Clients {
  private final List<ChaosClient> all = new CopyOnWriteArrayList<>();
  private final ChaosRun.Settings settings;
  private final RunClock clock;
  private final RunLog log;
  private final Fleet fleet;
  private final RunSequences sequences;
  private int nextId;
  private long deadlineNanos;

  Clients(ChaosRun.Settings settings, RunClock clock, RunLog log, Fleet fleet, RunSequences sequences) {
    this.settings = settings;
    this.clock = clock;
    this.log = log;
    this.fleet = fleet;
    this.sequences = sequences;
  }

  List<ChaosClient> all() {
    return all;
  }

  /** The next client number (for a client, or the fresh-advance episodes' record). */
  int nextId() {
    return nextId++;
  }

  /** The clients' safety net: they stop by themselves at {@code nanos} ({@link System#nanoTime()}). */
  void deadline(long nanos) {
    this.deadlineNanos = nanos;
  }

  /** Starts a client of {@code kind} on every server, on the sequences of its kind. */
  void start(ChaosClient.Kind kind) {
    int id = nextId();
    List<String> targets = fleet.nodes().stream().map(ServerNode::target).toList();
    ChaosClient c = new ChaosClient(id, kind, targets, sequences.of(kind).stream().map(SequenceSpec::name).toList(),
        settings.out(), clock, settings.seed() * 31 + id, deadlineNanos,
        kind == ChaosClient.Kind.STRICT ? settings.strictRate() : settings.rate(), settings.callScale());
    log.line("client", id, kind.word());
    all.add(c);
    c.start();
  }

  /** {@code victim} dies mid-stream, and a new client of its kind takes its place. */
  void killAndReplace(ChaosClient victim) throws InterruptedException {
    victim.kill();
    logStubStats(victim);
    all.remove(victim);
    start(victim.kind());
  }

  /** Stops every client gracefully (calls in flight finish and are recorded), logging its stubs' counts. */
  void stopAll() throws InterruptedException {
    for (ChaosClient c : all) {
      c.stop();
      logStubStats(c);
    }
  }

  /** Kills every client (the end's {@code finally}). */
  void killAll() throws InterruptedException {
    for (ChaosClient c : all) {
      c.kill();
    }
  }

  /** A restarted server is back: the clients reconnect at once. */
  void resetConnectBackoff() {
    all.forEach(ChaosClient::resetConnectBackoff);
  }

  /** A stub's own counters, per sequence, and its caller's tryNext() counts, when it ends (killed or stopped). */
  private void logStubStats(ChaosClient c) {
    for (IdSourceStats st : c.stubStats()) {
      log.line("stub", "client-" + c.id(), st.sequence(), st.idsServed(), st.idsExpired());
    }
    long[] tries = c.tryStats();
    if (c.kind() != ChaosClient.Kind.RAW) {
      log.line("stub-try", "client-" + c.id(), tries[0], tries[1]);
    }
  }
}
