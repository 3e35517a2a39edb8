package dev.idgen.server.metrics;

import static dev.idgen.server.TestServer.failure;
import static dev.idgen.server.TestServer.sample;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.server.TestServer;
import io.grpc.Status;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    int port = server.injector.getInstance(MetricsHttpServer.class).port();
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The value of the first sample line that starts with {@code series} followed by a space or a '{'. */

}
