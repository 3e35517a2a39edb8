package dev.idgen.server.metrics;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.sun.net.httpserver.HttpExchange;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.lifecycle.ServerComponent;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /metrics} on {@code idgen.metrics.host}:{@code port}, served by the Prometheus client's own
 * HTTP server ({@link HTTPServer}, on its daemon threads) from the registry's Prometheus registry: the
 * Prometheus text format when the request names no format (what {@code curl} and the bench scripts read),
 * OpenMetrics or the Prometheus protobuf format when its {@code Accept} header asks for one, gzip when
 * {@code Accept-Encoding} allows it, and {@code ?name[]=…} to scrape some metrics only. The content
 * negotiation is the client's, so that it follows what Prometheus servers ask for. Any path other than
 * {@code /metrics} (and the client's {@code /-/healthy}) is 404.
 *
 * <p>Thread-safe: start and close are guarded by {@code lock}; scrapes only read the registry.
 */
@ThreadSafe
final class MetricsHttpServer implements ServerComponent {

  private static final Logger log = LoggerFactory.getLogger(MetricsHttpServer.class);

  /** The path that {@link HTTPServer} serves the metrics on (fixed by it). */
  static final String PATH = "/metrics";

  private final PrometheusMeterRegistry registry;
  private final OperationsSettings.Metrics settings;
  private final Object lock = new Object();

  @GuardedBy("lock")
  private HTTPServer http;

  MetricsHttpServer(PrometheusMeterRegistry registry, OperationsSettings.Metrics settings) {
    this.registry = registry;
    this.settings = settings;
  }

  @Override
  public void start() throws IOException {
    synchronized (lock) {
      if (http != null) {
        return;
      }
      http = HTTPServer.builder()
          .hostname(settings.host())
          .port(settings.port())
          .registry(registry.getPrometheusRegistry())
          // Its default handler of "/" is a page about the client library: off the metrics path, a 404.
          .defaultHandler(MetricsHttpServer::notFound)
          .buildAndStart();
      log.info("metrics on http://{}:{}{}", settings.host(), http.getPort(), PATH);
    }
  }

  /** The port it listens on (the chosen one if {@code idgen.metrics.port} is 0); -1 when not started. */
  int port() {
    synchronized (lock) {
      return http == null ? -1 : http.getPort();
    }
  }

  private static void notFound(HttpExchange exchange) throws IOException {
    try (exchange) {
      byte[] body = ("not found: metrics are on " + PATH + "\n").getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
      boolean head = "HEAD".equals(exchange.getRequestMethod());
      exchange.sendResponseHeaders(404, head ? -1 : body.length);
      if (!head) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      }
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (http != null) {
        http.close();
        http = null; // idempotent: the JDK's server must not be stopped twice
      }
    }
  }

  @Override
  public String toString() {
    return "metrics endpoint";
  }
}
