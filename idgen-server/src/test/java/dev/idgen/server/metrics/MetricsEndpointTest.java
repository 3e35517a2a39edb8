package dev.idgen.server.metrics;

import static dev.idgen.server.TestServer.failure;
import static dev.idgen.server.TestServer.sample;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.server.TestServer;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** /metrics as Prometheus scrapes it, with the names other tools depend on. */
class MetricsEndpointTest {

  private TestServer server;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void start() {
    server = TestServer.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void should_count_ids_calls_and_leases_per_sequence_and_status() throws Exception {
    server.create("orders");
    server.allocate("orders", 10);
    server.allocate("orders", 5);
    failure(() -> server.allocate("nope", 1));
    failure(() -> server.allocate("orders", 0));

    String metrics = scrape();

    assertThat(metrics)
        .contains("idgen_ids_allocated_total{sequence=\"orders\"} 15.0")
        .contains("idgen_leases_total{sequence=\"orders\"} 2.0")
        .contains("idgen_allocate_calls_total{sequence=\"orders\",status=\"OK\"} 2.0")
        .contains("idgen_allocate_calls_total{sequence=\"orders\",status=\"INVALID_ARGUMENT\"} 1.0")
        // Names this server never loaded share one series: made-up names cannot flood the registry.
        .contains("idgen_allocate_calls_total{sequence=\"_other\",status=\"NOT_FOUND\"} 1.0")
        .doesNotContain("sequence=\"nope\"");
  }

  @Test
  void should_fold_sequences_beyond_max_sequence_series_into_other_and_count_them() throws Exception {
    server.close();
    server = TestServer.start(Map.of("idgen.metrics.max-sequence-series", 1));
    server.create("orders");
    server.create("invoices");
    server.allocate("orders", 10);
    server.allocate("invoices", 5);
    server.injector.getInstance(SequenceMonitor.class).refresh();

    String metrics = scrape();

    assertThat(metrics)
        .contains("idgen_ids_allocated_total{sequence=\"orders\"} 10.0")
        .contains("idgen_ids_allocated_total{sequence=\"_other\"} 5.0")
        .contains("idgen_allocate_calls_total{sequence=\"_other\",status=\"OK\"} 1.0")
        .contains("idgen_headroom_ratio{sequence=\"orders\"}")
        .doesNotContain("sequence=\"invoices\"");
    assertThat(sample(metrics, "idgen_metrics_sequences_folded")).isEqualTo(1);
  }

  @Test
  void should_time_store_reservations_and_count_them() throws Exception {
    server.create("orders");
    server.allocate("orders", 10);

    String metrics = scrape();

    assertThat(sample(metrics, "idgen_store_reservations_total")).isGreaterThanOrEqualTo(1);
    assertThat(sample(metrics, "idgen_refill_seconds_count")).isEqualTo(sample(metrics, "idgen_store_reservations_total"));
    assertThat(metrics).contains("idgen_refill_seconds_bucket{le=");
  }

  @Test
  void should_count_ids_dropped_by_an_advance_as_lost() throws Exception {
    server.create("orders");
    server.allocate("orders", 1); // the pool now holds the rest of a block: 2 … 100
    long held = server.injector.getInstance(dev.idgen.core.Allocator.class).stats().held();
    server.admin().advanceSequence(AdvanceSequenceRequest.newBuilder().setName("orders").setFloor(1_000).build());

    String metrics = scrape();

    assertThat(held).isPositive();
    assertThat(sample(metrics, "idgen_ids_lost_total{reason=\"advanced\"}")).isEqualTo(held);
    assertThat(sample(metrics, "idgen_ids_lost_total{reason=\"abandoned\"}")).isZero();
    assertThat(sample(metrics, "idgen_ids_lost_total{reason=\"dc_block\"}")).isZero();
  }

  @Test
  void should_export_jvm_metrics() throws Exception {
    assertThat(scrape()).contains("jvm_memory_used_bytes").contains("jvm_threads_live_threads")
        .contains("process_uptime_seconds");
  }

  @Test
  void should_answer_404_off_the_metrics_path() throws Exception {
    HttpResponse<String> response = get("/other");

    assertThat(response.statusCode()).isEqualTo(404);
  }

  @Test
  void should_time_every_method_with_its_status_code() throws Exception {
    server.create("orders");
    server.allocate("orders", 3);
    failure(() -> server.allocate("nope", 1));
    server.admin().getSequence(GetSequenceRequest.newBuilder().setName("orders").build());
    failure(() -> server.admin().getSequence(GetSequenceRequest.newBuilder().setName("nope").build()));

    String allocate = "grpc_server_processing_duration_seconds_count{method=\"Allocate\",methodType=\"SERVER_STREAMING\","
        + "service=\"idgen.v1.IdGen\",statusCode=\"";
    String get = "grpc_server_processing_duration_seconds_count{method=\"GetSequence\",methodType=\"UNARY\","
        + "service=\"idgen.v1.SequenceAdmin\",statusCode=\"";
    List<String> series = List.of(allocate + "OK\"}", allocate + "NOT_FOUND\"}", get + "OK\"}", get + "NOT_FOUND\"}");

    String metrics = scrapeUntil(m -> series.stream().allMatch(s -> m.contains(s + " 1\n")));

    for (String s : series) {
      assertThat(sample(metrics, s)).as(s).isEqualTo(1);
    }
    // A latency histogram, and the methods not called yet are there at zero.
    assertThat(metrics).contains("grpc_server_processing_duration_seconds_bucket{method=\"Allocate\"")
        .contains("grpc_server_processing_duration_seconds_count{method=\"AdvanceSequence\"");
  }

  @Test
  void should_record_each_allocate_call_once_in_every_meter_even_when_its_request_does_not_parse()
      throws Exception {
    server.create("orders");
    int ranges = server.allocate("orders", 7).size();
    MethodDescriptor<byte[], byte[]> raw = IdGenGrpc.getAllocateMethod().toBuilder(TestServer.BYTES, TestServer.BYTES)
        .build();
    // Field 1 (sequence) says 5 bytes follow, and 1 does: refused by the request parsing guard.
    StatusRuntimeException malformed = failure(() -> ClientCalls.blockingServerStreamingCall(server.channel, raw,
        CallOptions.DEFAULT, new byte[] {0x0a, 0x05, 'a'}).forEachRemaining(r -> { }));

    String timer = "grpc_server_processing_duration_seconds_count{method=\"Allocate\",methodType=\"SERVER_STREAMING\","
        + "service=\"idgen.v1.IdGen\",statusCode=\"";
    String metrics = scrapeUntil(m -> m.contains(timer + "INVALID_ARGUMENT\"} 1"));

    assertThat(malformed.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(sample(metrics, timer + "OK\"}")).isEqualTo(1);
    assertThat(sample(metrics, timer + "INVALID_ARGUMENT\"}")).isEqualTo(1);
    String method = "{method=\"Allocate\",methodType=\"SERVER_STREAMING\",service=\"idgen.v1.IdGen\"}";
    // The malformed request arrived too (as no message the service could read); only the good call answered.
    assertThat(sample(metrics, "grpc_server_requests_received_messages_total" + method)).isEqualTo(2);
    assertThat(sample(metrics, "grpc_server_responses_sent_messages_total" + method)).isEqualTo(ranges);
    assertThat(sample(metrics, "idgen_allocate_calls_total{sequence=\"orders\",status=\"OK\"}")).isEqualTo(1);
    assertThat(sample(metrics, "idgen_ids_allocated_total{sequence=\"orders\"}")).isEqualTo(7);
    assertThat(sample(metrics, "idgen_allocate_calls_total{sequence=\"_other\",status=\"INVALID_ARGUMENT\"}"))
        .isEqualTo(1);
  }

  @Test
  void should_compress_with_gzip_when_the_scraper_accepts_it() throws Exception {
    HttpResponse<byte[]> response = http.send(request("/metrics").header("Accept-Encoding", "gzip").build(),
        HttpResponse.BodyHandlers.ofByteArray());

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Encoding")).hasValue("gzip");
    String text;
    try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(response.body()))) {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertThat(text).contains("jvm_threads_live_threads");
  }

  @Test
  void should_answer_in_openmetrics_when_the_accept_header_asks_for_it() throws Exception {
    HttpResponse<String> response = http.send(request("/metrics")
            .header("Accept", "application/openmetrics-text; version=1.0.0; charset=utf-8").build(),
        HttpResponse.BodyHandlers.ofString());

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
        type -> assertThat(type).startsWith("application/openmetrics-text"));
    // OpenMetrics ends with "# EOF"; the Prometheus text format (the default) has no such line.
    assertThat(response.body()).endsWith("# EOF\n").contains("jvm_threads_live_threads");
    assertThat(scrape()).doesNotContain("# EOF");
  }

  @Test
  void should_count_a_refused_status_code_by_its_grpc_name() throws Exception {
    server.create("orders");
    failure(() -> server.allocate("orders", server.settings.maxIdsPerCall() + 1));

    assertThat(scrape()).contains("status=\"" + Status.Code.INVALID_ARGUMENT.name() + "\"");
  }

  private String scrape() throws IOException, InterruptedException {
    HttpResponse<String> response = get("/metrics");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
        type -> assertThat(type).startsWith("text/plain"));
    return response.body();
  }

  /**
   * Scrapes until {@code done} holds, for at most 10 s: Micrometer's gRPC meters record a call when the
   * server learns that it completed, which for calls that ran on the worker pool may be just after the
   * client had its answer.
   */
  private String scrapeUntil(Predicate<String> done) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    for (;;) {
      String metrics = scrape();
      if (done.test(metrics) || System.nanoTime() - deadline > 0) {
        return metrics;
      }
      Thread.sleep(10); // no event to wait on: the meter is recorded on a server thread
    }
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(request(path).build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest.Builder request(String path) {
    int port = server.injector.getInstance(MetricsHttpServer.class).port();
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
  }
}
