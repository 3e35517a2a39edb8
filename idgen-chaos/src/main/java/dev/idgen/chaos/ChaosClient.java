package dev.idgen.chaos;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdGenClientBuilder;
import dev.idgen.client.IdGenClientException;
import dev.idgen.client.IdSource;
import dev.idgen.client.IdSourceStats;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client of a chaos run, on its own thread, with its own channels to every server slot and its own
 * record file: either a client stub ({@link IdGenClient}, one {@link IdSource} per sequence, callers taking
 * batches of IDs at a bounded rate) or a raw {@code Allocate} caller (random counts on random servers).
 * Every range it receives is recorded by a {@link RecordingInterceptor} on its channels; a stub also records
 * each batch it hands out, with the time it was asked for ({@link Recorder#served}).
 *
 * <p>The stub is the real {@link IdGenClient}: it honours the ranges' {@code valid_for} (unused IDs of a lease
 * are dropped that long after the lease was requested), which is what lets an {@code AdvanceSequence} that
 * returned OK promise that no stub hands out an ID at or below its floor afterwards; the checker holds every
 * batch to that.
 *
 * <p>{@link #kill()} models the client process dying mid-stream: its channels are shut down at once, which
 * cuts its open calls (ranges in flight are never read) and strands the leases it held. The loop is bounded
 * by the run's deadline and by an ID budget, and ends by itself.
 *
 * <p>A stub's caller mixes the ways an application takes IDs: {@code next(n)}, {@code fill}, and runs of
 * {@code tryNext()} that fall back to {@code next()} when the source holds nothing (counted: {@link #tryStats()}),
 * so that the stub's non-blocking path runs under the faults too. Each is recorded as one batch, asked for
 * before its first ID was taken.
 *
 * <p>A strict client ({@link Kind#STRICT}) calls {@code Allocate} itself on the strict sequences, from
 * {@value #STRICT_CALLERS} threads at once, each call on a random server (so most are forwarded to the
 * sequence's owner): 1 ID in most calls, else small batches of up to {@value #STRICT_MAX_COUNT}; at most
 * {@code rate} calls a second in all. Its interceptors record each call whole (start, end, outcome, ranges:
 * {@link Recorder#call}) for the ordering check, besides its ranges and failures as for any client. One more
 * thread takes IDs of the strict sequences through a client stub, with the same mix as a stub's caller, and
 * builds a new stub every {@value #STRICT_STUB_LIFE_SECONDS} s: a source learns the ordering from the first
 * range it gets, and would cache ranges a server stamped per-server (the checker holds its batches to the
 * strict order, as calls asked for and handed out at their recorded times).
 */
final class ChaosClient {
  /** What a client does: a client stub, a raw Allocate caller, or a strict sequences' caller. */
  enum Kind {
    STUB, RAW, STRICT;

    /** Its word in run.txt's {@code client} lines. */
    String word() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** A strict client's concurrent callers of raw Allocate (threads, each with its calls in sequence). */
  static final int STRICT_CALLERS = 4;
  /** How long a strict client's stub lives before the thread builds a new one (new sources). */
  static final int STRICT_STUB_LIFE_SECONDS = 5;
  /** The largest count a strict client asks for. */
  static final int STRICT_MAX_COUNT = 16;
  /** A strict call's deadline: short, so that calls to an owner cut off end soon and are retried. */
  private static final long STRICT_DEADLINE_MILLIS = 3_000;
  private static final long MAX_STRICT_CALLS_PER_CALLER = 100_000_000;
  /** The largest count a raw caller asks for: spans several blocks, so some calls stream several ranges. */
  static final long RAW_MAX_COUNT = 5_000;
  /** The stub's largest lease. */
  static final long STUB_MAX_LEASE = 5_000;
  /** The stub callers' largest batch ({@code next(n)}). */
  static final int STUB_MAX_BATCH = 64;
  /**
   * The largest call scale: IDs per call and per batch grow with it, not the calls, so that a long run on
   * 2 cores reaches 100 M IDs (the cost is per call and per recorded range, not per ID); 100 keeps a raw
   * call within the server's 1,000,000 IDs per call.
   */
  static final int MAX_CALL_SCALE = 100;
  private static final long MAX_IDS_PER_CLIENT = 200_000_000;

  private final int id;
  private final Kind kind;
  private final List<String> sequences;
  private final Recorder recorder;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<Channel> recorded = new ArrayList<>();
  private final Random random;
  private final long deadlineNanos;
  private final long rate;
  /** IDs per raw call, per stub batch and per lease, times the defaults. */
  private final int scale;
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean stopped;
  private volatile IdGenClient client;
  /** The stub's sources, once built (empty for a raw caller). */
  private volatile List<IdSource> stubSources = List.of();
  /** A strict client's current stub on the strict sequences (null before the first, or for other kinds). */
  private volatile IdGenClient strictStub;
  /** {@code tryNext()} calls, and those that found the source empty (then {@code next()} took the ID). */
  private final AtomicLong tries = new AtomicLong();
  private final AtomicLong emptyTries = new AtomicLong();

  /**
   * A client of {@code kind}: {@code rate} is IDs a second for a stub or a raw caller, calls a second for a
   * strict client; {@code sequences} the sequences it allocates on.
   */
  ChaosClient(int id, Kind kind, List<String> targets, List<String> sequences, Path dir, RunClock clock,
      long seed, long deadlineNanos, long rate, int scale) {
    this.id = id;
    this.kind = kind;
    this.sequences = List.copyOf(sequences);
    this.recorder = new Recorder(dir.resolve("client-" + id + ".bin"), clock);
    this.random = new Random(seed);
    this.deadlineNanos = deadlineNanos;
    this.rate = rate;
    this.scale = scale;
    for (int slot = 0; slot < targets.size(); slot++) {
      ManagedChannel ch = Grpc.newChannelBuilder(targets.get(slot), InsecureChannelCredentials.create()).build();
      channels.add(ch);
      recorded.add(ClientInterceptors.intercept(ch, new RecordingInterceptor(recorder, slot, kind == Kind.STRICT)));
    }
    int callers = kind == Kind.STRICT ? STRICT_CALLERS : 1;
    for (int i = 0; i < callers; i++) {
      Random own = i == 0 ? random : new Random(seed * 7 + i);
      Thread t = new Thread(() -> run(own), "chaos-" + kind.word() + "-" + id + (callers > 1 ? "-" + i : ""));
      t.setDaemon(true);
      threads.add(t);
    }
    if (kind == Kind.STRICT) {
      Random own = new Random(seed * 7 + callers);
      Thread t = new Thread(() -> runGuarded(() -> runStrictStub(own)), "chaos-strict-stub-" + id);
      t.setDaemon(true);
      threads.add(t);
    }
  }

  /** {@code tryNext()} calls so far and how many found the source empty: {@code {tries, empty}}. */
  long[] tryStats() {
    return new long[] {tries.get(), emptyTries.get()};
  }

  /** The largest count a raw caller asks for at call scale {@code scale}. */
  static long rawMaxCount(int scale) {
    return RAW_MAX_COUNT * scale;
  }

  /** The stub's largest lease at call scale {@code scale}. */
  static long stubMaxLease(int scale) {
    return STUB_MAX_LEASE * scale;
  }

  /**
   * The call scale for {@code sequence}: 1 for {@link RunSequences#SMALL}, whose blocks stay small whatever the
   * scale (a call of 100,000 IDs there would take 500 node blocks, one compare-and-set each, and time out).
   */
  private int scaleOf(String sequence) {
    return sequence.equals(RunSequences.SMALL) ? 1 : scale;
  }

  int id() {
    return id;
  }

  boolean isStub() {
    return kind == Kind.STUB;
  }

  Kind kind() {
    return kind;
  }

  void start() {
    threads.forEach(Thread::start);
  }

  /** The stub's counters per sequence (served, expired by {@code valid_for}, …); empty for a raw caller. */
  List<IdSourceStats> stubStats() {
    return stubSources.stream().map(IdSource::stats).toList();
  }

  /** After a server restart: reconnect now rather than after gRPC's reconnect back-off. */
  void resetConnectBackoff() {
    channels.forEach(ManagedChannel::resetConnectBackoff);
  }

  /** The client process dies: calls cut mid-stream, leases stranded. */
  void kill() throws InterruptedException {
    stopped = true;
    channels.forEach(ManagedChannel::shutdownNow);
    joinThreads();
    closeStubs(); // their executor threads; their calls were already cut above
    finish();
  }

  private void closeStubs() {
    IdGenClient c = client;
    if (c != null) {
      c.close();
    }
    IdGenClient s = strictStub;
    if (s != null) {
      s.close();
    }
  }

  /**
   * The end of the run: callers stop; the channels are shut down gracefully, so that the calls in flight
   * (a stub's lease request, a raw caller's last call) finish and are recorded while new ones are refused
   * at once, and nothing is cut mid-stream (a call cut after the server took its IDs abandons them: a
   * gap the checker could only bound); then the stub is closed (its leases are abandoned, as on any exit:
   * they were received, and count as such).
   */
  void stop() throws InterruptedException {
    stopped = true;
    joinThreads();
    channels.forEach(ManagedChannel::shutdown);
    for (ManagedChannel ch : channels) {
      ch.awaitTermination(15, TimeUnit.SECONDS);
    }
    int open = recorder.awaitCallsClosed(TimeUnit.SECONDS.toMillis(5));
    if (open > 0) {
      System.err.println("chaos: client " + id + ": " + open + " calls still open at the end; cancelling them");
    }
    closeStubs();
    channels.forEach(ManagedChannel::shutdownNow);
    finish();
  }

  /** Waits for the callers' threads, at most 15 s in all. */
  private void joinThreads() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    for (Thread t : threads) {
      long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (left > 0) {
        t.join(left);
      }
    }
  }

  private void finish() throws InterruptedException {
    joinThreads();
    for (ManagedChannel ch : channels) {
      ch.awaitTermination(5, TimeUnit.SECONDS);
    }
    recorder.close();
  }

  private boolean running() {
    return !stopped && System.nanoTime() < deadlineNanos;
  }

  private void run(Random random) {
    runGuarded(() -> {
      switch (kind) {
        case STUB -> runStub();
        case RAW -> runRaw();
        case STRICT -> runStrict(random);
      }
    });
  }

  /** A caller's loop that may be interrupted. */
  private interface Loop {
    void run() throws InterruptedException;
  }

  private void runGuarded(Loop loop) {
    try {
      loop.run();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      if (!stopped) {
        System.err.println("chaos: client " + id + " ended: " + e);
      }
    }
  }

  private void runStub() throws InterruptedException {
    IdGenClientBuilder builder = IdGenClient.builder()
        .name("chaos-" + id)
        .callDeadline(Duration.ofSeconds(2))
        .waitDeadline(Duration.ofSeconds(3))
        .maxLeaseSize(stubMaxLease(scale))
        .retryBackoff(Duration.ofMillis(20), Duration.ofMillis(500));
    recorded.forEach(builder::channel);
    client = builder.build();
    List<IdSource> sources = new ArrayList<>();
    for (String s : sequences) {
      sources.add(client.sequence(s));
    }
    stubSources = List.copyOf(sources);
    Set<String> exhausted = new HashSet<>();
    long served = 0;
    long startNanos = System.nanoTime();
    while (running() && served < MAX_IDS_PER_CLIENT) {
      IdSource source = sources.get(random.nextInt(sources.size()));
      if (exhausted.contains(source.sequence())) {
        if (exhausted.size() == sources.size()) {
          return;
        }
        continue;
      }
      int batch = 1 + random.nextInt(STUB_MAX_BATCH * scaleOf(source.sequence()));
      try {
        served += take(source, batch, random.nextInt(3), recorder, tries, emptyTries);
      } catch (IdGenClientException e) {
        switch (e.reason()) {
          case EXHAUSTED -> exhausted.add(source.sequence());
          case CLOSED -> {
            return;
          }
          default -> Thread.sleep(20); // TIMED_OUT or REJECTED while servers or Cassandra are down
        }
      }
      pace(served, startNanos);
    }
  }

  /**
   * Takes {@code count} IDs from {@code source} one of three ways ({@code how}): {@code next(count)},
   * {@code fill}, or {@code tryNext()} for each ID, with {@code next()} when it finds nothing; records them as
   * one batch, asked for now, and returns how many. On a failure part way through a run of {@code tryNext}, the
   * IDs already taken are recorded (they were handed out) before the exception goes on. {@code tries} and
   * {@code empty} count the {@code tryNext()} calls and those that found nothing.
   */
  static int take(IdSource source, int count, int how, Recorder recorder, AtomicLong tries, AtomicLong empty) {
    long asked = recorder.clock().nanos();
    switch (how) {
      case 0 -> {
        long[] ids = source.next(count);
        recorder.served(source.sequence(), asked, ids, ids.length);
        return ids.length;
      }
      case 1 -> {
        long[] ids = new long[count];
        source.fill(ids, 0, count);
        recorder.served(source.sequence(), asked, ids, count);
        return count;
      }
      default -> {
        long[] ids = new long[count];
        int n = 0;
        try {
          while (n < count) {
            tries.incrementAndGet();
            OptionalLong id = source.tryNext();
            long taken;
            if (id.isPresent()) {
              taken = id.getAsLong();
            } else {
              empty.incrementAndGet();
              taken = source.next();
            }
            // Counted once taken: in `ids[n++] = source.next()` the index moves before next() can throw.
            ids[n++] = taken;
          }
        } finally {
          if (n > 0) {
            recorder.served(source.sequence(), asked, ids, n);
          }
        }
        return n;
      }
    }
  }

  /**
   * A strict client's stub caller: takes IDs of the strict sequences through a client stub, a few at a time
   * ({@link #take}, each way in turn drawn), paced as one strict caller, and replaces the stub with a new one
   * every {@value #STRICT_STUB_LIFE_SECONDS} s (closing the old one abandons nothing: a strict source holds no
   * ID; a request of it in flight is cancelled, as at any close).
   */
  private void runStrictStub(Random random) throws InterruptedException {
    long perCaller = Math.max(1, rate / STRICT_CALLERS);
    long startNanos = System.nanoTime();
    long batches = 0;
    Set<String> exhausted = new HashSet<>();
    while (running() && batches < MAX_STRICT_CALLS_PER_CALLER && exhausted.size() < sequences.size()) {
      IdGenClientBuilder builder = IdGenClient.builder()
          .name("chaos-strict-stub-" + id)
          .callDeadline(Duration.ofMillis(STRICT_DEADLINE_MILLIS))
          .waitDeadline(Duration.ofMillis(STRICT_DEADLINE_MILLIS))
          // A source's first request (made when it is created, its IDs dropped once the range says strict)
          // no larger than a strict call: what a client kill may cut stays within clientBound.
          .minLeaseSize(1)
          .maxLeaseSize(STRICT_MAX_COUNT)
          .retryBackoff(Duration.ofMillis(20), Duration.ofMillis(500));
      recorded.forEach(builder::channel);
      IdGenClient stub = builder.build();
      strictStub = stub;
      try {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(STRICT_STUB_LIFE_SECONDS);
        while (running() && System.nanoTime() < until && exhausted.size() < sequences.size()) {
          String sequence = sequences.get(random.nextInt(sequences.size()));
          if (exhausted.contains(sequence)) {
            continue;
          }
          int count = random.nextInt(10) < 7 ? 1 : 2 + random.nextInt(STRICT_MAX_COUNT - 1);
          try {
            take(stub.sequence(sequence), count, random.nextInt(3), recorder, tries, emptyTries);
          } catch (IdGenClientException e) {
            switch (e.reason()) {
              case EXHAUSTED -> exhausted.add(sequence);
              case CLOSED -> {
                return;
              }
              default -> Thread.sleep(20 + random.nextInt(30));
            }
          }
          batches++;
          pace(batches, startNanos, perCaller);
        }
      } finally {
        stub.close();
      }
    }
  }

  private void runRaw() throws InterruptedException {
    Set<String> exhausted = new HashSet<>();
    long received = 0;
    long startNanos = System.nanoTime();
    while (running() && received < MAX_IDS_PER_CLIENT) {
      String sequence = sequences.get(random.nextInt(sequences.size()));
      if (exhausted.contains(sequence)) {
        if (exhausted.size() == sequences.size()) {
          return;
        }
        continue;
      }
      int k = scaleOf(sequence);
      long count = random.nextInt(10) == 0 ? 1 + random.nextInt((int) rawMaxCount(k)) : 1 + random.nextInt(200 * k);
      Channel channel = recorded.get(random.nextInt(recorded.size()));
      try {
        Iterator<IdRange> ranges = IdGenGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
            .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build());
        while (ranges.hasNext()) {
          received += ranges.next().getCount(); // recorded by the interceptor
        }
      } catch (StatusRuntimeException e) {
        switch (e.getStatus().getCode()) {
          case OUT_OF_RANGE -> exhausted.add(sequence); // SEQUENCE_EXHAUSTED (RESOURCE_EXHAUSTED before 0.2)
          default -> Thread.sleep(20 + random.nextInt(30));
        }
      }
      pace(received, startNanos);
    }
  }

  /**
   * One strict caller: calls on random servers, one after the other, paced to its share of the client's rate
   * (calls a second). Every call is recorded by the interceptors; a failure (OWNER_UNAVAILABLE during a
   * take-over, a deadline while the owner is cut off) is followed by a short pause, not by the server's
   * RetryInfo delay, so that the record shows when the sequence became available again.
   */
  private void runStrict(Random random) throws InterruptedException {
    long calls = 0;
    long perCaller = Math.max(1, rate / STRICT_CALLERS);
    long startNanos = System.nanoTime();
    Set<String> exhausted = new HashSet<>();
    while (running() && calls < MAX_STRICT_CALLS_PER_CALLER && exhausted.size() < sequences.size()) {
      String sequence = sequences.get(random.nextInt(sequences.size()));
      if (exhausted.contains(sequence)) {
        continue;
      }
      long count = random.nextInt(10) < 7 ? 1 : 2 + random.nextInt(STRICT_MAX_COUNT - 1);
      Channel channel = recorded.get(random.nextInt(recorded.size()));
      try {
        Iterator<IdRange> ranges = IdGenGrpc.newBlockingStub(channel)
            .withDeadlineAfter(STRICT_DEADLINE_MILLIS, TimeUnit.MILLISECONDS)
            .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build());
        while (ranges.hasNext()) {
          ranges.next(); // recorded by the interceptor
        }
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() == io.grpc.Status.Code.OUT_OF_RANGE) {
          exhausted.add(sequence);
        } else {
          Thread.sleep(20 + random.nextInt(30));
        }
      }
      calls++;
      pace(calls, startNanos, perCaller);
    }
  }

  /** Keeps the client at or below its rate (IDs per second), so a run's record stays a manageable size. */
  private void pace(long ids, long startNanos) throws InterruptedException {
    pace(ids, startNanos, rate);
  }

  /** Keeps {@code done} (IDs or calls) at or below {@code perSecond} since {@code startNanos}. */
  private static void pace(long done, long startNanos, long perSecond) throws InterruptedException {
    long dueNanos = startNanos + done * 1_000_000_000L / Math.max(1, perSecond);
    long ahead = dueNanos - System.nanoTime();
    if (ahead > 0) {
      TimeUnit.NANOSECONDS.sleep(Math.min(ahead, TimeUnit.SECONDS.toNanos(1)));
    }
  }

  @Override
  public String toString() {
    return kind.word() + "-client-" + id;
  }
}
