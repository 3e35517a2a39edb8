package dev.idgen.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdGenClientMetrics;
import dev.idgen.client.IdSource;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The auto-configuration in an ApplicationContextRunner, against an idgen daemon on loopback. */
class IdGenClientAutoConfigurationTest {
  private static Daemon daemon;

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdGenClientAutoConfiguration.class));

  @BeforeAll
  static void startDaemon(@TempDir Path dir) {
    daemon = new Daemon(dir, "orders", "invoices");
  }

  @AfterAll
  static void stopDaemon() {
    daemon.close();
  }

  /** A service as an application writes it. */
  record OrderService(IdSource orders) {}

  @Configuration(proxyBeanMethods = false)
  static class App {
    @Bean
    OrderService orderService(@IdSequence("orders") IdSource orders) {
      return new OrderService(orders);
    }
  }

  @Test
  void should_hand_out_ids_through_an_injected_source_with_three_properties() {
    runner.withUserConfiguration(App.class)
        .withPropertyValues("idgen.client.targets=" + daemon.target(), "idgen.client.tls.enabled=false",
            "idgen.client.sequences=orders,invoices")
        .run(context -> {
          IdSource orders = context.getBean(OrderService.class).orders();
          long a = orders.next();
          long b = orders.next();

          assertThat(orders.sequence()).isEqualTo("orders");
          assertThat(b).isNotEqualTo(a);
          assertThat(orders).isSameAs(context.getBean(IdGenClient.class).sequence("orders"));
          assertThat(context.getBeansOfType(IdSource.class)).containsOnlyKeys("idSource-orders", "idSource-invoices");
        });
  }

  @Test
  void should_apply_the_properties_to_the_builder() {
    runner.withPropertyValues("idgen.client.targets=" + daemon.target(), "idgen.client.tls.enabled=false",
            "idgen.client.sequences=orders", "idgen.client.name=billing", "idgen.client.min-lease-size=7",
            "idgen.client.max-lease-size=7", "idgen.client.wait-deadline=3s", "idgen.client.call-deadline=500ms",
            "idgen.client.lease-lifetime=2s", "idgen.client.retry-backoff-initial=5ms",
            "idgen.client.retry-backoff-max=1s")
        .run(context -> {
          IdSource orders = context.getBean(IdSource.class);
          orders.next();

          assertThat(context.getBean(IdGenClient.class).toString()).startsWith("IdGenClient{name=billing, servers=[");
          assertThat(orders.stats().leaseSize()).isEqualTo(7);
          IdGenClientProperties p = context.getBean(IdGenClientProperties.class);
          assertThat(p.getWaitDeadline()).isEqualTo(Duration.ofSeconds(3));
          assertThat(p.getRetryBackoffMax()).isEqualTo(Duration.ofSeconds(1));
        });
  }

  @Test
  void should_refuse_to_start_without_a_server_saying_which_property_to_set() {
    runner.run(context -> assertThat(context).hasFailed().getFailure()
        .rootCause().hasMessageContaining("target"));
    runner.run(context -> assertThat(context.getStartupFailure()).hasStackTraceContaining("set idgen.client.targets"));
  }

  @Test
  void should_refuse_a_bad_value_naming_it() {
    runner.withPropertyValues("idgen.client.targets=" + daemon.target(), "idgen.client.min-lease-size=0")
        .run(context -> assertThat(context.getStartupFailure()).hasStackTraceContaining("idgen.client: ")
            .hasStackTraceContaining("minLeaseSize"));
  }

  @Test
  void should_close_the_client_with_the_context() {
    IdGenClient[] client = new IdGenClient[1];
    runner.withPropertyValues("idgen.client.targets=" + daemon.target(), "idgen.client.tls.enabled=false")
        .run(context -> client[0] = context.getBean(IdGenClient.class));

    assertThat(client[0].toString()).endsWith(", closed}");
  }

  @Test
  void should_create_nothing_when_disabled() {
    runner.withPropertyValues("idgen.client.enabled=false", "idgen.client.sequences=orders")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(IdGenClient.class)
            .doesNotHaveBean(IdSource.class));
  }

  @Test
  void should_report_up_with_a_server_reached_and_the_sources_counters() {
    runner.withPropertyValues("idgen.client.targets=" + daemon.target(), "idgen.client.tls.enabled=false",
            "idgen.client.sequences=orders")
        .run(context -> {
          IdGenHealthIndicator indicator = context.getBean("idgenHealthIndicator", IdGenHealthIndicator.class);
          context.getBean(IdSource.class).next();
          Health health = until(indicator::health, h -> h.getStatus().equals(Status.UP));

          assertThat(health.getStatus()).isEqualTo(Status.UP);
          assertThat(health.getDetails()).containsEntry("reachable", 1L).containsEntry("failedSources", Map.of());
          assertThat(((Map<?, ?>) health.getDetails().get("servers")).keySet().toString()).isEqualTo("[" + daemon.target() + "]");
          assertThat(health.getDetails().get("sources").toString()).contains("orders=").contains("idsServed=1");
        });
  }

  @Test
  void should_report_down_when_a_configured_sequence_does_not_exist() {
    runner.withPropertyValues("idgen.client.targets=" + daemon.target(), "idgen.client.tls.enabled=false",
            "idgen.client.sequences=orders,nope")
        .run(context -> {
          IdGenHealthIndicator indicator = context.getBean("idgenHealthIndicator", IdGenHealthIndicator.class);
          Health health = until(indicator::health, h -> h.getStatus().equals(Status.DOWN));

          assertThat(health.getStatus()).isEqualTo(Status.DOWN);
          assertThat(health.getDetails().get("failedSources").toString()).contains("nope=NOT_FOUND");
          assertThat(health.getDetails()).containsEntry("reachable", 1L);
        });
  }

  @Test
  void should_report_down_when_no_server_is_reachable() {
    runner.withPropertyValues("idgen.client.targets=" + Daemon.deadTarget(), "idgen.client.tls.enabled=false",
            "idgen.client.sequences=orders")
        .run(context -> {
          IdGenHealthIndicator indicator = context.getBean("idgenHealthIndicator", IdGenHealthIndicator.class);
          Health health = until(indicator::health, h -> !h.getStatus().equals(Status.UNKNOWN));

          assertThat(health.getStatus()).isEqualTo(Status.DOWN);
          assertThat(health.getDetails()).containsEntry("reachable", 0L);
          assertThat(health.getDetails().get("servers").toString()).contains("UNAVAILABLE");
        });
  }

  @Test
  void should_bind_the_client_metrics_to_the_applications_registry() {
    runner.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
            CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class))
        .withPropertyValues("idgen.client.targets=" + daemon.target(), "idgen.client.tls.enabled=false",
            "idgen.client.sequences=orders")
        .run(context -> {
          assertThat(context).hasSingleBean(IdGenClientMetrics.class);
          IdSource orders = context.getBean(IdSource.class);
          orders.next(3);
          MeterRegistry registry = context.getBean(MeterRegistry.class);

          assertThat(registry.get("idgen.client.ids.served").tag("client", "idgen").tag("sequence", "orders")
              .functionCounter().count()).isEqualTo(3);
          assertThat(registry.get("idgen.client.calls").tag("sequence", "orders").tag("status", "OK")
              .functionCounter().count()).isPositive();
        });
  }

  /** IDEs complete the properties from the metadata the configuration processor wrote into the jar. */
  @Test
  void should_ship_configuration_metadata_with_a_description_of_each_property() throws Exception {
    String metadata;
    try (var in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("META-INF/spring-configuration-metadata.json").isNotNull();
      metadata = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    java.util.regex.Matcher property = java.util.regex.Pattern.compile(
        "\\{\\s*\"name\": \"(idgen\\.client\\.[a-z.-]+)\",\\s*\"type\": \"[^\"]+\",\\s*\"description\": \"[^\"]+\"")
        .matcher(metadata);
    java.util.Set<String> described = new java.util.TreeSet<>();
    while (property.find()) {
      described.add(property.group(1));
    }

    assertThat(described).contains("idgen.client.targets", "idgen.client.sequences", "idgen.client.tls.enabled",
        "idgen.client.tls.ca-file", "idgen.client.tls.cert-file", "idgen.client.tls.key-file",
        "idgen.client.bearer-token-file", "idgen.client.call-deadline", "idgen.client.wait-deadline",
        "idgen.client.lease-lifetime", "idgen.client.min-lease-size", "idgen.client.max-lease-size",
        "idgen.client.retry-backoff-initial", "idgen.client.retry-backoff-max", "idgen.client.name",
        "idgen.client.enabled");
  }

  /** Polls {@code get} until {@code done} (at most 10 s): the first call ends on a gRPC thread. */
  private static <T> T until(Supplier<T> get, java.util.function.Predicate<T> done) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    T value = get.get();
    while (!done.test(value) && System.nanoTime() - deadline < 0) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      value = get.get();
    }
    return value;
  }
}
