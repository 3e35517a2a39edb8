package dev.idgen.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.client.IdSource;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.stereotype.Service;

/**
 * What docs/spring-boot.md promises: a web application with Actuator, the starter and three properties gets IDs,
 * shows {@code idgen} in {@code /actuator/health} and the client's metrics in {@code /actuator/prometheus},
 * over HTTP, as an operator sees them.
 */
class ActuatorApplicationTest {

  /**
   * The sample application of docs/spring-boot.md ({@code @SpringBootApplication} there; here without its
   * component scan, which would pick up the other tests' configurations in this package). It has no entities:
   * JPA's auto-configuration stays out, or its entity scan of this package would find the JPA test's entity,
   * whose sequence this test's daemon does not have, and the idgen health would report it.
   */
  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration(excludeName = "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration")
  @Import(OrderService.class)
  static class SampleApplication {}

  /** The sample's service. */
  @Service
  static class OrderService {
    private final IdSource orders;

    OrderService(@IdSequence("orders") IdSource orders) {
      this.orders = orders;
    }

    long newOrderId() {
      return orders.next();
    }
  }

  @Test
  void should_serve_ids_health_and_prometheus_metrics(@TempDir Path dir) throws Exception {
    try (Daemon daemon = new Daemon(dir, "orders");
        ConfigurableApplicationContext app = new SpringApplicationBuilder(SampleApplication.class)
            .properties(
                // The three properties:
                "idgen.client.targets=" + daemon.target(),
                "idgen.client.tls.enabled=false",
                "idgen.client.sequences=orders",
                // The application's own Actuator settings, as docs/spring-boot.md shows them:
                "management.endpoints.web.exposure.include=health,prometheus",
                "management.endpoint.health.show-details=always",
                "server.port=0", "spring.main.banner-mode=off")
            .run()) {
      OrderService service = app.getBean(OrderService.class);
      long first = service.newOrderId();
      for (int i = 0; i < 4; i++) {
        assertThat(service.newOrderId()).isNotEqualTo(first);
      }
      String base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");

      String health = until(base + "/actuator/health", body -> body.contains("\"reachable\":1"));
      String prometheus = get(base + "/actuator/prometheus");

      // {"components":{..., "idgen":{"details":{"servers":{...},"reachable":1,...},"status":"UP"}, ...},"status":"UP"}
      assertThat(health).endsWith(",\"status\":\"UP\"}")
          .containsPattern("\"idgen\":\\{\"details\":\\{\"servers\":\\{\"" + daemon.target().replace(".", "\\.")
              + "\":\"OK at [^\"]+\"},\"reachable\":1,\"failedSources\":\\{},\"sources\":\\{\"orders\":\\{\"idsServed\":5,"
              + "[^}]*}}},\"status\":\"UP\"}");
      assertThat(prometheus)
          .contains("idgen_client_ids_served_total{client=\"idgen\",sequence=\"orders\"} 5.0")
          .contains("idgen_client_calls_total{client=\"idgen\",sequence=\"orders\",status=\"OK\"}")
          .contains("idgen_client_waits_seconds_count{client=\"idgen\",sequence=\"orders\"}")
          .contains("idgen_client_lease_size{client=\"idgen\",sequence=\"orders\"}")
          .contains("idgen_client_failovers_total{client=\"idgen\",sequence=\"orders\"} 0.0");
    }
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static String get(String url) throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(url + " said: " + r.body()).isEqualTo(200);
    return r.body();
  }

  /** GETs {@code url} until {@code done} holds, at most 10 s (the first lease call ends on a gRPC thread). */
  private static String until(String url, java.util.function.Predicate<String> done) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    String body = get(url);
    while (!done.test(body) && System.nanoTime() - deadline < 0) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
      body = get(url);
    }
    return body;
  }
}
