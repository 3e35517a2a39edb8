package dev.idgen.chaos;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.chaos.RunLog.SequenceSpec;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
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
 * own ({@code client-N.bin}, a {@code client N fresh} line), so the checker holds every one of its ranges to
 * uniqueness, bounds and the floors ({@code below_floor}: a call started after the advance returned OK).
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

  /** One call's times (run clock; {@code firstNanos} the first range, or the end if none) and outcome. */
  private record Call(int slot, long startNanos, long firstNanos, long endNanos, String outcome) {
    boolean ok() {
      return outcome.equals("OK");
    }
  }

  /** A fresh sequence, with each server slot's incarnation when its advance returned (-1: not OK). */
  private record Fresh(String name, int[] incarnations) {}

  private final RunLog log;
  private final RunClock clock;
  private final List<ServerNode> servers;
  private final PoolWatch watch;
  private final Duration unloadIdleAfter;
  private final ExecutorService pool;
  private final Recorder recorder;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<Channel> recorded = new ArrayList<>();
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
    this.recorder = new Recorder(dir.resolve("client-" + clientId + ".bin"), clock);
    this.proberRandom = new Random(seed);
    for (int slot = 0; slot < this.servers.size(); slot++) {
      ManagedChannel ch = Grpc.newChannelBuilder(this.servers.get(slot).target(), InsecureChannelCredentials.create())
          .build();
      channels.add(ch);
      recorded.add(ClientInterceptors.intercept(ch, new RecordingInterceptor(recorder, slot)));
    }
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
    long floor = spec.start() + plan.floorOffset();
    long floorIndex = floor - spec.start();

    CountDownLatch go = new CountDownLatch(1);
    List<Future<Call>> loaders = new ArrayList<>();
    for (int i = 0; i < plan.loaders().size(); i++) {
      int slot = plan.loaders().get(i);
      long count = plan.counts().get(i);
      loaders.add(pool.submit(() -> {
        go.await();
        return call(slot, spec.name(), count, 15);
      }));
    }
    AtomicLongArray pausedAt = new AtomicLongArray(plan.loaders().size());
    // Set, under freezeLock, when the episode thaws its servers for good: no freeze happens after that,
    // however the episode ends.
    AtomicBoolean over = new AtomicBoolean();
    go.countDown();
    long t0 = clock.nanos();
    long takeSeenMillis = -1;
    if (plan.pause()) {
      // Freeze on the first global take: the server that made it is then between its take and its append
      // (unless it appended already), and the advance's trim comes first.
      takeSeenMillis = awaitFirstTake(spec.name(), t0);
      if (takeSeenMillis >= 0) {
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
    }
    AtomicLongArray advanceTimes = new AtomicLongArray(new long[] {Long.MIN_VALUE, Long.MIN_VALUE});
    long advanceFrom = clock.nanos();
    Future<String> advance = pool.submit(() -> {
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

    Map<String, Observation> seen = new LinkedHashMap<>();
    ChaosCassandra.DATACENTERS.forEach(dc -> seen.put(dc, new Observation()));
    boolean thawed = !plan.pause();
    long pauseMillis = 0;
    try {
      while (System.nanoTime() < episodeDeadline) {
        for (Map.Entry<String, Observation> e : seen.entrySet()) {
          e.getValue().see(watch.read(spec.name(), e.getKey()), floor, floorIndex);
        }
        if (!thawed) {
          long firstPause = firstPause(pausedAt);
          long now = clock.nanos();
          boolean trimmed = seen.values().stream().allMatch(o -> o.floorSeen);
          if (firstPause == Long.MAX_VALUE || (now - firstPause >= TimeUnit.MILLISECONDS.toNanos(MIN_PAUSE_MILLIS)
              && (trimmed || now - firstPause >= TimeUnit.MILLISECONDS.toNanos(MAX_PAUSE_MILLIS)))) {
            pauseMillis = firstPause == Long.MAX_VALUE ? 0 : TimeUnit.NANOSECONDS.toMillis(now - firstPause);
            thawAll();
            thawed = true;
          }
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
    for (Map.Entry<String, Observation> e : seen.entrySet()) {
      e.getValue().see(watch.read(spec.name(), e.getKey()), floor, floorIndex);
    }
    String outcome = result(advance, "failed:TIMEOUT");
    long advanceStarted = advanceTimes.get(0);
    long advanceReturned = advanceTimes.get(1);
    if (!outcome.equals("ok")) {
      hooks.advanceFailed(spec.name(), floor);
    }
    List<Call> loaderCalls = new ArrayList<>();
    for (Future<Call> f : loaders) {
      Call c = result(f, null);
      if (c != null) {
        loaderCalls.add(c);
      }
    }
    // A loader in flight when the advance started: its first refill (its server loads the sequence first)
    // was under way, or had not begun.
    long inFlight = loaderCalls.stream().filter(c -> advanceStarted != Long.MIN_VALUE
        && c.startNanos() < advanceStarted && c.firstNanos() > advanceStarted).count();
    long frozen = 0;
    for (int i = 0; i < pausedAt.length(); i++) {
      if (pausedAt.get(i) != 0) {
        frozen++;
      }
    }

    // Runtimes loaded after the advance returned OK: on the servers that had not loaded it, then on every
    // server once each has unloaded it (idle).
    long[] others = {0, 0};
    long[] idle = {0, 0};
    if (outcome.equals("ok")) {
      int[] incarnations = new int[servers.size()];
      for (int slot = 0; slot < servers.size(); slot++) {
        incarnations[slot] = servers.get(slot).incarnation();
      }
      fresh.add(new Fresh(spec.name(), incarnations));
      for (Call c : callEveryServer(spec.name())) {
        if (!plan.loaders().contains(c.slot())) {
          others[0]++;
          others[1] += c.ok() ? 1 : 0;
        }
      }
      if (!unloadIdleAfter.isZero()) {
        // The sweep (every second at a few seconds' idle time) marks a runtime idle, and unloads it once it
        // stayed so for the idle time: at most the idle time plus two sweeps after its last call; one more.
        long wait = Math.min(30_000, unloadIdleAfter.toMillis() + 3_000);
        if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(wait) < episodeDeadline) {
          Thread.sleep(wait);
          for (Call c : callEveryServer(spec.name())) {
            idle[0]++;
            idle[1] += c.ok() ? 1 : 0;
          }
        }
      }
    }
    StringBuilder pools = new StringBuilder();
    seen.forEach((dc, o) -> pools.append(' ').append(dc).append('=').append(o.state()));
    log.line("fresh", spec.name(), floor, outcome, created, advanceStarted, advanceReturned,
        "loaders=" + loaderCalls.size(), "in_flight=" + inFlight, "take_seen_ms=" + takeSeenMillis,
        "frozen=" + frozen, "frozen_ms=" + pauseMillis,
        pools.toString().trim(), "reads=" + seen.values().stream().mapToLong(o -> o.reads).sum(),
        "unread=" + seen.values().stream().mapToLong(o -> o.unread).sum(),
        "others=" + others[0] + "/" + others[1], "idle=" + idle[0] + "/" + idle[1]);
    return spec.name() + " floor=" + floor + " " + outcome + " advance-after-creation-ms="
        + (advanceStarted == Long.MIN_VALUE ? "-" : TimeUnit.NANOSECONDS.toMillis(advanceStarted - created))
        + " frozen=" + frozen + pools + (noWatch.isPresent() ? " pools-unread(" + noWatch.get() + ")" : "");
  }

  /**
   * What the reads of one datacenter's pool row showed during an episode, in the order they were made
   * ({@link #see}), and what that proves ({@link #state}).
   */
  static final class Observation {
    long reads;
    long unread;
    boolean exists;
    /** A row with the floor and nothing appended: the trim created it. */
    boolean trimCreated;
    /** After that, a block from at or below the floor in its record: a refill from before the advance. */
    boolean case1;
    /** A row without the floor that holds a block from at or below it: appended before the trim. */
    boolean appendFirst;
    /** A row with the floor, whatever else: the trim reached it. */
    boolean floorSeen;
    /** First seen with the floor and a block from below it already: the order cannot be told. */
    boolean late;

    void see(Optional<PoolWatch.PoolRow> read, long floor, long floorIndex) {
      if (read.isEmpty()) {
        unread++;
        return;
      }
      reads++;
      PoolWatch.PoolRow row = read.get();
      if (!row.exists()) {
        return;
      }
      boolean hasFloor = row.floor() != null && row.floor() >= floor;
      boolean below = row.appendedFrom(floorIndex);
      if (!exists && hasFloor && below) {
        late = true;
      }
      exists = true;
      floorSeen |= hasFloor;
      if (hasFloor && row.appended().isEmpty()) {
        trimCreated = true;
      } else if (trimCreated && hasFloor && below) {
        case1 = true;
      } else if (!hasFloor && below) {
        appendFirst = true;
      }
    }

    String state() {
      if (case1) {
        return "case1";
      }
      if (trimCreated) {
        return "trim-created";
      }
      if (appendFirst) {
        return "append-first";
      }
      if (late) {
        return "seen-late";
      }
      if (exists) {
        return floorSeen ? "floor" : "no-floor";
      }
      return reads == 0 ? "unread" : "absent";
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

  /** One call on every live server at once (1–5 IDs each), each within 10 s. */
  private List<Call> callEveryServer(String sequence) throws InterruptedException {
    List<Future<Call>> calls = new ArrayList<>();
    for (int slot = 0; slot < servers.size(); slot++) {
      if (servers.get(slot).alive()) {
        int s = slot;
        long count = 1 + (sequence.hashCode() & 0x7fffffff) % 5;
        calls.add(pool.submit(() -> call(s, sequence, count, 10)));
      }
    }
    List<Call> done = new ArrayList<>();
    for (Future<Call> f : calls) {
      Call c = result(f, null);
      if (c != null) {
        done.add(c);
      }
    }
    return done;
  }

  /** One Allocate of {@code count} IDs on server slot {@code slot}, recorded; its times and outcome. */
  private Call call(int slot, String sequence, long count, long seconds) {
    long start = clock.nanos();
    long first = Long.MIN_VALUE;
    String outcome = "OK";
    try {
      Iterator<IdRange> ranges = IdGenGrpc.newBlockingStub(recorded.get(slot))
          .withDeadlineAfter(seconds, TimeUnit.SECONDS)
          .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build());
      while (ranges.hasNext()) {
        ranges.next(); // recorded by the interceptor
        if (first == Long.MIN_VALUE) {
          first = clock.nanos();
        }
      }
    } catch (StatusRuntimeException e) {
      outcome = e.getStatus().getCode().name();
    }
    long end = clock.nanos();
    return new Call(slot, start, first == Long.MIN_VALUE ? end : first, end, outcome);
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
          Call c = call(slot, f.name(), 1 + proberRandom.nextInt(5), 5);
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
    channels.forEach(ManagedChannel::shutdown);
    for (ManagedChannel ch : channels) {
      ch.awaitTermination(15, TimeUnit.SECONDS);
    }
    recorder.awaitCallsClosed(5_000);
    channels.forEach(ManagedChannel::shutdownNow);
    recorder.close();
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
  private static <T> T result(Future<T> f, T fallback) throws InterruptedException {
    try {
      return f.get(90, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      f.cancel(true);
      return fallback;
    }
  }
}
