package dev.idgen.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/**
 * The extension's life cycle, with the {@code external} backend pointed at plain listening sockets (no
 * Cassandra needed): parameter injection, the static accessor, the system properties, the stop at the end,
 * and a failure (never a skip) when the backend cannot start. Each case runs its own engine, hence its own
 * root context.
 */
class CassandraExtensionTest {
  private static final List<String> KEYS = List.of("idgen.it.cassandra", "idgen.it.cassandra.dc1", "idgen.it.cassandra.dc2");
  private final Map<String, String> saved = new HashMap<>();
  private final List<ServerSocket> sockets = new ArrayList<>();

  /** What the inner classes saw, for the outer test to check. */
  static final List<String> seen = new ArrayList<>();

  @BeforeEach
  void save() {
    KEYS.forEach(k -> saved.put(k, System.getProperty(k)));
    seen.clear();
  }

  @AfterEach
  void restore() throws IOException {
    saved.forEach((k, v) -> {
      if (v == null) {
        System.clearProperty(k);
      } else {
        System.setProperty(k, v);
      }
    });
    for (ServerSocket s : sockets) {
      s.close();
    }
  }

  private String listening() throws IOException {
    ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    sockets.add(s);
    return "127.0.0.1:" + s.getLocalPort();
  }

  @Test
  void should_start_once_inject_the_handle_and_stop_at_the_end() throws Exception {
    String dc1 = listening();
    String dc2 = listening();
    System.setProperty("idgen.it.cassandra", "external");
    System.setProperty("idgen.it.cassandra.dc1", dc1);
    System.setProperty("idgen.it.cassandra.dc2", dc2);

    Events tests = EngineTestKit.engine("junit-jupiter")
        .selectors(selectClass(UsesCassandra.class), selectClass(AlsoUsesCassandra.class))
        .execute().testEvents();

    tests.assertStatistics(s -> s.started(3).succeeded(3).failed(0).skipped(0).aborted(0));
    assertThat(seen).containsExactlyInAnyOrder("param external " + dc1 + " " + dc2, "ctor same", "static same");
    assertThat(System.getProperty("idgen.it.cassandra.dc1")).isEqualTo(dc1);
    assertThatThrownBy(CassandraExtension::cluster)
        .as("closed with the engine's root context")
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("@ExtendWith(CassandraExtension.class)");
  }

  @Test
  void should_fail_every_class_never_skip_when_the_backend_cannot_start() throws Exception {
    ServerSocket closed = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    int port = closed.getLocalPort();
    closed.close(); // nothing listens there now
    System.setProperty("idgen.it.cassandra", "external");
    System.setProperty("idgen.it.cassandra.dc1", "127.0.0.1:" + port);
    System.setProperty("idgen.it.cassandra.dc2", listening());

    Events containers = EngineTestKit.engine("junit-jupiter")
        .selectors(selectClass(UsesCassandra.class), selectClass(AlsoUsesCassandra.class))
        .execute().containerEvents();

    containers.assertStatistics(s -> s.failed(2).skipped(0).aborted(0));
    assertThat(seen).isEmpty();
  }

  @ExtendWith(CassandraExtension.class)
  static class UsesCassandra {
    @Test
    void param(TestCassandra cassandra) {
      seen.add("param " + cassandra.backend().id() + " " + cassandra.contactPoint(TestCassandra.DC1) + " "
          + cassandra.contactPoint(TestCassandra.DC2));
    }
  }

  @ExtendWith(CassandraExtension.class)
  static class AlsoUsesCassandra {
    private final TestCassandra fromConstructor;

    AlsoUsesCassandra(TestCassandra cassandra) {
      this.fromConstructor = cassandra;
    }

    @Test
    void ctor(TestCassandra cassandra) {
      seen.add(fromConstructor == cassandra ? "ctor same" : "ctor different");
    }

    @Test
    void staticAccessor(TestCassandra cassandra) {
      seen.add(CassandraExtension.cluster() == cassandra ? "static same" : "static different");
    }
  }
}
