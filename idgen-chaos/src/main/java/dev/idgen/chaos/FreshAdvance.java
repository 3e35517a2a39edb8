package dev.idgen.chaos;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.chaos.RunLog.SequenceSpec;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The {@code fresh-advance} fault: an {@code AdvanceSequence} right after a sequence is created, while servers
 * of both datacenters load it and make their first refills. What it provokes: a refill that took its block
 * from the global cursor before the advance moved it, and appends it to its datacenter's pool after the
 * advance trimmed that pool, when the pool had no row yet (the trim must then create the row at the floor,
 * or the block goes in with no floor and a runtime loaded later hands out IDs at or below it).
 *
 * <p>One episode ({@link #run}), on the fault thread, everything bounded in time:
 * <ol>
 *   <li>creates a sequence of its own ({@code chaos-fresh-N}: one stripe, node blocks of {@value #NODE_BLOCK},
 *       DC blocks of {@value #DC_BLOCK}) and hands it to the run's reckoning ({@code sequence} line, final
 *       state at the end): every range of it is checked as any other's;
 *   <li>starts one {@code Allocate} on one server of each datacenter at once (the loaders: each loads the
 *       sequence and refills its datacenter's pool from the global cursor), and the advance a few
 *       milliseconds later, on another server, at a floor inside the first DC block, above the first node
 *       block; in two episodes of three it first reads the sequence's global cursor as fast as it can, freezes
 *       both loaders (SIGSTOP, as a GC pause would) as soon as a datacenter has taken a block, starts the
 *       advance 0–30 ms later, and thaws them once both pools show the floor (at most 4 s): the refill that
 *       took the block, frozen before its append (unless it had appended already), appends after the trim;
 *   <li>meanwhile reads both pool rows every {@value #POLL_MILLIS} ms ({@link PoolWatch}), and says per
 *       datacenter what it saw: {@code case1} (a row the trim created, with the floor and nothing appended,
 *       then a block that starts at or below the floor appended to it: the race, seen), {@code trim-created}
 *       (the trim created the row; what was appended came from above the floor), {@code append-first} (a
 *       refill appended before the trim), {@code seen-late} (first seen with both: cannot tell),
 *       {@code absent} or {@code unread};
 *   <li>once the advance returned OK, runtimes loaded after it: an {@code Allocate} on every live server (those
 *       that were not loaders load it now), then, after the servers' {@code unload-idle-after} and two sweeps,
 *       on every live server again (each had unloaded it: a new runtime);
 *   <li>logs a {@code fresh} line in {@code run.txt}.
 * </ol>
 * A prober thread ({@link #startProber}) then keeps calling the fresh sequences, one call every 1–2 s on a
 * random live server, for the rest of the run: servers restarted by other faults load them again, and such
 * calls are counted ({@code fresh-probes} line at the end).
 *
 * <p>Its calls go through channels of its own with a {@link RecordingInterceptor}, into a record file of its
 * own ({@link FreshCalls}: {@code client-N.bin}, a {@code client N fresh} line), so the checker holds every one
 * of its ranges to uniqueness, bounds and the floors ({@code below_floor}: a call started after the advance
 * returned OK). What the pool rows showed is {@link PoolObservation}'s to say.
 *
 * <p>Threads: {@link #run} is called by the fault thread only; its calls, pauses and advance run on the run's
 * advance pool; the prober is one thread of its own. What they share is the recorder (thread-safe), the list
 * of fresh sequences and the paused servers (concurrent collections), and the servers' thread-safe reads. A
 * freeze happens under {@code freezeLock}, which the end of an episode also takes to say it is over, so that no
 * freeze drawn for later happens after the episode thawed its servers.
 */
final class FreshAdvance implements AutoCloseable {
  static final long NODE_BLOCK = 100;
  static final long DC_BLOCK = 1_000;
  /**
   * The floor is drawn this far above the sequence's start: inside the first DC block (a first refill takes
   * a whole one), above the first node block (what the refilling server reserves for itself at once).
   */
  static final long MIN_FLOOR_OFFSET = 100;
  static final long MAX_FLOOR_OFFSET = 900;
  static final String PREFIX = "chaos-fresh-";
  private static final long POLL_MILLIS = 20;
  /** The longest a loader stays frozen. */
  private static final long MAX_PAUSE_MILLIS = 4_000;
  private static final long MIN_PAUSE_MILLIS = 200;
  private static final long EPISODE_MILLIS = 60_000;
  /** How long an episode that freezes its loaders looks for their first global take. */
  private static final long TAKE_WAIT_MILLIS = 5_000;

  /**
   * One episode as drawn from the seed: the sequence's name, the server slots that create it, load it (one per
   * datacenter) and advance it, the loaders' counts, whether they are frozen at the first global take, when the
   * advance starts (ms after the loaders start, or after the freeze) and its floor above the start.
   */
  record Plan(String name, int creator, List<Integer> loaders, List<Long> counts, boolean pause,
      long advanceAfterMillis, long floorOffset, int advancer) {}

  /** What the run does with what an episode creates and leaves unfinished. */
  interface Hooks {
    /** The sequence exists: into the run's reckoning. */
    void created(SequenceSpec spec);

    /** The advance did not return OK: the run completes it at the end. */
    void advanceFailed(String name, long floor);
  }

  /** A fresh sequence, with each server slot's incarnation when its advance returned (-1: not OK). */
  private record Fresh(String name, int[] incarnations) {}

  private final RunLog log;
  private final RunClock clock;
  private final List<ServerNode> servers;
  private final PoolWatch watch;
  private final Duration unloadIdleAfter;
  private final ExecutorService pool;
  private final FreshCalls calls;
  private final List<Fresh> fresh = new CopyOnWriteArrayList<>();
  private final Set<ServerNode> paused = ConcurrentHashMap.newKeySet();
  /** Held while a server is frozen and added to {@link #paused}, and while an episode ends its freezes. */
  private final Object freezeLock = new Object();
  private final Random proberRandom;
  private final AtomicLong probes = new AtomicLong();
  private final AtomicLong probesOk = new AtomicLong();
  private final AtomicLong probesRestarted = new AtomicLong();
  private final AtomicLong probesRestartedOk = new AtomicLong();
  private volatile boolean stopped;
  private Thread prober;

  /**
   * Channels to every server slot, recorded into {@code dir/client-<clientId>.bin}; {@code unloadIdleAfter}
   * the servers' setting (zero: never, and no idle step).
   */
  FreshAdvance(int clientId, Path dir, RunLog log, RunClock clock, List<ServerNode> servers, PoolWatch watch,
      Duration unloadIdleAfter, ExecutorService pool, long seed) {
    this.log = log;
    this.clock = clock;
    this.servers = List.copyOf(servers);
    this.watch = watch;
    this.unloadIdleAfter = unloadIdleAfter;
    this.pool = pool;
    this.calls = new FreshCalls(dir.resolve("client-" + clientId + ".bin"), clock, this.servers, pool);
    this.proberRandom = new Random(seed);
    log.line("client", clientId, "fresh");
  }

  /** The sequence an episode creates. */
  static SequenceSpec spec(String name) {
    return new SequenceSpec(name, 1, Long.MAX_VALUE, 1, NODE_BLOCK, DC_BLOCK);
  }

  /**
   * Runs one episode (see the class comment) and returns its detail for the fault's window; logs its
   * {@code fresh} line. Thaws every server it froze before it returns, however it ends.
   */
  String run(Plan plan, Hooks hooks) throws InterruptedException {
    long episodeDeadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(EPISODE_MILLIS);
    Optional<String> noWatch = watch.open();
    SequenceSpec spec = spec(plan.name());
    try {
      admin(plan.creator(), 30).createSequence(CreateSequenceRequest.newBuilder().setName(spec.name())
          .setStart(spec.start()).setMax(spec.max()).setStripes(spec.stripes()).setNodeBlockSize(spec.nodeBlock())
          .setDcBlockSize(spec.dcBlock()).build());
    } catch (StatusRuntimeException e) {
      return plan.name() + " not created: " + e.getStatus().getCode();
    }
    long created = clock.nanos();
    hooks.created(spec);
    Episode episode = new Episode(plan, spec, episodeDeadline);
    episode.startLoaders();
    episode.startAdvance();
    episode.watchPools();
    String outcome = result(episode.advance, "failed:TIMEOUT");
    long advanceStarted = episode.advanceTimes.get(0);
    long advanceReturned = episode.advanceTimes.get(1);
    if (!outcome.equals("ok")) {
      hooks.advanceFailed(spec.name(), episode.floor);
    }
    List<FreshCalls.Call> loaderCalls = episode.loaderCalls();
    // A loader in flight when the advance started: its first refill (its server loads the sequence first)
    // was under way, or had not begun.
    long inFlight = loaderCalls.stream().filter(c -> advanceStarted != Long.MIN_VALUE
        && c.startNanos() < advanceStarted && c.firstNanos() > advanceStarted).count();
    long frozen = episode.frozen();
    long[][] after = outcome.equals("ok") ? episode.runtimesAfter() : new long[][] {{0, 0}, {0, 0}};
    long[] others = after[0];
    long[] idle = after[1];
    StringBuilder pools = new StringBuilder();
    episode.seen.forEach((dc, o) -> pools.append(' ').append(dc).append('=').append(o.state()));
    log.line("fresh", spec.name(), episode.floor, outcome, created, advanceStarted, advanceReturned,
        "loaders=" + loaderCalls.size(), "in_flight=" + inFlight, "take_seen_ms=" + episode.takeSeenMillis,
        "frozen=" + frozen, "frozen_ms=" + episode.pauseMillis,
        pools.toString().trim(), "reads=" + episode.seen.values().stream().mapToLong(o -> o.reads).sum(),
        "unread=" + episode.seen.values().stream().mapToLong(o -> o.unread).sum(),
        "others=" + others[0] + "/" + others[1], "idle=" + idle[0] + "/" + idle[1]);
    return spec.name() + " floor=" + episode.floor + " " + outcome + " advance-after-creation-ms="
        + (advanceStarted == Long.MIN_VALUE ? "-" : TimeUnit.NANOSECONDS.toMillis(advanceStarted - created))
        + " frozen=" + frozen + pools + (noWatch.isPresent() ? " pools-unread(" + noWatch.get() + ")" : "");
  }

  /**
   * One episode under way, once its sequence exists: its loaders' calls, their freezes, its advance, and what
   * the pool rows showed. Made and driven by the fault thread; its calls, freezes and advance run on the pool,
   * and what they share with it is atomic (the times) or held under {@link #freezeLock} (the freezes).
   */
  private final class Episode {
    final Plan plan;
    final SequenceSpec spec;
    final long floor;
    final long floorIndex;
    final long deadline;
    final CountDownLatch go = new CountDownLatch(1);
    final List<Future<FreshCalls.Call>> loaders = new ArrayList<>();
    final AtomicLongArray pausedAt;
    /**
     * Set, under freezeLock, when the episode thaws its servers for good: no freeze happens after that,
     * however the episode ends.
     */
    final AtomicBoolean over = new AtomicBoolean();
    /** When the advance started and returned (run clock; Long.MIN_VALUE: not yet). */
    final AtomicLongArray advanceTimes = new AtomicLongArray(new long[] {Long.MIN_VALUE, Long.MIN_VALUE});
    final Map<String, PoolObservation> seen = new LinkedHashMap<>();
    Future<String> advance;
    long takeSeenMillis = -1;
    long pauseMillis;

    Episode(Plan plan, SequenceSpec spec, long deadline) {
      this.plan = plan;
      this.spec = spec;
      this.floor = spec.start() + plan.floorOffset();
      this.floorIndex = floor - spec.start();
      this.deadline = deadline;
      this.pausedAt = new AtomicLongArray(plan.loaders().size());
      ChaosCassandra.DATACENTERS.forEach(dc -> seen.put(dc, new PoolObservation()));
    }

    /** Starts the loaders' calls at once; if the plan says so, freezes them at the first global take. */
    void startLoaders() throws InterruptedException {
      for (int i = 0; i < plan.loaders().size(); i++) {
        int slot = plan.loaders().get(i);
        long count = plan.counts().get(i);
        loaders.add(pool.submit(() -> {
          go.await();
          return calls.call(slot, spec.name(), count, 15);
        }));
      }
      go.countDown();
      long t0 = clock.nanos();
      if (plan.pause()) {
        // Freeze on the first global take: the server that made it is then between its take and its append
        // (unless it appended already), and the advance's trim comes first.
        takeSeenMillis = awaitFirstTake(spec.name(), t0);
        if (takeSeenMillis >= 0) {
          freezeLoaders();
        }
      }
    }

    private void freezeLoaders() throws InterruptedException {
      List<Future<?>> freezes = new ArrayList<>();
      for (int i = 0; i < plan.loaders().size(); i++) {
        int k = i;
        ServerNode node = servers.get(plan.loaders().get(i));
        freezes.add(pool.submit(() -> {
          synchronized (freezeLock) {
            if (over.get() || loaders.get(k).isDone() || !node.alive()) {
              return null; // its call is over: freezing it now would provoke nothing
            }
            paused.add(node);
            if (!node.pause()) {
              paused.remove(node);
              return null;
            }
            pausedAt.set(k, clock.nanos());
          }
          return null;
        }));
      }
      for (Future<?> f : freezes) {
        result(f, null);
      }
    }

    /** Starts the advance, {@code advanceAfterMillis} from now, on the pool; logs it when it returns. */
    void startAdvance() {
      long advanceFrom = clock.nanos();
      advance = pool.submit(() -> {
        sleepUntil(advanceFrom + TimeUnit.MILLISECONDS.toNanos(plan.advanceAfterMillis()));
        long started = clock.nanos();
        advanceTimes.set(0, started);
        String outcome;
        try {
          admin(plan.advancer(), 60).advanceSequence(
              AdvanceSequenceRequest.newBuilder().setName(spec.name()).setFloor(floor).build());
          outcome = "ok";
        } catch (StatusRuntimeException e) {
          outcome = "failed:" + e.getStatus().getCode();
        }
        long returned = clock.nanos(); // after the call returned: a call started later is certainly later
        advanceTimes.set(1, returned);
        log.line("advance", spec.name(), floor, returned, outcome, started, servers.get(plan.advancer()).name());
        return outcome;
      });
    }

    /**
     * Reads the pool rows every {@value #POLL_MILLIS} ms until the advance and the loaders are done (at most
     * until the episode's deadline), thawing the frozen loaders once both pools show the floor (at least
     * {@value #MIN_PAUSE_MILLIS}, at most {@value #MAX_PAUSE_MILLIS} ms); then one last look.
     */
    void watchPools() throws InterruptedException {
      boolean thawed = !plan.pause();
      try {
        while (System.nanoTime() < deadline) {
          look();
          if (!thawed) {
            thawed = thawIfDue();
          }
          if (thawed && advance.isDone() && loaders.stream().allMatch(Future::isDone)) {
            break;
          }
          Thread.sleep(POLL_MILLIS);
        }
      } finally {
        synchronized (freezeLock) {
          over.set(true);
        }
        thawAll();
      }
      // The loaders' appends are over once their calls are (a call is served after its refill): one last look.
      look();
    }

    private void look() {
      for (Map.Entry<String, PoolObservation> e : seen.entrySet()) {
        e.getValue().see(watch.read(spec.name(), e.getKey()), floor, floorIndex);
      }
    }

    /** Thaws the loaders if their freeze is due to end; true if it did (or none was frozen). */
    private boolean thawIfDue() {
      long firstPause = firstPause(pausedAt);
      long now = clock.nanos();
      boolean trimmed = seen.values().stream().allMatch(o -> o.floorSeen);
      if (firstPause == Long.MAX_VALUE || (now - firstPause >= TimeUnit.MILLISECONDS.toNanos(MIN_PAUSE_MILLIS)
          && (trimmed || now - firstPause >= TimeUnit.MILLISECONDS.toNanos(MAX_PAUSE_MILLIS)))) {
        pauseMillis = firstPause == Long.MAX_VALUE ? 0 : TimeUnit.NANOSECONDS.toMillis(now - firstPause);
        thawAll();
        return true;
      }
      return false;
    }

    List<FreshCalls.Call> loaderCalls() throws InterruptedException {
      List<FreshCalls.Call> calls = new ArrayList<>();
      for (Future<FreshCalls.Call> f : loaders) {
        FreshCalls.Call c = result(f, null);
        if (c != null) {
          calls.add(c);
        }
      }
      return calls;
    }

    long frozen() {
      long frozen = 0;
      for (int i = 0; i < pausedAt.length(); i++) {
        if (pausedAt.get(i) != 0) {
          frozen++;
        }
      }
      return frozen;
    }

    /**
     * Runtimes loaded after the advance returned OK: on the servers that had not loaded it, then on every
     * server once each has unloaded it (idle). Returns {@code {others, idle}}, each {@code {calls, ok}}.
     */
    long[][] runtimesAfter() throws InterruptedException {
      long[] others = {0, 0};
      long[] idle = {0, 0};
      int[] incarnations = new int[servers.size()];
      for (int slot = 0; slot < servers.size(); slot++) {
        incarnations[slot] = servers.get(slot).incarnation();
      }
      fresh.add(new Fresh(spec.name(), incarnations));
      for (FreshCalls.Call c : calls.callEveryServer(spec.name())) {
        if (!plan.loaders().contains(c.slot())) {
          others[0]++;
          others[1] += c.ok() ? 1 : 0;
        }
      }
      if (!unloadIdleAfter.isZero()) {
        // The sweep (every second at a few seconds' idle time) marks a runtime idle, and unloads it once it
        // stayed so for the idle time: at most the idle time plus two sweeps after its last call; one more.
        long wait = Math.min(30_000, unloadIdleAfter.toMillis() + 3_000);
        if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(wait) < deadline) {
          Thread.sleep(wait);
          for (FreshCalls.Call c : calls.callEveryServer(spec.name())) {
            idle[0]++;
            idle[1] += c.ok() ? 1 : 0;
          }
        }
      }
      return new long[][] {others, idle};
    }
  }

  /**
   * Reads {@code sequence}'s global cursor as fast as it can until a datacenter has taken a block from it, for
   * at most {@value #TAKE_WAIT_MILLIS} ms; returns when that was seen (ms after {@code t0}), or -1.
   */
  private long awaitFirstTake(String sequence, long t0) throws InterruptedException {
    long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(TAKE_WAIT_MILLIS);
    while (clock.nanos() < deadline) {
      Optional<Long> reserved = watch.reserved(sequence);
      if (reserved.isPresent() && reserved.get() > 0) {
        return TimeUnit.NANOSECONDS.toMillis(clock.nanos() - t0);
      }
      if (reserved.isEmpty()) {
        Thread.sleep(5); // a read that failed: not at once again
      } else if (Thread.interrupted()) {
        throw new InterruptedException(); // reads back to back: each is a round trip, the take's append is not much more
      }
    }
    return -1;
  }

  /**
   * Starts the prober: until {@link #close}, one call every 1–2 s on a fresh sequence whose advance returned
   * OK and a live server, both drawn; a call on a server restarted since that advance is counted apart.
   */
  void startProber() {
    if (prober != null) {
      return;
    }
    prober = new Thread(() -> {
      try {
        while (!stopped) {
          Thread.sleep(1_000 + proberRandom.nextInt(1_000));
          if (fresh.isEmpty()) {
            continue;
          }
          Fresh f = fresh.get(proberRandom.nextInt(fresh.size()));
          int slot = proberRandom.nextInt(servers.size());
          ServerNode node = servers.get(slot);
          if (stopped || !node.alive() || paused.contains(node)) {
            continue;
          }
          boolean restarted = node.incarnation() > f.incarnations()[slot];
          FreshCalls.Call c = calls.call(slot, f.name(), 1 + proberRandom.nextInt(5), 5);
          probes.incrementAndGet();
          probesOk.addAndGet(c.ok() ? 1 : 0);
          if (restarted) {
            probesRestarted.incrementAndGet();
            probesRestartedOk.addAndGet(c.ok() ? 1 : 0);
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "chaos-fresh-prober");
    prober.setDaemon(true);
    prober.start();
  }

  /** Thaws every server an episode froze (also from the shutdown hook); never throws. */
  void thawAll() {
    for (ServerNode node : List.copyOf(paused)) {
      try {
        node.resume();
      } catch (IOException e) {
        System.err.println("chaos: could not resume " + node + ": " + e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      paused.remove(node);
    }
  }

  /**
   * Stops the prober, lets the calls in flight finish and be recorded, logs the {@code fresh-probes} line and
   * closes the record; safe to call more than once.
   */
  @Override
  public void close() throws InterruptedException {
    if (stopped) {
      return;
    }
    stopped = true;
    thawAll();
    if (prober != null) {
      prober.interrupt();
      prober.join(15_000);
    }
    calls.close();
    log.line("fresh-probes", "calls=" + probes.get(), "ok=" + probesOk.get(), "restarted=" + probesRestarted.get(),
        "restarted_ok=" + probesRestartedOk.get());
  }

  private SequenceAdminGrpc.SequenceAdminBlockingStub admin(int slot, long seconds) {
    return SequenceAdminGrpc.newBlockingStub(servers.get(slot).adminChannel())
        .withDeadlineAfter(seconds, TimeUnit.SECONDS);
  }

  /** The earliest time a loader was frozen, or Long.MAX_VALUE if none was. */
  private static long firstPause(AtomicLongArray pausedAt) {
    long first = Long.MAX_VALUE;
    for (int i = 0; i < pausedAt.length(); i++) {
      long t = pausedAt.get(i);
      if (t != 0) {
        first = Math.min(first, t);
      }
    }
    return first;
  }

  private void sleepUntil(long runNanos) throws InterruptedException {
    long left = runNanos - clock.nanos();
    if (left > 0) {
      TimeUnit.NANOSECONDS.sleep(left);
    }
  }

  /** {@code f}'s value within 90 s, or {@code fallback} if it failed or did not end. */
  static <T> T result(Future<T> f, T fallback) throws InterruptedException {
    try {
      return f.get(90, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      f.cancel(true);
      return fallback;
    }
  }
}
