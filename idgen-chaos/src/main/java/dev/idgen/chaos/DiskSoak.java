package dev.idgen.chaos;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The embedded store's disk faults under load, for as long as asked: one server (the shaded jar, the server's
 * default store) with its data on a small ext4 file system of its own ({@link DiskImage}), callers allocating
 * from three sequences with small blocks (so that nearly every call needs a store write), and one fault after
 * another, drawn from the seed so that each kind comes as often as the others:
 * <ul>
 *   <li>{@code disk-full}: another file fills the file system while sequences are created (new rows need new
 *       pages); every failure of the store must say "disk full", and the server must write again by itself
 *       within {@link #RECOVERY_BOUND} of the space being freed, without a restart;
 *   <li>{@code disk-readonly}: the kernel turns the file system read-only (an ext4 error); every failure of
 *       the store must say "read-only"; the operator's repair (stop, {@code e2fsck}, mount, start) brings it
 *       back;
 *   <li>{@code damaged-file}: the server stopped, a copy of its file with every page past the first damaged,
 *       and a server started on the copy must refuse to start, naming the file; the original then serves;
 *   <li>{@code server-kill}: {@code kill -9} and a restart on the same file.
 * </ul>
 * Every ID a call received is kept; at the end no ID may have been handed out twice or outside its
 * sequence's bounds ({@link Overlaps}), and some full disk must have failed the store (else the run proved
 * nothing of it). The report says, per kind, what the calls saw and how long recovery took.
 *
 * <p>Threads: the callers (one thread each) record into concurrent queues and count into the current
 * {@link Episode} (a volatile reference); the calling thread injects the faults one at a time, then stops the
 * callers and checks. Not reusable: one {@link #run} per instance.
 */
final class DiskSoak {
  /** How long after space is freed, or a repair, the server must serve again. */
  static final Duration RECOVERY_BOUND = Duration.ofSeconds(60);
  private static final long CALL_DEADLINE_SECONDS = 5;
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(20);
  /** Sequences created while a disk is full, at most (each one a store write that may need a new page). */
  private static final int MAX_CREATES_WHILE_FULL = 20_000;
  /** How long a full disk is held at most while waiting for the store to fail for it. */
  private static final Duration FULL_HOLD_BOUND = Duration.ofSeconds(45);

  /** The fault kinds, each with what the descriptions of the calls it fails must say (null: none expected). */
  enum Kind {
    DISK_FULL("disk-full", "disk full"),
    READ_ONLY("disk-readonly", "read-only"),
    DAMAGED_FILE("damaged-file", null),
    SERVER_KILL("server-kill", null);

    final String label;
    final String phrase;

    Kind(String label, String phrase) {
      this.label = label;
      this.phrase = phrase;
    }

    /** The kind of a label ({@code disk-full}, ...), for the command line. */
    static Kind of(String label) {
      for (Kind k : values()) {
        if (k.label.equals(label)) {
          return k;
        }
      }
      throw new IllegalArgumentException("unknown disk fault '" + label + "'; expected one of "
          + Arrays.stream(values()).map(k -> k.label).toList());
    }
  }

  /** The run's sequences: small blocks, so that the callers drain a server's reserve within milliseconds. */
  record Seq(String name, long max, long nodeBlock, boolean strict) {}

  static final List<Seq> SEQUENCES = List.of(
      new Seq("disk-small", Long.MAX_VALUE, 5, false),
      new Seq("disk-medium", Long.MAX_VALUE, 50, false),
      new Seq("disk-strict", Long.MAX_VALUE, 5, true));

  /** {@code kinds}: the fault kinds injected, each once per round (every kind by default). */
  record Settings(Duration duration, long seed, Path out, Path serverJar, int callers, long rate, int diskMegabytes,
      Duration maxHold, Set<Kind> kinds) {
    Settings {
      kinds = kinds.isEmpty() ? EnumSet.allOf(Kind.class) : EnumSet.copyOf(kinds);
    }

    Settings(Duration duration, long seed, Path out, Path serverJar, int callers, long rate, int diskMegabytes,
        Duration maxHold) {
      this(duration, seed, out, serverJar, callers, rate, diskMegabytes, maxHold, EnumSet.allOf(Kind.class));
    }
  }

  /**
   * One fault as the soak saw it: how long it was held, the calls that failed during it (and how many of them
   * said what the kind must say), how long until the server served again, and whether it went as it must.
   */
  static final class Episode {
    final Kind kind;
    final AtomicLong failed = new AtomicLong();
    /** Failures the store caused (their descriptions name the embedded store), and those of them that said why. */
    final AtomicLong storeFailed = new AtomicLong();
    final AtomicLong saying = new AtomicLong();
    final AtomicLong ok = new AtomicLong();
    final ConcurrentLinkedQueue<String> samples = new ConcurrentLinkedQueue<>();
    double heldSeconds;
    double recoverySeconds = Double.NaN;
    String problem;

    /** {@code kind} null: the time between faults, whose calls are counted but not judged. */
    private Episode(Kind kind) {
      this.kind = kind;
    }

    static Episode of(Kind kind) {
      return new Episode(java.util.Objects.requireNonNull(kind));
    }

    static Episode quiet() {
      return new Episode(null);
    }

    void failure(String description) {
      failed.incrementAndGet();
      boolean store = description.contains(STORE_FAILURE);
      if (store) {
        storeFailed.incrementAndGet();
      }
      boolean says = kind != null && kind.phrase != null && description.contains(kind.phrase);
      if (says) {
        saying.incrementAndGet();
      } else if (store && kind != null && kind.phrase != null && unsaid == null) {
        unsaid = description;
      }
      if (samples.size() < 3 || (says && samples.stream().noneMatch(x -> x.contains(kind.phrase)))) {
        samples.add(description);
      }
    }

    /** A failure of the store during a fault with a known cause that did not say it (the first), or null. */
    volatile String unsaid;
  }

  /** The soak's outcome. */
  record Verdict(long ids, long calls, long failedCalls, Overlaps.Result check, List<Episode> episodes) {
    boolean ok() {
      return check.duplicates() == 0 && check.outOfBounds() == 0 && episodes.stream().allMatch(e -> e.problem == null)
          && (provoked(Kind.DISK_FULL) || episodes.stream().noneMatch(e -> e.kind == Kind.DISK_FULL));
    }

    /** Whether some episode of {@code kind} made the store fail for its cause (else the run proved nothing of it). */
    boolean provoked(Kind kind) {
      return episodes.stream().anyMatch(e -> e.kind == kind && e.saying.get() > 0);
    }
  }

  /** How every failure of the embedded store begins: {@code embedded store /path/idgen.db: ...}. */
  static final String STORE_FAILURE = "embedded store ";

  private final Settings settings;
  private final PrintStream out;
  private final long t0 = System.nanoTime();
  private final Map<String, ConcurrentLinkedQueue<long[]>> received = new ConcurrentHashMap<>();
  private final AtomicLong calls = new AtomicLong();
  private final AtomicLong failedCalls = new AtomicLong();
  /** The fault in progress, or a quiet episode between faults (whose failures are counted, not judged). */
  private volatile Episode current = Episode.quiet();
  private volatile boolean stop;

  DiskSoak(Settings settings, PrintStream out) {
    this.settings = settings;
    this.out = out;
  }

  Verdict run() throws Exception {
    Files.createDirectories(settings.out());
    Path servers = settings.out().resolve("servers");
    Files.createDirectories(servers);
    List<Episode> episodes = new ArrayList<>();
    try (DiskImage disk = DiskImage.create(settings.out().resolve("disk.img"), settings.out().resolve("mnt"),
        settings.diskMegabytes())) {
      Path data = disk.mountPoint().resolve("data");
      int port = freePort();
      ServerNode server = new ServerNode("embedded", "local", port, settings.serverJar(), servers,
          serverSettings(data));
      server.start();
      say("server on " + data + " (ext4 of " + settings.diskMegabytes() + " MB on a loop device), port " + port);
      ManagedChannel channel = Grpc.newChannelBuilderForAddress("127.0.0.1", port, InsecureChannelCredentials.create())
          .build();
      List<Thread> callers = new ArrayList<>();
      try {
        create(server);
        // The strict sequence has a caller of its own: after a restart its calls wait for the previous
        // process's owner lease to end (or fail at once, forwarded to an owner that is gone), and callers that
        // also drew it spent most of their time there, starving the other sequences' calls (runs showed
        // windows of "calls ok 0, failed 0", and read-only holds during which no call reached the store).
        List<Seq> shared = SEQUENCES.stream().filter(q -> !q.strict()).toList();
        List<Seq> strict = SEQUENCES.stream().filter(Seq::strict).toList();
        for (int i = 0; i <= settings.callers(); i++) {
          List<Seq> drawn = i < settings.callers() ? shared : strict;
          Thread t = new Thread(caller(channel, drawn, settings.seed() + i),
              i < settings.callers() ? "disk-caller-" + i : "disk-caller-strict");
          t.setDaemon(true);
          t.start();
          callers.add(t);
        }
        inject(disk, server, data, servers, episodes);
      } finally {
        stop = true;
        for (Thread t : callers) {
          t.join(TimeUnit.SECONDS.toMillis(CALL_DEADLINE_SECONDS * 3));
        }
        channel.shutdownNow();
        server.stop(STOP_TIMEOUT);
        server.close();
      }
    }
    Overlaps.Result check = Overlaps.check(received, SEQUENCES);
    long ids = received.values().stream().flatMap(ConcurrentLinkedQueue::stream).mapToLong(r -> r[1]).sum();
    return new Verdict(ids, calls.get(), failedCalls.get(), check, List.copyOf(episodes));
  }

  /**
   * Faults one after another until the run's time is up and the first round is done: each kind once per round,
   * in an order of the seed.
   */
  private void inject(DiskImage disk, ServerNode server, Path data, Path servers, List<Episode> episodes)
      throws Exception {
    Random random = new Random(settings.seed());
    long end = t0 + settings.duration().toNanos();
    List<Kind> round = new ArrayList<>();
    sleepQuietly(5_000); // a warm-up: the callers' first calls load the sequences
    // The first round is always finished, however short the run: every kind at least once.
    while (System.nanoTime() < end || episodes.size() < settings.kinds().size()) {
      if (round.isEmpty()) {
        round.addAll(settings.kinds());
        Collections.shuffle(round, random);
      }
      Episode e = Episode.of(round.remove(0));
      long holdMillis = 2_000 + (long) (random.nextDouble() * Math.max(0, settings.maxHold().toMillis() - 2_000));
      current = e;
      episodes.add(e);
      switch (e.kind) {
        case DISK_FULL -> diskFull(e, disk, server, holdMillis, episodes.size());
        case READ_ONLY -> readOnly(e, disk, server, holdMillis);
        case DAMAGED_FILE -> damagedFile(e, server, data, servers, episodes.size());
        case SERVER_KILL -> serverKill(e, server);
      }
      Episode quiet = Episode.quiet();
      current = quiet;
      if (e.unsaid != null && e.problem == null) {
        e.problem = "the store failed without saying \"" + e.kind.phrase + "\": " + e.unsaid;
      }
      say(String.format(Locale.ROOT, "%s: held %.1f s, calls ok %d, failed %d (by the store %d%s), recovered in %.1f s%s",
          e.kind.label, e.heldSeconds, e.ok.get(), e.failed.get(), e.storeFailed.get(),
          e.kind.phrase == null ? "" : ", saying \"" + e.kind.phrase + "\" " + e.saying.get(), e.recoverySeconds,
          e.problem == null ? "" : " — PROBLEM: " + e.problem));
      sleepQuietly(3_000 + random.nextInt(5_000));
      say("between faults: calls ok " + quiet.ok.get() + ", failed " + quiet.failed.get()
          + (quiet.samples.isEmpty() ? "" : ", e.g. " + quiet.samples.peek()));
    }
  }

  /**
   * Fills the file system, and while it is full creates sequences: a steady store rewrites the pages of its
   * write-ahead log and needs no new space (measured: a full disk alone failed no call), new rows need pages.
   * Recovered: a sequence created again (a store write) without a restart, within {@link #RECOVERY_BOUND}.
   */
  private void diskFull(Episode e, DiskImage disk, ServerNode server, long holdMillis, int n) throws Exception {
    Path ballast = disk.mountPoint().resolve("ballast");
    long t = System.nanoTime();
    long bytes = disk.fill(ballast);
    long holdEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(holdMillis);
    long holdBound = t + FULL_HOLD_BOUND.toNanos();
    // Held until the drawn time is up and the store has failed for the full disk: a store whose write-ahead log
    // is already as long as it gets rewrites it in place and fails only once a checkpoint cannot grow the file,
    // which on a slow machine can take longer than the drawn hold (a CI run ended its only disk-full episode
    // before that, and so proved nothing of it).
    for (int i = 0; i < MAX_CREATES_WHILE_FULL && System.nanoTime() < holdBound
        && (System.nanoTime() < holdEnd || e.saying.get() == 0); i++) {
      create(e, server, "disk-fill-" + n + "-" + i);
    }
    sleepQuietly(TimeUnit.NANOSECONDS.toMillis(holdEnd - System.nanoTime()));
    Files.delete(ballast);
    e.heldSeconds = seconds(t);
    long freed = System.nanoTime();
    for (int i = 0; !create(e, server, "disk-probe-" + n + "-" + i); i++) {
      if (System.nanoTime() - freed > RECOVERY_BOUND.toNanos()) {
        e.problem = "no sequence could be created within " + RECOVERY_BOUND.toSeconds() + " s of " + bytes / 1024
            + " KiB being freed";
        return;
      }
      sleepQuietly(100);
    }
    e.recoverySeconds = seconds(freed);
  }

  /** CreateSequence of {@code name}, a write of the store: whether it succeeded (a failure counts in {@code e}). */
  private boolean create(Episode e, ServerNode server, String name) {
    try {
      Fleet.admin(server, CALL_DEADLINE_SECONDS).createSequence(
          CreateSequenceRequest.newBuilder().setName(name).setNodeBlockSize(5).build());
      return true;
    } catch (StatusRuntimeException failed) {
      e.failure(failed.getStatus().getCode() + ": " + failed.getStatus().getDescription());
      return false;
    }
  }

  private void readOnly(Episode e, DiskImage disk, ServerNode server, long holdMillis) throws Exception {
    long t = System.nanoTime();
    disk.fail();
    sleepQuietly(holdMillis);
    e.heldSeconds = seconds(t);
    long repair = System.nanoTime();
    server.stop(STOP_TIMEOUT);
    disk.repair();
    startOrNote(e, server);
    if (!create(e, server, "disk-repaired-" + System.nanoTime())) {
      e.problem = "the repaired store could not create a sequence";
    }
    e.recoverySeconds = seconds(repair);
    if (e.storeFailed.get() == 0 && e.problem == null) {
      e.problem = "no call failed by the store while the file system was read-only";
    }
  }

  private void damagedFile(Episode e, ServerNode server, Path data, Path servers, int n) throws Exception {
    long t = System.nanoTime();
    server.stop(STOP_TIMEOUT);
    Path copy = settings.out().resolve("damaged-" + n);
    Files.createDirectories(copy);
    try (Stream<Path> files = Files.list(data)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        Files.copy(f, copy.resolve(f.getFileName()));
      }
    }
    Path file = copy.resolve("idgen.db");
    int pages = damagePages(file, new SplittableRandom(settings.seed() + n));
    ServerNode probe = new ServerNode("damaged-" + n, "local", freePort(), settings.serverJar(), servers,
        serverSettings(copy));
    try {
      probe.start();
      e.problem = "a server started on " + file + " with " + pages + " damaged pages, and reported SERVING";
    } catch (IOException refused) {
      String log = Files.readString(probe.log(), StandardCharsets.UTF_8);
      if (!log.contains(file.toString()) || !log.contains("damaged")) {
        e.problem = "the server refused " + file + " without naming the file and the damage; see " + probe.log();
      }
    } finally {
      probe.close();
    }
    e.heldSeconds = seconds(t);
    long restart = System.nanoTime();
    startOrNote(e, server);
    e.recoverySeconds = seconds(restart);
    deleteTree(copy);
  }

  private void serverKill(Episode e, ServerNode server) throws Exception {
    long t = System.nanoTime();
    server.kill();
    e.heldSeconds = seconds(t);
    startOrNote(e, server);
    e.recoverySeconds = seconds(t);
  }

  private void startOrNote(Episode e, ServerNode server) throws InterruptedException {
    try {
      server.start();
    } catch (IOException failed) {
      e.problem = "the server did not start again: " + failed.getMessage();
      throw new IllegalStateException(e.kind.label + ": " + e.problem, failed);
    }
  }

  /**
   * Overwrites the first 512 bytes of every page past the first (the page headers of SQLite's b-trees) with
   * random bytes: damage that {@code PRAGMA quick_check} must find. Returns how many pages it damaged.
   */
  static int damagePages(Path file, SplittableRandom random) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(16);
      int size = f.readUnsignedShort();
      int pageSize = size == 1 ? 65_536 : size;
      if (pageSize < 512) {
        throw new IOException(file + " is not a SQLite file (page size " + size + ")");
      }
      byte[] junk = new byte[512];
      int pages = 0;
      for (long at = pageSize; at < f.length(); at += pageSize) {
        random.nextBytes(junk);
        f.seek(at);
        f.write(junk);
        pages++;
      }
      return pages;
    }
  }

  /** Calls Allocate of {@code sequences}, one drawn at random for each call, at the settings' rate. */
  private Runnable caller(ManagedChannel channel, List<Seq> sequences, long seed) {
    return () -> {
      SplittableRandom random = new SplittableRandom(seed);
      // Waiting for the channel to be ready (within each call's deadline): after a restart the channel's
      // reconnect back-off would otherwise fail calls for seconds after the server serves again.
      IdGenGrpc.IdGenBlockingStub stub = IdGenGrpc.newBlockingStub(channel).withWaitForReady();
      long perCallNanos = TimeUnit.SECONDS.toNanos(1) / Math.max(1, settings.rate());
      long deadline = t0 + settings.duration().toNanos() + TimeUnit.MINUTES.toNanos(10); // a safety net
      while (!stop && System.nanoTime() < deadline) {
        long started = System.nanoTime();
        Seq seq = sequences.get(random.nextInt(sequences.size()));
        Episode episode = current;
        calls.incrementAndGet();
        try {
          Iterator<IdRange> ranges = stub.withDeadlineAfter(CALL_DEADLINE_SECONDS, TimeUnit.SECONDS).allocate(
              AllocateRequest.newBuilder().setSequence(seq.name()).setCount(1 + random.nextInt(10)).build());
          ConcurrentLinkedQueue<long[]> into = received.computeIfAbsent(seq.name(), k -> new ConcurrentLinkedQueue<>());
          while (ranges.hasNext()) {
            IdRange r = ranges.next();
            into.add(new long[] {r.getFirst(), r.getCount(), Math.max(1, r.getStride()),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)});
          }
          episode.ok.incrementAndGet();
        } catch (StatusRuntimeException failed) {
          failedCalls.incrementAndGet();
          episode.failure(failed.getStatus().getCode() + ": " + failed.getStatus().getDescription());
        }
        long rest = perCallNanos - (System.nanoTime() - started);
        if (rest > 0) {
          sleepQuietly(TimeUnit.NANOSECONDS.toMillis(rest));
        }
      }
    };
  }

  private void create(ServerNode server) {
    for (Seq s : SEQUENCES) {
      CreateSequenceRequest.Builder request = CreateSequenceRequest.newBuilder().setName(s.name()).setMax(s.max())
          .setNodeBlockSize(s.nodeBlock());
      if (s.strict()) {
        request.setOrdering(Ordering.ORDERING_STRICT);
      }
      Fleet.admin(server, 30).createSequence(request.build());
    }
  }

  private static List<String> serverSettings(Path data) throws IOException {
    return List.of(
        "idgen.store=embedded",
        "idgen.embedded.dir=" + data,
        "idgen.metrics.host=127.0.0.1",
        "idgen.metrics.port=" + freePort());
  }

  /** Writes the report: the verdict line, then one line per episode. */
  static void report(Verdict v, long seed, PrintStream out) {
    for (Episode e : v.episodes()) {
      out.printf(Locale.ROOT, "episode %s held_s=%.1f ok=%d failed=%d by_store=%d saying=%d recovery_s=%.1f%s%n",
          e.kind.label, e.heldSeconds, e.ok.get(), e.failed.get(), e.storeFailed.get(), e.saying.get(),
          e.recoverySeconds,
          e.problem == null ? "" : " problem=\"" + e.problem + "\"");
      for (String s : e.samples) {
        out.println("  e.g. " + s);
      }
    }
    for (Kind k : Kind.values()) {
      List<Episode> of = v.episodes().stream().filter(e -> e.kind == k).toList();
      out.printf(Locale.ROOT, "kind %s applied=%d failed_calls=%d by_store=%d saying=%d max_recovery_s=%.1f"
              + " problems=%d%n",
          k.label, of.size(), of.stream().mapToLong(e -> e.failed.get()).sum(),
          of.stream().mapToLong(e -> e.storeFailed.get()).sum(),
          of.stream().mapToLong(e -> e.saying.get()).sum(),
          of.stream().mapToDouble(e -> e.recoverySeconds).filter(d -> !Double.isNaN(d)).max().orElse(Double.NaN),
          of.stream().filter(e -> e.problem != null).count());
    }
    v.check().examples().forEach(e -> out.println("duplicate: " + e));
    out.printf(Locale.ROOT, "disk-soak: ids=%d calls=%d failed=%d duplicates=%d out_of_bounds=%d faults=%d problems=%d"
            + " disk_full_provoked=%s seed=%d verdict=%s%n", v.ids(), v.calls(), v.failedCalls(),
        v.check().duplicates(), v.check().outOfBounds(), v.episodes().size(),
        v.episodes().stream().filter(e -> e.problem != null).count(), v.provoked(Kind.DISK_FULL), seed,
        v.ok() ? "ok" : "FAILED");
  }

  private void say(String line) {
    out.printf(Locale.ROOT, "[disk-soak %6.1fs] %s%n", seconds(t0), line);
  }

  private static double seconds(long sinceNanos) {
    return (System.nanoTime() - sinceNanos) / 1e9;
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(Math.max(0, millis)); // pacing a soak: the time itself is what is waited for
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
