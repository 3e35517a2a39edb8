package dev.idgen.chaos;

import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.chaos.RunLog.SequenceSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The strict sequences' owners: a thread that polls them every 500 ms while the clients run and logs each
 * change ({@code owner} lines in {@code run.txt}: the take-overs the checker counts), and the owner faults'
 * question "who owns it now?" ({@link #currentOwner}).
 *
 * <p>Threads: the monitor is one daemon thread, started and stopped by the main thread (bounded by the clients'
 * deadline; also stopped by the shutdown hook through the volatile flag); {@link #currentOwner} runs on the
 * fault thread. Both only read the fleet and ask the servers, all at once, through gRPC futures.
 */
final class OwnerMonitor {
  /** A strict sequence's owner as a server shows it: its gRPC target (null: none) and fencing epoch (-1: none). */
  private record OwnerView(String target, long epoch) {}

  private final Fleet fleet;
  private final RunSequences sequences;
  private final RunLog log;
  private final RunClock clock;
  private final Narrator narrator;
  /** Null until started, and without strict sequences. */
  private Thread thread;
  private volatile boolean stopped;

  OwnerMonitor(Fleet fleet, RunSequences sequences, RunLog log, RunClock clock, Narrator narrator) {
    this.fleet = fleet;
    this.sequences = sequences;
    this.log = log;
    this.clock = clock;
    this.narrator = narrator;
  }

  /** Starts polling the strict sequences' owners (none: nothing to do) until {@code deadlineNanos} at most. */
  void start(long deadlineNanos) {
    List<SequenceSpec> strict = sequences.strict();
    if (strict.isEmpty()) {
      return;
    }
    thread = new Thread(() -> {
      Map<String, String> last = new HashMap<>();
      try {
        while (!stopped && System.nanoTime() < deadlineNanos) {
          for (SequenceSpec seq : strict) {
            poll(seq, last);
          }
          Thread.sleep(500);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "chaos-owner-monitor");
    thread.setDaemon(true);
    thread.start();
  }

  /** One look at {@code seq}'s owner: logged if it is not {@code last}'s. */
  private void poll(SequenceSpec seq, Map<String, String> last) throws InterruptedException {
    Optional<OwnerView> owner = readOwner(seq, 2);
    if (owner.isEmpty()) {
      return;
    }
    String target = owner.get().target();
    long epoch = owner.get().epoch();
    String key = target + "#" + epoch;
    if (!key.equals(last.put(seq.name(), key))) {
      log.owner(seq.name(), clock.millis(), target, epoch);
      narrator.say("owner of " + seq.name() + ": " + (target == null ? "none" : fleet.nodeOf(target)
          .map(ServerNode::name).orElse("?") + " (" + target + ", epoch " + epoch + ")"));
    }
  }

  /** Tells the monitor to stop (the shutdown hook's: it does not wait). */
  void signalStop() {
    stopped = true;
  }

  void stop() throws InterruptedException {
    stopped = true;
    if (thread != null) {
      thread.interrupt();
      thread.join(10_000);
    }
  }

  /**
   * The server that owns {@code seq} now, asking for up to 15 s (during a take-over there is none, or none
   * that serves); empty if none could be found.
   */
  Optional<ServerNode> currentOwner(SequenceSpec seq) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (System.nanoTime() < deadline) {
      Optional<OwnerView> owner = readOwner(seq, 2);
      if (owner.isPresent() && owner.get().target() != null) {
        Optional<ServerNode> node = fleet.nodeOf(owner.get().target());
        if (node.isPresent() && node.get().alive()) {
          return node;
        }
      }
      Thread.sleep(250);
    }
    return Optional.empty();
  }

  /**
   * {@code seq}'s owner as the live servers show it, all asked at once (each within {@code seconds}): the
   * answer with the highest fencing epoch, since a server of another datacenter than the sequence's home shows
   * its own replicas' copy of the owner row (LOCAL_QUORUM), which may lag for a moment after a take-over;
   * empty if none answered.
   */
  private Optional<OwnerView> readOwner(SequenceSpec seq, long seconds) throws InterruptedException {
    GetSequenceRequest request = GetSequenceRequest.newBuilder().setName(seq.name()).build();
    List<Future<Sequence>> answers = new ArrayList<>();
    for (ServerNode node : fleet.nodes()) {
      if (node.alive()) {
        answers.add(SequenceAdminGrpc.newFutureStub(node.adminChannel())
            .withDeadlineAfter(seconds, TimeUnit.SECONDS).getSequence(request));
      }
    }
    OwnerView best = null;
    for (Future<Sequence> answer : answers) {
      try {
        Sequence s = answer.get(seconds + 1, TimeUnit.SECONDS);
        OwnerView seen = s.hasOwner() ? new OwnerView(s.getOwner(), s.hasOwnerEpoch() ? s.getOwnerEpoch() : -1)
            : new OwnerView(null, -1);
        if (best == null || seen.epoch() > best.epoch()) {
          best = seen;
        }
      } catch (ExecutionException | TimeoutException e) {
        answer.cancel(true); // that server did not answer: the others may
      }
    }
    return Optional.ofNullable(best);
  }
}
