package dev.idgen.server.metrics;

import static dev.idgen.server.TestServer.failure;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.Ordering;
import dev.idgen.server.TestServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/monitoring's alerting rules and Grafana dashboard name only metrics, labels and label values that a
 * running server exports: two servers started in-process and scraped over HTTP, one on the embedded store with
 * some traffic (calls that succeed and fail, a strict sequence, an advance, a gauge refresh), and one on the Cassandra store
 * (with no Cassandra behind it: its store counters are registered at start, at 0), whose names only that store
 * exports.
 */
class MonitoringNamesTest {
  static final Path MONITORING = Path.of("..", "deploy", "monitoring");
  static final Path RULES = MONITORING.resolve("idgen-alerts.yml");
  static final Path DASHBOARD = MONITORING.resolve("idgen-dashboard.json");

  /**
   * Series that only a server on a live Cassandra with loaded sequences has (the datacenter pool's runway):
   * CassandraServerIT asserts it. Each must be named by the files (or it has no business here).
   */
  private static final Set<String> LIVE_CASSANDRA_ONLY = Set.of("idgen_runway_seconds{tier=\"dc\"}");

  private static Map<String, Map<String, Set<String>>> exported;

  @BeforeAll
  static void scrapeServers(@TempDir Path dir) throws Exception {
    String embedded;
    try (TestServer server = TestServer.startEmbedded(dir)) {
      server.create("orders");
      server.create("invoices");
      server.allocate("orders", 10);
      server.allocate("invoices", 3);
      server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("tickets")
          .setOrdering(Ordering.ORDERING_STRICT).build());
      server.allocate("tickets", 2);
      failure(() -> server.allocate("nope", 1));
      server.admin().advanceSequence(AdvanceSequenceRequest.newBuilder().setName("orders").setFloor(1_000).build());
      server.allocate("orders", 1);
      server.injector.getInstance(SequenceMonitor.class).refresh();
      embedded = scrape(server);
    }
    String cassandra;
    try (TestServer server = TestServer.startCassandra(Map.of("idgen.cassandra.contact-points",
        "127.0.0.1:" + freePort()))) {
      cassandra = scrape(server);
    }
    exported = MonitoringNames.exported(embedded, cassandra);
  }

  @AfterAll
  static void forget() {
    exported = null;
  }

  @Test
  void should_name_only_exported_metrics_labels_and_values_in_the_alerting_rules() throws IOException {
    List<MonitoringNames.Expression> rules = MonitoringNames.rules(RULES);

    assertThat(rules).hasSizeGreaterThanOrEqualTo(15);
    assertThat(withoutLiveCassandraOnly(MonitoringNames.problems(rules, exported))).isEmpty();
  }

  @Test
  void should_name_only_exported_metrics_labels_and_values_in_the_dashboard() throws IOException {
    List<MonitoringNames.Expression> queries = MonitoringNames.dashboard(DASHBOARD);

    assertThat(queries).hasSizeGreaterThanOrEqualTo(20);
    assertThat(withoutLiveCassandraOnly(MonitoringNames.problems(queries, exported))).isEmpty();
  }

  /** The panels an on-call engineer needs first are there (by the metrics they show). */
  @Test
  void should_show_calls_runway_headroom_store_gaps_and_strict_sequences_on_the_dashboard() throws IOException {
    Set<String> shown = MonitoringNames.metricsByWhere(MonitoringNames.dashboard(DASHBOARD)).values().stream()
        .flatMap(List::stream).collect(Collectors.toSet());

    assertThat(shown).contains("idgen_allocate_calls_total", "idgen_runway_seconds", "idgen_headroom_ratio",
        "idgen_store_cas_total", "idgen_refill_seconds_bucket", "idgen_ids_lost_total", "idgen_ids_returned_total",
        "idgen_strict_forwarded_calls_total", "idgen_strict_owner", "idgen_strict_owner_epoch", "grpc_server_processing_duration_seconds_bucket");
  }

  /** The exceptions are used (a value only a live Cassandra exports is named), so the list cannot rot. */
  @Test
  void should_need_each_live_cassandra_exception() throws IOException {
    List<MonitoringNames.Expression> all = new ArrayList<>(MonitoringNames.rules(RULES));
    all.addAll(MonitoringNames.dashboard(DASHBOARD));
    String problems = String.join("\n", MonitoringNames.problems(all, exported));

    for (String series : LIVE_CASSANDRA_ONLY) {
      assertThat(problems).contains(series + " is not exported");
    }
  }

  /** The check itself: a name, a label or a value the server lacks is reported, with where it is. */
  @Test
  void should_report_a_metric_a_label_and_a_value_the_server_does_not_export() {
    List<MonitoringNames.Expression> bad = List.of(
        new MonitoringNames.Expression("typo", "sum by (sequence) (rate(idgen_ids_alocated_total[5m])) > 0", Set.of()),
        new MonitoringNames.Expression("label", "idgen_ids_lost_total{cause=\"dc_block\"}", Set.of()),
        new MonitoringNames.Expression("value", "increase(idgen_ids_lost_total{reason=\"dc_blocks\"}[1h])", Set.of()),
        new MonitoringNames.Expression("status", "idgen_allocate_calls_total{status=~\"UNAVAILABLE|TIMEOUT\"}", Set.of()),
        new MonitoringNames.Expression("grouping", "sum by (stripe) (idgen_leases_total)", Set.of()),
        new MonitoringNames.Expression("legend", "sum by (sequence) (idgen_leases_total)", Set.of("tier")),
        new MonitoringNames.Expression("histogram", "histogram_quantile(0.99, sum by (le) "
            + "(rate(idgen_refill_seconds_bucket[5m]))) + idgen_refill_seconds_count + idgen_refill_seconds_sum",
            Set.of()),
        new MonitoringNames.Expression("prometheus", "up{job=\"idgen\"} == 0", Set.of()));

    List<String> problems = MonitoringNames.problems(bad, exported);

    assertThat(problems).containsExactly(
        "typo: metric idgen_ids_alocated_total is not exported",
        "label: idgen_ids_lost_total has no label cause (it has [reason])",
        "value: idgen_ids_lost_total{reason=\"dc_blocks\"} is not exported (values: [abandoned, advanced, dc_block])",
        "status: idgen_allocate_calls_total{status=\"TIMEOUT\"} is not exported (not a gRPC status code)",
        "grouping: groups by stripe, a label none of its metrics has",
        "legend: shows label tier, which none of its metrics has");
  }

  private static List<String> withoutLiveCassandraOnly(List<String> problems) {
    return problems.stream()
        .filter(p -> LIVE_CASSANDRA_ONLY.stream().noneMatch(s -> p.endsWith(s + " is not exported" + values(s))))
        .toList();
  }

  private static String values(String series) {
    String metric = series.substring(0, series.indexOf('{'));
    return " (values: " + exported.get(metric).get("tier") + ")";
  }

  private static String scrape(TestServer server) throws IOException, InterruptedException {
    int port = server.injector.getInstance(MetricsHttpServer.class).port();
    HttpResponse<String> response = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
