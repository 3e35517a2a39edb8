package dev.idgen.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpServer;
import dev.idgen.server.EmbeddedDaemon;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The load generator works: a short run against the real daemon (embedded store, Netty on loopback, in
 * this JVM) gives a complete, parsable report with positive counts. Nothing here checks a speed.
 */
class LoadGenSmokeTest {

  @TempDir
  Path dir;

  private EmbeddedDaemon server;
  private HttpServer metrics;
  private final AtomicInteger scrapes = new AtomicInteger();

  @BeforeEach
  void start() throws Exception {
    server = EmbeddedDaemon.onLoopback(dir, 0);
    // A stand-in for the server's Prometheus endpoint, whose counters grow by a known step per scrape.
    metrics = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    metrics.createContext("/metrics", exchange -> {
      int n = scrapes.incrementAndGet();
      String body = "# HELP idgen_store_cas_total CAS operations.\n"
          + "# TYPE idgen_store_cas_total counter\n"
          + "idgen_store_cas_total{tier=\"global\",outcome=\"applied\"} " + n + ".0\n"
          + "idgen_store_cas_total{tier=\"dc\",outcome=\"applied\"} " + (10 * n) + ".0\n"
          + "idgen_store_cas_total{tier=\"dc\",outcome=\"conflict\"} 3.0\n"
          + "idgen_store_reservations_total " + (5 * n) + "\n";
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4");
      exchange.sendResponseHeaders(200, bytes.length);
      exchange.getResponseBody().write(bytes);
      exchange.close();
    });
    metrics.start();
  }

  @AfterEach
  void stop() {
    metrics.stop(0);
    server.close();
  }

  private JsonObject run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = new CommandLine(new LoadGen())
        .setOut(new PrintWriter(out))
        .setErr(new PrintWriter(err))
        .execute(args);
    assertThat(code).as("exit code; stderr: %s", err).isZero();
    return JsonParser.parseString(out.toString()).getAsJsonObject();
  }

  @Test
  void allocate_mode_reports_throughput_latency_and_cas_deltas() {
    JsonObject report = run("--target", "127.0.0.1:" + server.port(), "--sequence", "smoke",
        "--stripes", "2", "--node-block-size", "1000", "--concurrency", "4", "--ids-per-call", "3",
        "--warmup", "500ms", "--duration", "2s", "--json",
        "--metrics-url", "http://127.0.0.1:" + metrics.getAddress().getPort() + "/metrics",
        "--server-pid", Long.toString(ProcessHandle.current().pid()));

    assertThat(report.get("mode").getAsString()).isEqualTo("allocate");
    assertThat(report.get("calls").getAsLong()).isPositive();
    assertThat(report.get("ids").getAsLong()).isEqualTo(3 * report.get("calls").getAsLong());
    assertThat(report.get("idsPerSecond").getAsLong()).isPositive();
    assertThat(report.get("callsPerSecond").getAsLong()).isPositive();
    JsonObject latency = report.getAsJsonObject("latency");
    assertThat(latency.get("count").getAsLong()).isEqualTo(report.get("calls").getAsLong());
    for (String p : new String[] {"p50", "p99", "p999", "max"}) {
      assertThat(latency.get(p).getAsDouble()).as(p).isPositive();
    }
    assertThat(latency.get("p50").getAsDouble()).isLessThanOrEqualTo(latency.get("max").getAsDouble());
    assertThat(report.getAsJsonObject("errors").size()).isZero();
    // Two scrapes, one at each end of the window: each counter's step, once.
    JsonObject cas = report.getAsJsonObject("cas");
    assertThat(cas.getAsJsonObject("global").get("applied").getAsLong()).isEqualTo(1);
    assertThat(cas.getAsJsonObject("dc").get("applied").getAsLong()).isEqualTo(10);
    assertThat(cas.getAsJsonObject("dc").get("conflict").getAsLong()).isZero();
    assertThat(cas.get("embeddedReservations").getAsLong()).isEqualTo(5);
    assertThat(report.get("serverRssKbMax").getAsLong()).isPositive();
    assertThat(report.get("serverCpuSeconds").getAsDouble()).isNotNegative();
    assertThat(report.get("loadgenCpuSeconds").getAsDouble()).isPositive();
    assertThat(report.get("loadAverageBefore").getAsString()).isNotEmpty();
  }

  @Test
  void client_mode_reports_next_calls_and_says_na_without_metrics() {
    JsonObject report = run("--target", "127.0.0.1:" + server.port(), "--sequence", "smoke-client",
        "--mode", "client", "--concurrency", "2", "--warmup", "500ms", "--duration", "2s", "--json");

    assertThat(report.get("mode").getAsString()).isEqualTo("client");
    assertThat(report.get("calls").getAsLong()).isPositive();
    assertThat(report.get("ids").getAsLong()).isEqualTo(report.get("calls").getAsLong());
    assertThat(report.getAsJsonObject("latency").get("max").getAsDouble()).isPositive();
    assertThat(report.get("cas").getAsString()).isEqualTo("n/a");
    assertThat(report.getAsJsonObject("clientStats").get("failedCalls").getAsLong()).isZero();
    assertThat(report.getAsJsonObject("errors").size()).isZero();
  }

  @Test
  void text_report_names_every_figure() {
    StringWriter out = new StringWriter();
    int code = new CommandLine(new LoadGen()).setOut(new PrintWriter(out)).execute(
        "--target", "127.0.0.1:" + server.port(), "--concurrency", "1", "--warmup", "0s",
        "--duration", "500ms");

    assertThat(code).isZero();
    assertThat(out.toString()).contains("IDs/s", "calls/s", "p50", "p99.9", "max", "errors      none",
        "store CAS   n/a", "loadavg");
  }
}
