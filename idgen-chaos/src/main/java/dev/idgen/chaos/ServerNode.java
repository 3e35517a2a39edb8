package dev.idgen.chaos;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One server slot: the shaded server jar as a child JVM on a fixed port in one datacenter, on loopback or,
 * on a netns cluster, at the address of a network namespace of its own (so that it can be cut off from its
 * datacenter's Cassandra nodes while the clients, in the root namespace, still reach it). The port and the
 * address stay the slot's across {@code kill -9} and restart, so clients find the new process where the
 * old one was. Not thread-safe: one thread at a time starts, stops or kills it (the fault thread, the run's
 * start and end, or an owner kill's restart, which the fault thread waits for before it touches the server
 * again); what others read ({@link #alive()}, {@link #incarnation()}, {@link #counters()}) is safe to read
 * from any thread. The advance bursts' threads use only its name and its admin channel, which never change.
 */
final class ServerNode implements AutoCloseable {
  private static final long START_TIMEOUT_MILLIS = 120_000;
  /** System property: extra JVM options for every server (words), e.g. {@code -XX:TieredStopAtLevel=1}. */
  static final String JVM_OPTS_PROPERTY = "idgen.chaos.server-jvm-opts";
  /** How long one read of a server's metrics may take. */
  private static final long SCRAPE_SECONDS = 3;
  /** One client for every read of every server's metrics (its selector thread is shared, not one per read). */
  private static final HttpClient METRICS_CLIENT = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(SCRAPE_SECONDS)).build();
  /**
   * The servers' {@code idgen.shutdown.quiet-period} and {@code idgen.shutdown.timeout}: short, so that a
   * graceful stop ({@link #stop}) takes about a second under load (NOT_SERVING, 200 ms later new calls are
   * refused, open calls get up to 5 s, then the reserves go back to the store).
   */
  static final String SHUTDOWN_QUIET_PERIOD = "200ms";
  static final String SHUTDOWN_TIMEOUT = "5s";
  /** The line a server logs once its allocator closed (IdGenServer): what its reserves became. */
  private static final Pattern RETURNED = Pattern.compile(
      "reserves at shutdown: returned=(\\d+) IDs given back to the store, abandoned=(\\d+) IDs");

  private final String name;
  private final String datacenter;
  private final String host;
  /** What the java command is prefixed with: empty, or {@code ip netns exec idgen-srvN}. */
  private final List<String> launcher;
  private final int port;
  private final List<String> settings;
  private final Path jar;
  private final Path dir;
  private final ManagedChannel adminChannel;
  private volatile Process process;
  /** Extra environment variables of the next processes (a {@link FakeClock}'s), empty by default. */
  private volatile Map<String, String> environment = Map.of();
  private volatile int starts;
  /** The log file of the current (or last) incarnation. */
  private volatile Path log;

  /**
   * A slot on loopback (127.0.0.1). {@code settings} are the server's {@code -D} settings; its gRPC and
   * metrics endpoints listen on the slot's host.
   */
  ServerNode(String name, String datacenter, int port, Path jar, Path dir, List<String> settings) {
    this(name, datacenter, "127.0.0.1", List.of(), port, jar, dir, settings);
  }

  /** A slot at {@code host}, its JVM started with {@code launcher} before {@code java} (a namespace's exec). */
  ServerNode(String name, String datacenter, String host, List<String> launcher, int port, Path jar, Path dir,
      List<String> settings) {
    this.name = name;
    this.datacenter = datacenter;
    this.host = host;
    this.launcher = List.copyOf(launcher);
    this.port = port;
    this.jar = jar;
    this.dir = dir;
    this.settings = List.copyOf(settings);
    this.adminChannel = Grpc.newChannelBuilderForAddress(host, port, InsecureChannelCredentials.create())
        .build();
  }

  String name() {
    return name;
  }

  String datacenter() {
    return datacenter;
  }

  int port() {
    return port;
  }

  String target() {
    return host + ":" + port;
  }

  /** The address its endpoints listen on. */
  String host() {
    return host;
  }

  /** How many times it was started (its incarnation: 1 for the first process). */
  int incarnation() {
    return starts;
  }

  /**
   * What this incarnation's counters say, read from its metrics endpoint, or null if it cannot be read (the
   * process is gone or does not answer). Counters start at 0 with each process: a {@code kill -9} takes
   * them along, so the harness reads them just before each kill and at the end.
   */
  Counters counters() {
    int metricsPort = -1;
    for (String s : settings) {
      if (s.startsWith("idgen.metrics.port=")) {
        metricsPort = Integer.parseInt(s.substring("idgen.metrics.port=".length()));
      }
    }
    if (metricsPort <= 0 || !alive()) {
      return null;
    }
    // The request's own timeout ends the wait for the response's headers only, not for its body: the whole
    // exchange is bounded here, so that a server starved of CPU (or cut off) cannot stall the fault thread.
    CompletableFuture<HttpResponse<String>> exchange = METRICS_CLIENT.sendAsync(
        HttpRequest.newBuilder(URI.create("http://" + host + ":" + metricsPort + "/metrics"))
            .timeout(Duration.ofSeconds(SCRAPE_SECONDS)).build(), HttpResponse.BodyHandlers.ofString());
    try {
      HttpResponse<String> response = exchange.get(SCRAPE_SECONDS + 1, TimeUnit.SECONDS);
      if (response.statusCode() != 200) {
        return null;
      }
      return Counters.parse(response.body());
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      exchange.cancel(true);
      return null;
    } catch (InterruptedException e) {
      exchange.cancel(true);
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /**
   * One scrape's counters: {@code lost}, {@code idgen_ids_lost_total} for the reasons {@code abandoned} and
   * {@code dc_block} (not {@code advanced}: IDs below a floor are out of the checker's reckoning);
   * {@code cas}, {@code idgen_store_cas_total} by {@code tier:outcome} (e.g. {@code global:resolved_applied}),
   * and {@code idgen_store_regressions_total} as {@code tier:regressions};
   * and {@code attempts}, {@code idgen_store_cas_attempts_total} by tier (compare-and-sets sent).
   */
  record Counters(long lost, Map<String, Long> cas, Map<String, Long> attempts) {
    private static final Pattern LABEL = Pattern.compile("(\\w+)=\"([^\"]*)\"");

    static Counters parse(String exposition) {
      double lost = 0;
      Map<String, Long> cas = new TreeMap<>();
      Map<String, Long> attempts = new TreeMap<>();
      for (String line : exposition.split("\n")) {
        if (line.startsWith("idgen_ids_lost_total{")
            && (line.contains("reason=\"abandoned\"") || line.contains("reason=\"dc_block\""))) {
          lost += value(line);
        } else if (line.startsWith("idgen_store_cas_total{")) {
          Map<String, String> labels = labels(line);
          cas.merge(labels.getOrDefault("tier", "?") + ":" + labels.getOrDefault("outcome", "?"),
              (long) value(line), Long::sum);
        } else if (line.startsWith("idgen_store_regressions_total{")) {
          // Rows that forgot acknowledged writes (the store moved past them): 0 in a run whose Cassandra keeps
          // what it acknowledged; printed beside the outcomes as tier:regressions.
          cas.merge(labels(line).getOrDefault("tier", "?") + ":regressions", (long) value(line), Long::sum);
        } else if (line.startsWith("idgen_store_cas_attempts_total{")) {
          attempts.merge(labels(line).getOrDefault("tier", "?"), (long) value(line), Long::sum);
        }
      }
      return new Counters((long) lost, cas, attempts);
    }

    private static Map<String, String> labels(String line) {
      Map<String, String> labels = new HashMap<>();
      Matcher m = LABEL.matcher(line.substring(0, line.indexOf('}') + 1));
      while (m.find()) {
        labels.put(m.group(1), m.group(2));
      }
      return labels;
    }

    private static double value(String line) {
      return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
    }
  }

  /** A channel for the harness's own admin calls (not recorded: it never allocates). */
  ManagedChannel adminChannel() {
    return adminChannel;
  }

  boolean alive() {
    Process p = process;
    return p != null && p.isAlive();
  }

  /**
   * Environment variables for the processes started from now on (e.g. {@link FakeClock#environment()}, so
   * that the server's wall clock can be stepped); empty: the harness's own.
   */
  void environment(Map<String, String> env) {
    this.environment = Map.copyOf(env);
  }

  /** Starts the process and waits until its health service reports SERVING. */
  void start() throws IOException, InterruptedException {
    int next = starts + 1; // one writer at a time (see the class comment)
    starts = next;
    // `ip netns exec` execs java: the process (its pid, its signals) is the server's JVM either way.
    List<String> cmd = new ArrayList<>(launcher);
    cmd.addAll(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx256m",
        "-XX:+UseSerialGC"));
    String extra = System.getProperty(JVM_OPTS_PROPERTY, "").trim();
    if (!extra.isEmpty()) {
      cmd.addAll(List.of(extra.split("\\s+")));
    }
    cmd.addAll(List.of(
        "-Didgen.grpc.host=" + host,
        "-Didgen.grpc.port=" + port,
        // No HTTP/JSON: the harness calls gRPC only, and servers of one host must not contend for port 8080.
        "-Didgen.http.port=0",
        "-Didgen.shutdown.quiet-period=" + SHUTDOWN_QUIET_PERIOD,
        "-Didgen.shutdown.timeout=" + SHUTDOWN_TIMEOUT));
    for (String s : settings) {
      cmd.add("-D" + s);
    }
    cmd.addAll(List.of("-jar", jar.toString()));
    log = dir.resolve(name + "-" + starts + ".log");
    ProcessBuilder builder = new ProcessBuilder(cmd)
        .directory(dir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(log.toFile());
    builder.environment().putAll(environment);
    process = builder.start();
    HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(adminChannel);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
    while (true) {
      if (!process.isAlive()) {
        throw new IOException(name + " exited with " + process.exitValue() + " at start; see " + log);
      }
      try {
        ServingStatus status = health.withDeadlineAfter(1, TimeUnit.SECONDS)
            .check(HealthCheckRequest.getDefaultInstance()).getStatus();
        if (status == ServingStatus.SERVING) {
          return;
        }
      } catch (StatusRuntimeException notYet) {
        adminChannel.resetConnectBackoff();
      }
      if (System.nanoTime() > deadline) {
        kill();
        throw new IOException(name + " did not report SERVING within " + START_TIMEOUT_MILLIS + " ms; see " + log);
      }
      Thread.sleep(100); // polling a child process: there is no event to wait on
    }
  }

  /**
   * Freezes the process (SIGSTOP), as a long GC pause or a stalled VM would: its sockets stay open, it answers
   * nothing until {@link #resume}. Returns false if there is no live process to freeze.
   */
  boolean pause() throws IOException, InterruptedException {
    return signal("-STOP");
  }

  /** Thaws a process {@link #pause} froze (SIGCONT); harmless on one that runs. */
  boolean resume() throws IOException, InterruptedException {
    return signal("-CONT");
  }

  private boolean signal(String signal) throws IOException, InterruptedException {
    Process p = process;
    if (p == null || !p.isAlive()) {
      return false;
    }
    // `ip netns exec` execs java, so the pid is the server's JVM's on a netns cluster too.
    Process kill = new ProcessBuilder("kill", signal, Long.toString(p.pid())).redirectErrorStream(true).start();
    if (!kill.waitFor(10, TimeUnit.SECONDS)) {
      kill.destroyForcibly();
      throw new IOException("kill " + signal + " " + p.pid() + " did not return within 10 s");
    }
    return kill.exitValue() == 0;
  }

  /** SIGKILL ({@code kill -9}), and wait until the process is gone and its port is free. */
  void kill() throws InterruptedException {
    if (process != null) {
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
    }
  }

  /**
   * A graceful stop: SIGTERM ({@link Process#destroy()}), then waits up to {@code timeout} for the process
   * to exit on its own (its shutdown hook gives its reserves back to the store). Returns the exit code, or
   * -1 if it had not exited by then: it is then killed ({@code kill -9}), as an orchestrator would after
   * its grace period.
   */
  int stop(Duration timeout) throws InterruptedException {
    if (process == null || !process.isAlive()) {
      return process == null ? -1 : process.exitValue();
    }
    process.destroy();
    if (process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      return process.exitValue();
    }
    kill();
    return -1;
  }

  /**
   * What the last incarnation logged of its reserves when it stopped gracefully: {@code [returned,
   * abandoned]} (IDs given back to the store, IDs not given back), or null if its log has no such line
   * (it was killed, or did not get that far).
   */
  long[] returnedAtStop() {
    if (log == null) {
      return null;
    }
    try {
      Matcher m = RETURNED.matcher(Files.readString(log, StandardCharsets.UTF_8));
      long[] last = null;
      while (m.find()) {
        last = new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))};
      }
      return last;
    } catch (IOException e) {
      return null;
    }
  }

  /** The log file of the current (or last) incarnation, or null before the first start. */
  Path log() {
    return log;
  }

  @Override
  public void close() throws InterruptedException {
    kill();
    adminChannel.shutdownNow();
  }

  @Override
  public String toString() {
    return name + "(" + datacenter + ", " + (host.equals("127.0.0.1") ? "port " + port : target()) + ")";
  }
}
