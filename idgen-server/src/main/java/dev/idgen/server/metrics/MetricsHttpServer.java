package dev.idgen.server.metrics;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.lifecycle.ServerComponent;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /metrics} in the Prometheus text format, on {@code idgen.metrics.host}:{@code port}, served
 * by the JDK's own HTTP server on one daemon thread. Any other path is 404, any other method 405.
 *
 * <p>Thread-safe: start and close are guarded by {@code lock}; scrapes only read the registry.
 */
@ThreadSafe
final class MetricsHttpServer implements ServerComponent {

  private static final Logger log = LoggerFactory.getLogger(MetricsHttpServer.class);

  static final String PATH = "/metrics";

  private final PrometheusMeterRegistry registry;
  private final OperationsSettings.Metrics settings;
  private final Object lock = new Object();

  @GuardedBy("lock")
  private HttpServer http;

  @GuardedBy("lock")
  private ExecutorService executor;

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
      HttpServer server = HttpServer.create(new InetSocketAddress(settings.host(), settings.port()), 16);
      server.createContext("/", this::handle);
      executor = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "idgen-metrics-http");
        t.setDaemon(true);
        return t;
      });
      server.setExecutor(executor);
      server.start();
      http = server;
      log.info("metrics on http://{}:{}{}", settings.host(), server.getAddress().getPort(), PATH);
    }
  }

  /** The port it listens on (the chosen one if {@code idgen.metrics.port} is 0); -1 when not started. */
  int port() {
    synchronized (lock) {
      return http == null ? -1 : http.getAddress().getPort();
    }
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!PATH.equals(exchange.getRequestURI().getPath())) {
        respond(exchange, 404, "text/plain; charset=utf-8", "not found: metrics are on " + PATH + "\n");
      } else if (!"GET".equals(exchange.getRequestMethod()) && !"HEAD".equals(exchange.getRequestMethod())) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        respond(exchange, 405, "text/plain; charset=utf-8", "method not allowed\n");
      } else {
        respond(exchange, 200, "text/plain; version=0.0.4; charset=utf-8", registry.scrape());
      }
    }
  }

  private static void respond(HttpExchange exchange, int code, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    boolean head = "HEAD".equals(exchange.getRequestMethod());
    exchange.sendResponseHeaders(code, head ? -1 : bytes.length);
    if (!head) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      }
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (http != null) {
        http.stop(0);
        executor.shutdownNow();
      }
    }
  }

  @Override
  public String toString() {
    return "metrics endpoint";
  }
}
