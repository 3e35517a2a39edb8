package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.RequiredSearch;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** IdGenClientMetrics: the sources' stats, calls by status and failovers, as Micrometer meters. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IdGenClientMetricsTest {
  private final FakeCluster cluster = new FakeCluster();
  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final IdGenClientMetrics metrics = new IdGenClientMetrics();
  private IdGenClient client;

  @AfterEach
  void tearDown() {
    if (client != null) {
      client.close();
    }
    cluster.close();
  }

  private IdGenClientBuilder builder(FakeCluster.FakeServer... servers) {
    IdGenClientBuilder b = IdGenClient.builder().name("app").minLeaseSize(5).maxLeaseSize(5)
        .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(20)).waitDeadline(Duration.ofSeconds(20))
        .intercept(metrics.interceptor());
    for (FakeCluster.FakeServer s : servers) {
      b.channel(s.channel());
    }
    return b;
  }

  private RequiredSearch meter(String name, String sequence) {
    return registry.get("idgen.client." + name).tag("client", "app").tag("sequence", sequence);
  }

  @Test
  void should_export_each_sources_stats_including_sources_created_before_and_after_binding() {
    cluster.backend.create("orders");
    cluster.backend.create("invoices");
    FakeCluster.FakeServer server = cluster.server();
    client = builder(server).build();
    IdSource orders = client.sequence("orders");
    metrics.monitor(client).bindTo(registry);
    IdSource invoices = client.sequence("invoices");
    for (int i = 0; i < 23; i++) {
      orders.next();
    }
    invoices.next(7);

    for (IdSource source : List.of(orders, invoices)) {
      String s = source.sequence();
      // A lease may arrive in the background between two reads: compare with the stats of the same moment.
      Await.until(s + "'s meters equal its stats", () -> matches(source.stats(), s));
      assertThat(meter("lease.size", s).gauge().value()).as(s).isEqualTo(5);
      assertThat(meter("ids.expired", s).functionCounter().count()).as(s).isZero();
      assertThat(meter("failed.calls", s).functionCounter().count()).as(s).isZero();
      assertThat(meter("strict.ordering", s).gauge().value()).as(s).isZero();
    }
    assertThat(orders.stats().idsServed()).isEqualTo(23);
    assertThat(invoices.stats().idsServed()).isEqualTo(7);
    Await.until("every call counted, by sequence",
        () -> count("orders", "OK") + count("invoices", "OK") == server.service().calls.get());
    assertThat(count("orders", "OK")).isPositive();
    assertThat(count("invoices", "OK")).isPositive();
    assertThat(meter("failovers", "orders").functionCounter().count()).isZero();
  }

  private boolean matches(IdSourceStats stats, String s) {
    FunctionTimer waits = meter("waits", s).functionTimer();
    return meter("ids.served", s).functionCounter().count() == stats.idsServed()
        && meter("leases", s).functionCounter().count() == stats.leases()
        && meter("ids.held", s).gauge().value() == stats.idsHeld()
        && waits.count() == stats.waits()
        // Micrometer converts the time through its base unit (seconds): equal to within rounding.
        && Math.abs(waits.totalTime(TimeUnit.NANOSECONDS) - stats.waitTime().toNanos()) < 1_000;
  }

  @Test
  void should_count_failed_calls_by_status_and_the_failovers_they_caused() {
    cluster.backend.create("orders");
    FakeCluster.FakeServer a = cluster.server();
    FakeCluster.FakeServer b = cluster.server();
    a.service().failAlways(Status.UNAVAILABLE.withDescription("no reserve left"));
    client = builder(a, b).build();
    metrics.monitor(client).bindTo(registry);
    IdSource orders = client.sequence("orders");
    for (int i = 0; i < 100; i++) {
      orders.next();
    }

    // A background refill may still fail on a after the loop: wait until every count has seen the same calls
    // (on a loaded machine one was read before, another after, such a call).
    Await.until("every call on a counted",
        () -> count("orders", "UNAVAILABLE") == a.service().calls.get() && count("orders", "OK") == b.service().calls.get()
            && meter("failed.calls", "orders").functionCounter().count() == orders.stats().failedCalls()
            && orders.stats().failedCalls() == count("orders", "UNAVAILABLE"));
    double unavailable = count("orders", "UNAVAILABLE");
    assertThat(unavailable).isPositive();
    assertThat(meter("failed.calls", "orders").functionCounter().count()).isEqualTo(orders.stats().failedCalls())
        .isEqualTo(unavailable);
    // The call after a failed one on a goes to b (a is avoided for a while): a failover. A retry may still be
    // on its way after the last failure, hence the wait.
    Await.until("a failover counted", () -> meter("failovers", "orders").functionCounter().count() > 0);
    // Every failover follows a failed call (the next call may also go to a again once it is no longer avoided).
    assertThat(meter("failovers", "orders").functionCounter().count())
        .isLessThanOrEqualTo(count("orders", "UNAVAILABLE"));
  }

  private double count(String sequence, String status) {
    var c = registry.find("idgen.client.calls").tag("sequence", sequence).tag("status", status).functionCounter();
    return c == null ? 0 : c.count();
  }

  @Test
  void should_bind_a_registry_given_before_the_client_and_refuse_a_second_client() {
    cluster.backend.create("orders");
    client = builder(cluster.server()).build();
    metrics.bindTo(registry); // as a framework may, before the client exists
    assertThat(registry.getMeters()).isEmpty();

    metrics.monitor(client);
    client.sequence("orders").next();

    assertThat(meter("ids.served", "orders").functionCounter().count()).isEqualTo(1);
    assertThatThrownBy(() -> metrics.monitor(client)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already monitors");
  }

  /**
   * micrometer-core is optional: no class of the client but the binder may refer to it, or an application
   * without Micrometer would fail to load it.
   */
  @Test
  void should_leave_micrometer_to_the_binder_alone() throws IOException {
    Path classes = Paths.get("target/classes/dev/idgen/client");
    List<String> referring;
    try (Stream<Path> files = Files.list(classes)) {
      referring = files.filter(p -> p.toString().endsWith(".class"))
          .filter(p -> contains(p, "io/micrometer/"))
          .map(p -> p.getFileName().toString())
          .sorted().toList();
    }

    assertThat(referring).isNotEmpty().allMatch(name -> name.startsWith("IdGenClientMetrics"));
  }

  private static boolean contains(Path classFile, String text) {
    try {
      return new String(Files.readAllBytes(classFile), java.nio.charset.StandardCharsets.ISO_8859_1).contains(text);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
