package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The server jar running as a child JVM on a free loopback port, for integration tests: started with
 * extra {@code -D} settings, ready once its health service reports SERVING, killed with SIGKILL or
 * stopped with SIGTERM. The jar's path comes from the {@code idgenServerJar} system property (failsafe).
 */
final class ServerProcess implements AutoCloseable {
  private static final long START_TIMEOUT_MILLIS = 90_000;

  private final Process process;
  private final ManagedChannel channel;
  private final Path log;
  private final int port;

  private ServerProcess(Process process, ManagedChannel channel, Path log, int port) {
    this.process = process;
    this.channel = channel;
    this.log = log;
    this.port = port;
  }

  /**
   * Starts the server with {@code settings} ({@code key=value}, passed as {@code -D}) and waits until it
   * is SERVING. The port is free when chosen but may be taken before the child binds it: then the start
   * is tried again.
   */
  static ServerProcess start(Path workDir, String name, List<String> settings) throws Exception {
    String jar = System.getProperty("idgenServerJar");
    assertThat(jar).as("system property idgenServerJar (set by failsafe)").isNotNull();
    assertThat(Path.of(jar)).as("the shaded server jar; run `verify`, which packages first").exists();
    for (int attempt = 1; ; attempt++) {
      int port = freePort();
      Path log = workDir.resolve(name + "-" + attempt + ".log");
      List<String> cmd = new ArrayList<>(List.of(
          Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xmx256m",
          "-XX:TieredStopAtLevel=1", // starts faster; these tests are about correctness, not speed
          "-Didgen.grpc.host=127.0.0.1",
          "-Didgen.grpc.port=" + port,
          "-Didgen.metrics.host=127.0.0.1",
          "-Didgen.metrics.port=0", // any free port: several servers run at once
          "-Didgen.http.host=127.0.0.1",
          "-Didgen.http.port=-1", // likewise; never 8080
          "-Didgen.shutdown.quiet-period=0s"));
      for (String s : settings) {
        cmd.add("-D" + s);
      }
      cmd.addAll(List.of("-jar", jar));
      Process process = new ProcessBuilder(cmd)
          .directory(workDir.toFile())
          .redirectErrorStream(true)
          .redirectOutput(log.toFile())
          .start();
      ManagedChannel channel = Grpc.newChannelBuilderForAddress("127.0.0.1", port,
          InsecureChannelCredentials.create()).build();
      ServerProcess server = new ServerProcess(process, channel, log, port);
      if (server.awaitServing()) {
        return server;
      }
      server.close();
      if (attempt == 3) {
        throw new AssertionError("the server could not bind a port in 3 attempts:\n" + read(log));
      }
    }
  }

  ManagedChannel channel() {
    return channel;
  }

  int port() {
    return port;
  }

  /** The port of the metrics endpoint, as the server logged it at start. */
  int metricsPort() throws IOException {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("metrics on http://[^:]+:(\\d+)/metrics")
        .matcher(read(log));
    assertThat(m.find()).as("the server logs its metrics endpoint").isTrue();
    return Integer.parseInt(m.group(1));
  }

  /** The server's metrics endpoint now (Prometheus text); fails unless it answers 200. */
  String scrape() throws IOException, InterruptedException {
    java.net.http.HttpResponse<String> scrape = java.net.http.HttpClient.newHttpClient().send(
        java.net.http.HttpRequest.newBuilder(java.net.URI.create(
            "http://127.0.0.1:" + metricsPort() + "/metrics")).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(scrape.statusCode()).isEqualTo(200);
    return scrape.body();
  }

  /**
   * The sum of every series of {@code metric} (e.g. {@code idgen_ids_lost_total}, over all its labels) on the
   * server's metrics endpoint now.
   */
  double scrapeSum(String metric) throws IOException, InterruptedException {
    double sum = 0;
    for (String line : scrape().split("\n")) {
      if (line.startsWith(metric + " ") || line.startsWith(metric + "{")) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  /** The lines of the server's log at WARN or ERROR, for a failing assertion to show. */
  String warnings() throws IOException {
    StringBuilder b = new StringBuilder();
    for (String line : read(log).split("\n")) {
      if (line.contains(" WARN ") || line.contains(" ERROR ")) {
        b.append(line).append('\n');
      }
    }
    return b.toString();
  }

  long pid() {
    return process.pid();
  }

  String output() throws IOException {
    return read(log);
  }

  /** SIGKILL, and wait until the process is gone. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /** True once SERVING; false if the server exited because its port was taken; fails otherwise. */
  private boolean awaitServing() throws Exception {
    HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
    while (true) {
      if (!process.isAlive()) {
        String output = read(log);
        if (process.exitValue() == Main.EXIT_START_FAILED && output.contains("could not listen")) {
          return false;
        }
        throw new AssertionError("the server exited with " + process.exitValue() + ":\n" + output);
      }
      try {
        ServingStatus status = health.withDeadlineAfter(1, TimeUnit.SECONDS)
            .check(HealthCheckRequest.getDefaultInstance()).getStatus();
        if (status == ServingStatus.SERVING) {
          return true;
        }
      } catch (StatusRuntimeException notYet) {
        // not listening yet
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the server did not report SERVING within " + START_TIMEOUT_MILLIS
            + " ms:\n" + read(log));
      }
      Thread.sleep(100); // polling a child process: there is no event to wait on
    }
  }

  /** Kills the process (SIGKILL) and closes the channel. */
  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow();
    kill();
  }

  private static String read(Path log) throws IOException {
    return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "(no log)";
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }
}
