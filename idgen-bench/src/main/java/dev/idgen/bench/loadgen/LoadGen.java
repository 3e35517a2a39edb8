package dev.idgen.bench.loadgen;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
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
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
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

  private LoadReport runAllocate(List<ManagedChannel> chans) throws Exception {
    Caller.Phase phase = new Caller.Phase();
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
    Caller.Phase phase = new Caller.Phase();
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
            while (phase.value != Caller.DONE) {
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
  private LoadReport run(Caller.Phase phase, List<Caller> callers, IdSource source) throws Exception {
    String loadBefore = ProcessStats.loadAverage();
    for (Caller c : callers) {
      c.start();
    }
    Thread.sleep(warmup.toMillis());
    Scrape before = scrape();
    IdSourceStats statsBefore = source == null ? null : source.stats();
    long ownCpu0 = ProcessStats.ownCpuNanos();
    long serverCpu0 = serverPid == null ? 0 : ProcessStats.cpuNanos(serverPid);
    phase.value = Caller.MEASURE;
    long t0 = System.nanoTime();
    long end = t0 + duration.toNanos();
    long rssMax = 0;
    while (true) {
      long left = end - System.nanoTime();
      if (left <= 0) {
        break;
      }
      if (serverPid != null) {
        rssMax = Math.max(rssMax, ProcessStats.rssKb(serverPid));
      }
      TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.SECONDS.toNanos(1)));
    }
    phase.value = Caller.DONE;
    double seconds = (System.nanoTime() - t0) / 1e9;
    double ownCpuSeconds = (ProcessStats.ownCpuNanos() - ownCpu0) / 1e9;
    Double serverCpuSeconds = serverPid == null ? null : (ProcessStats.cpuNanos(serverPid) - serverCpu0) / 1e9;
    if (serverPid != null) {
      rssMax = Math.max(rssMax, ProcessStats.rssKb(serverPid));
    }
    Scrape after = scrape();
    IdSourceStats statsAfter = source == null ? null : source.stats();
    for (Caller c : callers) {
      if (!c.await(TimeUnit.SECONDS.toMillis(30) + deadline.toMillis())) {
        throw new IllegalStateException("a caller did not stop within 30 s after its last call's deadline");
      }
    }
    String loadAfter = ProcessStats.loadAverage();

    Histogram latency = new Histogram(Caller.MAX_TRACKED_NANOS, 3);
    Map<String, Long> errors = new TreeMap<>();
    long calls = 0;
    long ids = 0;
    for (Caller c : callers) {
      latency.add(c.latency);
      c.errors.forEach((k, v) -> errors.merge(k, v, Long::sum));
      calls += c.calls;
      ids += c.ids;
    }

    StoreCounts store = storeCounts(before, after);
    Map<String, Object> clientStats = source == null ? null : clientStats(statsBefore, statsAfter);
    return new LoadReport(mode.name(), target, sequenceLabel(), concurrency, idsPerCall,
        warmup.toMillis() / 1000.0, seconds, calls, ids, latency, errors, store.cas(), store.reservations(),
        store.note(),
        clientStats, loadBefore, loadAfter, serverPid == null ? null : rssMax, ownCpuSeconds,
        serverCpuSeconds);
  }

  /** The store's compare-and-sets by tier and outcome, and its reservations, over the window; or why not. */
  private record StoreCounts(Map<String, Map<String, Long>> cas, Long reservations, String note) {}

  private StoreCounts storeCounts(Scrape before, Scrape after) {
    if (metricsUrl == null) {
      return new StoreCounts(null, null, "n/a");
    }
    if (before.error != null || after.error != null) {
      return new StoreCounts(null, null, "n/a: " + (before.error != null ? before.error : after.error));
    }
    Map<String, Map<String, Long>> cas = new TreeMap<>();
    for (var e : PrometheusText.delta(before.text, after.text, "idgen_store_cas_total").entrySet()) {
      String tier = e.getKey().label("tier").isEmpty() ? "all" : e.getKey().label("tier");
      String outcome = e.getKey().label("outcome").isEmpty() ? "total" : e.getKey().label("outcome");
      cas.computeIfAbsent(tier, t -> new TreeMap<>()).merge(outcome, Math.round(e.getValue()), Long::sum);
    }
    Long reservations = null;
    var res = PrometheusText.delta(before.text, after.text, "idgen_store_reservations_total");
    if (!res.isEmpty()) {
      reservations = Math.round(res.values().stream().mapToDouble(Double::doubleValue).sum());
    }
    String note = cas.isEmpty() && reservations == null
        ? "the endpoint has no idgen_store_cas_total nor idgen_store_reservations_total" : null;
    return new StoreCounts(cas, reservations, note);
  }

  /** What the client stub's own counters moved by over the window. */
  private static Map<String, Object> clientStats(IdSourceStats statsBefore, IdSourceStats statsAfter) {
    Map<String, Object> clientStats = new LinkedHashMap<>();
    clientStats.put("leases", statsAfter.leases() - statsBefore.leases());
    clientStats.put("waits", statsAfter.waits() - statsBefore.waits());
    clientStats.put("waitMillis", statsAfter.waitTime().minus(statsBefore.waitTime()).toMillis());
    clientStats.put("failedCalls", statsAfter.failedCalls() - statsBefore.failedCalls());
    clientStats.put("leaseSize", statsAfter.leaseSize());
    return clientStats;
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


}
