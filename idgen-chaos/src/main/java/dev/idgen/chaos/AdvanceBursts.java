package dev.idgen.chaos;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.StripeState;
import dev.idgen.chaos.RunLog.SequenceSpec;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Advance bursts: 3–6 concurrent {@code AdvanceSequence} calls on random servers, floors a little above an
 * unbounded sequence's current cursors (so every ID cached anywhere, in a pool, a server or a stub's lease, is
 * at or below them), each logged ({@code advance}: floor, server, start, return, {@code ok} or
 * {@code failed:CODE}). Drawn by the fault thread ({@link #plan}, so the schedule stays the seed's), run on the
 * advance pool ({@link #start}): the fault thread goes on meanwhile. Advances that fail promise nothing; the
 * highest floor of each sequence that failed is advanced again at the end ({@link #completeFailed}), as an
 * operator would.
 *
 * <p>Threads: the pool (also the fresh-advance episodes' executor) runs the calls; the bursts under way are the
 * fault thread's list, awaited at the end by the same thread; the failed floors and the cursors seen are
 * concurrent maps, merged by every burst thread.
 */
final class AdvanceBursts {
  /** How long the end of a run waits for the advance bursts still under way. */
  private static final long BURST_WAIT_SECONDS = 120;

  /** An advance burst as drawn from the seed: the sequence, the calls' floors above the cursor, their servers. */
  record Burst(SequenceSpec seq, ServerNode asked, long offset, long[] extra, ServerNode[] targets,
      String during, String faultSeq) {}

  private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "chaos-advance");
    t.setDaemon(true);
    return t;
  });
  private final List<Future<?>> bursts = new ArrayList<>();
  /** The highest floor of each sequence that an advance tried and failed to set: completed at the end. */
  private final Map<String, Long> unfinishedFloors = new ConcurrentHashMap<>();
  /** The highest cursor each sequence was seen at, for a burst whose GetSequence fails. */
  private final Map<String, Long> lastCursor = new ConcurrentHashMap<>();
  private final Fleet fleet;
  private final RunSequences sequences;
  private final RunLog log;
  private final RunClock clock;
  private final Narrator narrator;

  AdvanceBursts(Fleet fleet, RunSequences sequences, RunLog log, RunClock clock, Narrator narrator) {
    this.fleet = fleet;
    this.sequences = sequences;
    this.log = log;
    this.clock = clock;
    this.narrator = narrator;
  }

  /** The advance pool: bursts, and the fresh-advance episodes' calls. */
  ExecutorService pool() {
    return pool;
  }

  /**
   * Draws a burst from {@code random} (on the fault thread, so the schedule stays the seed's) during fault
   * {@code faultNo}. {@code during} names the fault it comes with, or is empty (a burst of its own).
   */
  Burst plan(String during, int faultNo, Random random) {
    List<SequenceSpec> unbounded = sequences.unbounded();
    SequenceSpec seq = unbounded.get(random.nextInt(unbounded.size()));
    ServerNode asked = fleet.get(random.nextInt(fleet.size()));
    long offset = random.nextInt((int) seq.dcBlock());
    int calls = 3 + random.nextInt(4);
    long[] extra = new long[calls];
    ServerNode[] targets = new ServerNode[calls];
    for (int i = 0; i < calls; i++) {
      extra[i] = random.nextInt(1_000);
      targets[i] = fleet.get(random.nextInt(fleet.size()));
    }
    // A burst that comes along with a fault is in that fault's window; one of its own is a fault itself.
    return new Burst(seq, asked, offset, extra, targets, during, during.isEmpty() ? Integer.toString(faultNo) : "-");
  }

  /** Starts {@code burst} on its own threads, its cursor read there too, and returns at once. */
  void startAlone(Burst burst) {
    bursts.add(pool.submit(() -> {
      run(burst, cursorNow(burst.seq(), burst.asked()));
      return null;
    }));
  }

  /**
   * Runs {@code work} on the advance pool beside the fault thread and returns at once; the end of the run waits
   * for it as for a burst (the reservations of {@link ReserveRangeFault}). On the fault thread, as the bursts.
   */
  void alongside(java.util.concurrent.Callable<?> work) {
    bursts.add(pool.submit(work));
  }

  /** Starts {@code burst} from {@code cursor} (read before the fault it comes with) and returns at once. */
  void start(Burst burst, long cursor) {
    bursts.add(pool.submit(() -> {
      run(burst, cursor);
      return null;
    }));
  }

  /** The burst's calls, all at once, each on a random server; logs each call's outcome when it returns. */
  private void run(Burst burst, long cursor) throws Exception {
    SequenceSpec seq = burst.seq();
    String during = burst.during();
    int calls = burst.extra().length;
    long base = cursor + burst.offset();
    log.fault(clock.millis(), "advance-burst", 0, seq.name() + " calls=" + calls + " base-floor=" + base
        + (during.isEmpty() ? "" : " during=" + during));
    narrator.say("advance burst on " + seq.name() + ": " + calls + " calls from floor " + base
        + (during.isEmpty() ? "" : " during " + during));
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    long from = clock.millis();
    for (int i = 0; i < calls; i++) {
      long floor = base + burst.extra()[i];
      ServerNode target = burst.targets()[i];
      done.add(pool.submit(() -> {
        go.await();
        advance(seq.name(), floor, target);
        return null;
      }));
    }
    go.countDown();
    try {
      for (Future<?> f : done) {
        f.get(90, TimeUnit.SECONDS);
      }
    } finally {
      log.window(burst.faultSeq(), "advance-burst", from, clock.millis(), seq.name() + " calls=" + calls
          + (during.isEmpty() ? "" : " during=" + during));
    }
  }

  /** One advance of {@code name} to {@code floor} on {@code target}, logged; its outcome. */
  private String advance(String name, long floor, ServerNode target) {
    long started = clock.nanos();
    String outcome;
    try {
      Fleet.admin(target, 60).advanceSequence(
          AdvanceSequenceRequest.newBuilder().setName(name).setFloor(floor).build());
      outcome = "ok";
    } catch (StatusRuntimeException e) {
      outcome = "failed:" + e.getStatus().getCode();
      // Why, for whoever reads the run's record: the checker ignores notes.
      log.line("note", "advance-failed", name, floor, target.name(), e.getStatus().getCode(),
          Membership.oneLine(e.getStatus().getDescription()));
    }
    // Taken after the call returned: a batch asked for, or a call started, later is certainly later.
    log.line("advance", name, floor, clock.nanos(), outcome, started, target.name());
    if (!outcome.equals("ok")) {
      failed(name, floor);
    }
    return outcome;
  }

  /** An advance of {@code name} to {@code floor} did not return OK: completed at the end. */
  void failed(String name, long floor) {
    unfinishedFloors.merge(name, floor, Math::max);
  }

  /**
   * The sequence's highest global cursor as {@code first} (or, if it cannot answer, the next server) sees it;
   * the highest seen before if none can say.
   */
  long cursorNow(SequenceSpec seq, ServerNode first) {
    int from = fleet.nodes().indexOf(first);
    for (int i = 0; i < fleet.size(); i++) {
      ServerNode node = fleet.get((from + i) % fleet.size());
      try {
        Sequence state = Fleet.admin(node, 10)
            .getSequence(GetSequenceRequest.newBuilder().setName(seq.name()).build());
        long cursor = state.getStripeStatesList().stream().filter(StripeState::hasNextUnreserved)
            .mapToLong(StripeState::getNextUnreserved).max().orElse(seq.start());
        return lastCursor.merge(seq.name(), cursor, Math::max);
      } catch (StatusRuntimeException e) {
        // the next one
      }
    }
    return lastCursor.getOrDefault(seq.name(), seq.start());
  }

  /** Waits for the bursts still under way (each at most {@value #BURST_WAIT_SECONDS} s); the fault thread's. */
  void awaitAll() throws InterruptedException {
    for (Future<?> burst : bursts) {
      try {
        burst.get(BURST_WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (ExecutionException | TimeoutException e) {
        narrator.say("an advance burst did not end cleanly: " + e);
      }
    }
  }

  /**
   * Retries, once the clients have stopped, the highest floor of each sequence whose advance failed, as an
   * operator would ("advance again to complete it"): a failed advance may have moved the global cursors but
   * not trimmed every pool, and the final reckoning counts what the pools hold above the floor. Logged as
   * advances; no ID is handed out after them.
   */
  void completeFailed() {
    for (Map.Entry<String, Long> e : unfinishedFloors.entrySet()) {
      String outcome = "failed:none";
      for (int attempt = 0; attempt < 5 && !outcome.equals("ok"); attempt++) {
        ServerNode target = fleet.get(attempt % fleet.size());
        long started = clock.nanos();
        try {
          Fleet.admin(target, 60).advanceSequence(
              AdvanceSequenceRequest.newBuilder().setName(e.getKey()).setFloor(e.getValue()).build());
          outcome = "ok";
        } catch (StatusRuntimeException failed) {
          outcome = "failed:" + failed.getStatus().getCode();
        }
        log.line("advance", e.getKey(), e.getValue(), clock.nanos(), outcome, started, target.name());
      }
      narrator.say("completed the failed advance of " + e.getKey() + " to " + e.getValue() + ": " + outcome);
    }
  }

  void shutdownNow() {
    pool.shutdownNow();
  }
}
