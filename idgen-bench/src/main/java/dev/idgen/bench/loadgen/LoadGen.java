package dev.idgen.bench.loadgen;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.cli.DurationConverter;
import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdGenClientBuilder;
import dev.idgen.client.IdGenClientException;
import dev.idgen.client.IdSource;
import dev.idgen.client.IdSourceStats;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code idgen-loadgen}: drives an idgen server with a fixed number of closed-loop callers for a warm-up
 * and then a measured window, and reports IDs/s, calls/s, latency percentiles (HdrHistogram), errors by
 * status and the store's compare-and-set counts over the window (from the server's Prometheus metrics).
 *
 * <p>Two modes: {@code allocate} makes raw {@code IdGen/Allocate} calls (each caller keeps one call in
 * flight, starting the next from the previous one's completion); {@code client} runs {@code IdSource.next()} loops on the client stub, which leases
 * ranges in the background.
 *
 * <p>Exit codes: 0 after a run (even one with errors: they are in the report), 1 if the run could not
 * start (server unreachable, sequence not usable), 2 for a usage error.
 */
@Command(
    name = "idgen-loadgen",
    mixinStandardHelpOptions = true,
    version = "idgen-loadgen 0.1.0",
    sortOptions = false,
    description = "Load generator for idgen: closed-loop callers, then a report of throughput, latency "
        + "percentiles, errors and store CAS counts over the measured window.")
public final class LoadGen implements Callable<Integer> {

  /** The phases every caller watches. */
  private static final int WARMUP = 0;
  private static final int MEASURE = 1;
  private static final int DONE = 2;

  /** After a failed call a caller pauses this long, so that a dead server is not hammered in a loop. */
  private static final long ERROR_PAUSE_MILLIS = 10;

  /** Histograms track latencies up to this, with 3 significant digits. */
  private static final long MAX_TRACKED_NANOS = TimeUnit.MINUTES.toNanos(5);

  enum Mode { allocate, client }

  @Option(names = "--target", required = true, paramLabel = "HOST:PORT",
      description = "The server, e.g. localhost:7070 (or any gRPC target such as dns:///idgen:7070).")
  String target;

  @Option(names = "--tls", description = "Connect with TLS (the JVM's trusted CAs); default: plaintext.")
  boolean tls;

  @Option(names = "--sequence", defaultValue = "loadgen",
      description = "The sequence to allocate from; created if missing. Default: ${DEFAULT-VALUE}.")
  String sequence;

  @Option(names = "--sequences", defaultValue = "1", paramLabel = "N",
      description = "allocate mode: spread the calls over N sequences named SEQUENCE-0 ... SEQUENCE-(N-1), "
          + "which must exist already (idgen-scaling create makes them); 1: the one sequence SEQUENCE. "
          + "Default: ${DEFAULT-VALUE}.")
  int sequences;

  @Option(names = "--distribution", defaultValue = "uniform",
      description = "How the calls pick among --sequences: uniform, or zipf (the k-th sequence in proportion "
          + "to 1/k^s, s = --zipf-exponent). Default: ${DEFAULT-VALUE}.")
  SequencePicker.Distribution distribution;

  @Option(names = "--zipf-exponent", defaultValue = "1.0", paramLabel = "S",
      description = "The exponent s of --distribution zipf. Default: ${DEFAULT-VALUE}.")
  double zipfExponent;

  @Option(names = "--stripes", defaultValue = "1",
      description = "Stripes of the sequence, if it is created. Default: ${DEFAULT-VALUE}.")
  int stripes;

  @Option(names = "--node-block-size", defaultValue = "100000000",
      description = "node_block_size of the sequence, if it is created (a cap: reserves are sized by time)."
          + " Default: ${DEFAULT-VALUE}, the server's default.")
  long nodeBlockSize;

  @Option(names = "--dc-block-size", defaultValue = "1000000000000",
      description = "dc_block_size of the sequence, if it is created (a cap). Default: ${DEFAULT-VALUE},"
          + " the server's default.")
  long dcBlockSize;

  @Option(names = "--mode", defaultValue = "allocate",
      description = "allocate: raw Allocate calls; client: IdSource.next() loops on the client stub. "
          + "Default: ${DEFAULT-VALUE}.")
  Mode mode;

  @Option(names = "--concurrency", defaultValue = "10",
      description = "Concurrent callers (threads), each waiting for its answer. Default: ${DEFAULT-VALUE}.")
  int concurrency;

  @Option(names = "--ids-per-call", defaultValue = "1",
      description = "IDs per Allocate call (allocate mode) or per next(n) (client mode; 1: next()). "
          + "Default: ${DEFAULT-VALUE}.")
  int idsPerCall;

  @Option(names = "--channels", defaultValue = "1",
      description = "gRPC channels (HTTP/2 connections) the callers share round-robin, allocate mode. "
          + "Default: ${DEFAULT-VALUE}.")
  int channels;

  @Option(names = "--duration", defaultValue = "15s", converter = DurationConverter.class,
      description = "The measured window. Default: ${DEFAULT-VALUE}.")
  Duration duration;

  @Option(names = "--warmup", defaultValue = "5s", converter = DurationConverter.class,
      description = "Load before the window, not measured. Default: ${DEFAULT-VALUE}.")
  Duration warmup;

  @Option(names = "--deadline", defaultValue = "5s", converter = DurationConverter.class,
      description = "Deadline of each Allocate call. Default: ${DEFAULT-VALUE}.")
  Duration deadline;

  @Option(names = "--metrics-url", paramLabel = "URL",
      description = "The server's Prometheus endpoint, e.g. http://localhost:9090/metrics: the report then "
          + "gives the change of idgen_store_cas_total and idgen_store_reservations_total over the window.")
  URI metricsUrl;

  @Option(names = "--server-pid", paramLabel = "PID",
      description = "A server process on this machine: the report gives its largest RSS over the window.")
  Long serverPid;

  @Option(names = "--rate", defaultValue = "0", paramLabel = "IDS_PER_SECOND",
      description = "client mode: pace the callers to this many IDs/s in all (shared equally), to show "
          + "whether callers wait at a given demand; 0: as fast as they can. Paced callers time one call in "
          + "16 (two clock reads per call would cap a thread near 20M IDs/s). Default: ${DEFAULT-VALUE}.")
  long rate;

  @Option(names = "--json", description = "Print the report as JSON instead of text.")
  boolean json;

  @Spec
  CommandSpec spec;

  public static void main(String[] args) {
    System.exit(new CommandLine(new LoadGen()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (concurrency < 1 || idsPerCall < 1 || channels < 1 || sequences < 1) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--concurrency, --ids-per-call, --channels and --sequences must be at least 1");
    }
    if (sequences > 1 && mode != Mode.allocate) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--sequences needs --mode allocate");
    }
    if (!(zipfExponent > 0)) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--zipf-exponent must be above 0");
    }
    List<ManagedChannel> chans = new ArrayList<>();
    for (int i = 0; i < channels; i++) {
      // Callbacks run on the event loop: the callers' work there is a few counter updates.
      chans.add(Grpc.newChannelBuilder(target, credentials()).directExecutor().build());
    }
    try {
      try {
        if (sequences == 1) {
          ensureSequence(chans.get(0), err);
        } else {
          checkSequencesExist(chans.get(0));
        }
      } catch (StatusRuntimeException e) {
        err.println("idgen-loadgen: cannot use sequence '" + sequence + "' on " + target + ": "
            + e.getStatus());
        err.flush();
        return 1;
      }
      LoadReport report = mode == Mode.allocate ? runAllocate(chans) : runClient();
      if (json) {
        report.printJson(out);
      } else {
        report.printText(out);
      }
      return 0;
    } finally {
      for (ManagedChannel c : chans) {
        c.shutdownNow();
      }
    }
  }

  private ChannelCredentials credentials() {
    return tls ? TlsChannelCredentials.create() : InsecureChannelCredentials.create();
  }

  /** The name of the i-th of {@code --sequences} (i from 0). */
  static String sequenceName(String prefix, int i) {
    return prefix + "-" + i;
  }

  /** --sequences N: the first and the last of the N exist (they are not created here). */
  private void checkSequencesExist(ManagedChannel channel) {
    SequenceAdminGrpc.SequenceAdminBlockingStub admin =
        SequenceAdminGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    for (int i : new int[] {0, sequences - 1}) {
      String name = sequenceName(sequence, i);
      try {
        admin.getSequence(GetSequenceRequest.newBuilder().setName(name).build());
      } catch (StatusRuntimeException e) {
        throw e.getStatus().getCode() == Status.Code.NOT_FOUND
            ? Status.NOT_FOUND.withDescription(name + " does not exist; create the " + sequences
                + " sequences first (idgen-scaling create)").asRuntimeException()
            : e;
      }
    }
  }

  /** What the report names: the sequence, or the range of sequences and how calls spread over them. */
  private String sequenceLabel() {
    if (sequences == 1) {
      return sequence;
    }
    return sequenceName(sequence, 0) + ".." + sequenceName(sequence, sequences - 1) + " ("
        + (distribution == SequencePicker.Distribution.zipf ? "zipf " + zipfExponent : "uniform") + ")";
  }

  /** Creates the sequence unless it exists; says so when an existing one has other settings. */
  private void ensureSequence(ManagedChannel channel, PrintWriter err) {
    SequenceAdminGrpc.SequenceAdminBlockingStub admin =
        SequenceAdminGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    Sequence seq;
    try {
      seq = admin.getSequence(GetSequenceRequest.newBuilder().setName(sequence).build());
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() != Status.Code.NOT_FOUND) {
        throw e;
      }
      try {
        seq = admin.createSequence(CreateSequenceRequest.newBuilder().setName(sequence)
            .setStripes(stripes).setNodeBlockSize(nodeBlockSize).setDcBlockSize(dcBlockSize).build());
        err.printf("created sequence '%s' (stripes %d, node_block_size %d, dc_block_size %d)%n",
            sequence, seq.getStripes(), seq.getNodeBlockSize(), seq.getDcBlockSize());
      } catch (StatusRuntimeException raced) {
        if (raced.getStatus().getCode() != Status.Code.ALREADY_EXISTS) {
          throw raced;
        }
        seq = admin.getSequence(GetSequenceRequest.newBuilder().setName(sequence).build());
      }
    }
    if (seq.getStripes() != stripes || seq.getNodeBlockSize() != nodeBlockSize) {
      err.printf("note: sequence '%s' exists with stripes %d, node_block_size %d (the flags asked for %d, %d)%n",
          sequence, seq.getStripes(), seq.getNodeBlockSize(), stripes, nodeBlockSize);
    }
    err.flush();
  }

  /**
   * A caller: one call at a time, with its own counters and histogram, which are read only after
   * {@link #await} returned.
   */
  private abstract static class Caller {
    final Histogram latency = new Histogram(MAX_TRACKED_NANOS, 3);
    final Map<String, Long> errors = new HashMap<>();
    final Phase phase;
    long calls;
    long ids;

    Caller(Phase phase) {
      this.phase = phase;
    }

    /** Starts calling until the phase is DONE. */
    abstract void start();

    /** Waits until the caller has stopped (its last call ended); false on timeout. */
    abstract boolean await(long millis) throws InterruptedException;

    void countError(String key) {
      if (phase.value == MEASURE) {
        errors.merge(key, 1L, Long::sum);
      }
    }

    void recordCall(long nanos, long n) {
      if (phase.value == MEASURE) {
        latency.recordValue(Math.min(nanos, MAX_TRACKED_NANOS));
        calls++;
        ids += n;
      }
    }

    /** A call counted but not timed (paced client mode samples its latency). */
    void recordUntimed(long n) {
      if (phase.value == MEASURE) {
        calls++;
        ids += n;
      }
    }
  }

  /** A caller on its own thread (client mode: next() blocks only when the source is empty). */
  private abstract static class ThreadCaller extends Caller {
    private final Thread thread;

    ThreadCaller(String name, Phase phase) {
      super(phase);
      thread = new Thread(this::loop, name);
      thread.setDaemon(true);
    }

    abstract void loop();

    void pauseAfterError() {
      try {
        Thread.sleep(ERROR_PAUSE_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    void start() {
      thread.start();
    }

    @Override
    boolean await(long millis) throws InterruptedException {
      thread.join(millis);
      return !thread.isAlive();
    }
  }

  /**
   * A caller of raw {@code Allocate} that makes its next call from the previous call's completion
   * callback, on the channel's event loop (the channel runs callbacks directly): no thread hand-off per
   * call, so that the load generator spends its CPU on gRPC, not on waking threads (see BENCHMARKS.md,
   * "Profile").
   */
  private static final class AsyncAllocateCaller extends Caller implements StreamObserver<IdRange> {
    private final IdGenGrpc.IdGenStub stub;
    private final AllocateRequest[] requests;
    private final SequencePicker picker;
    private final long deadlineNanos;
    private final ScheduledExecutorService retryTimer;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private long t0;
    private long received;

    AsyncAllocateCaller(Phase phase, IdGenGrpc.IdGenStub stub, AllocateRequest[] requests,
        SequencePicker picker, long deadlineNanos, ScheduledExecutorService retryTimer) {
      super(phase);
      this.stub = stub;
      this.requests = requests;
      this.picker = picker;
      this.deadlineNanos = deadlineNanos;
      this.retryTimer = retryTimer;
    }

    @Override
    void start() {
      if (phase.value == DONE) {
        stopped.countDown();
        return;
      }
      received = 0;
      t0 = System.nanoTime();
      stub.withDeadlineAfter(deadlineNanos, TimeUnit.NANOSECONDS).allocate(requests[picker.next()], this);
    }

    @Override
    public void onNext(IdRange range) {
      received += range.getCount();
    }

    @Override
    public void onError(Throwable t) {
      countError(Status.fromThrowable(t).getCode().name());
      retryTimer.schedule(this::start, ERROR_PAUSE_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    public void onCompleted() {
      recordCall(System.nanoTime() - t0, received);
      start();
    }

    @Override
    boolean await(long millis) throws InterruptedException {
      return stopped.await(millis, TimeUnit.MILLISECONDS);
    }
  }

  /** The current phase, shared by the callers. */
  private static final class Phase {
    volatile int value = WARMUP;
  }

  private LoadReport runAllocate(List<ManagedChannel> chans) throws Exception {
    Phase phase = new Phase();
    // One request per sequence, built once: the callers pick one per call.
    AllocateRequest[] requests = new AllocateRequest[sequences];
    for (int i = 0; i < sequences; i++) {
      requests[i] = AllocateRequest.newBuilder()
          .setSequence(sequences == 1 ? sequence : sequenceName(sequence, i)).setCount(idsPerCall).build();
    }
    SequencePicker picker = SequencePicker.of(distribution, sequences, zipfExponent);
    ScheduledExecutorService retryTimer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "loadgen-retry");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Caller> callers = new ArrayList<>();
      for (int i = 0; i < concurrency; i++) {
        callers.add(new AsyncAllocateCaller(phase, IdGenGrpc.newStub(chans.get(i % chans.size())), requests,
            picker, deadline.toNanos(), retryTimer));
      }
      return run(phase, callers, null);
    } finally {
      retryTimer.shutdownNow();
    }
  }

  private LoadReport runClient() throws Exception {
    Phase phase = new Phase();
    IdGenClientBuilder builder = IdGenClient.builder().target(target).name("loadgen");
    IdGenClient client = (tls ? builder.useTransportSecurity() : builder.usePlaintext())
        .callDeadline(deadline)
        .build();
    try {
      IdSource source = client.sequence(sequence);
      int n = idsPerCall;
      List<Caller> callers = new ArrayList<>();
      for (int i = 0; i < concurrency; i++) {
        callers.add(new ThreadCaller("loadgen-client-" + i, phase) {
          @Override
          void loop() {
            long[] batch = n > 1 ? new long[n] : null;
            double perThread = (double) rate / concurrency; // IDs/s; 0: unpaced
            long started = System.nanoTime();
            long done = 0;
            long count = 0;
            while (phase.value != DONE) {
              boolean timed = perThread == 0 || (count++ & 15) == 0;
              long t0 = timed ? System.nanoTime() : 0;
              try {
                if (batch == null) {
                  source.next();
                } else {
                  source.fill(batch, 0, n);
                }
                if (timed) {
                  recordCall(System.nanoTime() - t0, n);
                } else {
                  recordUntimed(n);
                }
                done += n;
                if (perThread > 0 && (count & 1023) == 0) { // ahead of the schedule: wait for it
                  long ahead = started + (long) (done * 1e9 / perThread) - System.nanoTime();
                  if (ahead > 0) {
                    LockSupport.parkNanos(ahead);
                  }
                }
              } catch (IdGenClientException e) {
                countError(e.reason() + e.status().map(s -> "/" + s.getCode()).orElse(""));
                pauseAfterError();
              }
            }
          }
        });
      }
      return run(phase, callers, source);
    } finally {
      client.close();
    }
  }

  /**
   * Starts the callers, waits out the warm-up, measures for the window (scraping metrics at both ends),
   * stops and joins them, and builds the report.
   */
  private LoadReport run(Phase phase, List<Caller> callers, IdSource source) throws Exception {
    String loadBefore = loadAverage();
    for (Caller c : callers) {
      c.start();
    }
    Thread.sleep(warmup.toMillis());
    Scrape before = scrape();
    IdSourceStats statsBefore = source == null ? null : source.stats();
    long ownCpu0 = ownCpuNanos();
    long serverCpu0 = serverPid == null ? 0 : cpuNanos(serverPid);
    phase.value = MEASURE;
    long t0 = System.nanoTime();
    long end = t0 + duration.toNanos();
    long rssMax = 0;
    while (true) {
      long left = end - System.nanoTime();
      if (left <= 0) {
        break;
      }
      if (serverPid != null) {
        rssMax = Math.max(rssMax, rssKb(serverPid));
      }
      TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.SECONDS.toNanos(1)));
    }
    phase.value = DONE;
    double seconds = (System.nanoTime() - t0) / 1e9;
    double ownCpuSeconds = (ownCpuNanos() - ownCpu0) / 1e9;
    Double serverCpuSeconds = serverPid == null ? null : (cpuNanos(serverPid) - serverCpu0) / 1e9;
    if (serverPid != null) {
      rssMax = Math.max(rssMax, rssKb(serverPid));
    }
    Scrape after = scrape();
    IdSourceStats statsAfter = source == null ? null : source.stats();
    for (Caller c : callers) {
      if (!c.await(TimeUnit.SECONDS.toMillis(30) + deadline.toMillis())) {
        throw new IllegalStateException("a caller did not stop within 30 s after its last call's deadline");
      }
    }
    String loadAfter = loadAverage();

    Histogram latency = new Histogram(MAX_TRACKED_NANOS, 3);
    Map<String, Long> errors = new TreeMap<>();
    long calls = 0;
    long ids = 0;
    for (Caller c : callers) {
      latency.add(c.latency);
      c.errors.forEach((k, v) -> errors.merge(k, v, Long::sum));
      calls += c.calls;
      ids += c.ids;
    }

    Map<String, Map<String, Long>> cas = null;
    Long reservations = null;
    String note;
    if (metricsUrl == null) {
      note = "n/a";
    } else if (before.error != null || after.error != null) {
      note = "n/a: " + (before.error != null ? before.error : after.error);
    } else {
      note = null;
      cas = new TreeMap<>();
      for (var e : PrometheusText.delta(before.text, after.text, "idgen_store_cas_total").entrySet()) {
        String tier = e.getKey().label("tier").isEmpty() ? "all" : e.getKey().label("tier");
        String outcome = e.getKey().label("outcome").isEmpty() ? "total" : e.getKey().label("outcome");
        cas.computeIfAbsent(tier, t -> new TreeMap<>()).merge(outcome, Math.round(e.getValue()), Long::sum);
      }
      var res = PrometheusText.delta(before.text, after.text, "idgen_store_reservations_total");
      if (!res.isEmpty()) {
        reservations = Math.round(res.values().stream().mapToDouble(Double::doubleValue).sum());
      }
      if (cas.isEmpty() && reservations == null) {
        note = "the endpoint has no idgen_store_cas_total nor idgen_store_reservations_total";
      }
    }

    Map<String, Object> clientStats = null;
    if (source != null) {
      clientStats = new LinkedHashMap<>();
      clientStats.put("leases", statsAfter.leases() - statsBefore.leases());
      clientStats.put("waits", statsAfter.waits() - statsBefore.waits());
      clientStats.put("waitMillis", statsAfter.waitTime().minus(statsBefore.waitTime()).toMillis());
      clientStats.put("failedCalls", statsAfter.failedCalls() - statsBefore.failedCalls());
      clientStats.put("leaseSize", statsAfter.leaseSize());
    }
    return new LoadReport(mode.name(), target, sequenceLabel(), concurrency, idsPerCall,
        warmup.toMillis() / 1000.0, seconds, calls, ids, latency, errors, cas, reservations, note,
        clientStats, loadBefore, loadAfter, serverPid == null ? null : rssMax, ownCpuSeconds,
        serverCpuSeconds);
  }

  /** One scrape of the metrics endpoint: its samples, or why there are none. */
  private record Scrape(PrometheusText text, String error) {}

  private Scrape scrape() {
    if (metricsUrl == null) {
      return new Scrape(null, null);
    }
    try {
      HttpResponse<String> response = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(metricsUrl).timeout(Duration.ofSeconds(5)).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        return new Scrape(null, metricsUrl + " answered HTTP " + response.statusCode());
      }
      return new Scrape(PrometheusText.parse(response.body()), null);
    } catch (IOException | IllegalArgumentException e) {
      return new Scrape(null, metricsUrl + ": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Scrape(null, "interrupted");
    }
  }

  private static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).strip().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException e) {
      return "n/a";
    }
  }

  /** CPU time of this process (every thread, JIT and GC included). */
  private static long ownCpuNanos() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : 0;
  }

  /** User + system CPU time of a process from /proc (clock ticks of 10 ms), or 0 if it cannot be read. */
  private static long cpuNanos(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      // After "pid (comm) ": state is f[0], so utime (field 14) is f[11] and stime f[12].
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /** VmRSS of a process in KiB, or 0 if it cannot be read. */
  private static long rssKb(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException | NumberFormatException e) {
      // gone, or not Linux
    }
    return 0;
  }
}
