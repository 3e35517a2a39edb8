package dev.idgen.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.testing.BackendSelection.Choice;
import dev.idgen.testing.BackendSelection.DockerStatus;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The choice between the backends, without Docker (these machines have none, so the Testcontainers path
 * is reached here only through a fake probe).
 */
class BackendSelectionTest {
  private static final DockerStatus ENGINE = new DockerStatus(true, "unix:///var/run/docker.sock");
  private static final DockerStatus NO_ENGINE = new DockerStatus(false, "DOCKER_HOST unset, /var/run/docker.sock absent");

  @Test
  void should_use_testcontainers_when_a_docker_engine_answers() {
    Choice c = BackendSelection.select(null, () -> ENGINE);

    assertThat(c.backend()).isEqualTo(Backend.TESTCONTAINERS);
    assertThat(c.describe()).isEqualTo("[idgen-testing] Cassandra for integration tests: testcontainers"
        + " (Docker engine found: unix:///var/run/docker.sock)");
  }

  @Test
  void should_use_the_launcher_without_a_docker_engine_and_say_why() {
    Choice c = BackendSelection.select(null, () -> NO_ENGINE);

    assertThat(c.backend()).isEqualTo(Backend.LAUNCHER);
    assertThat(c.describe()).isEqualTo("[idgen-testing] Cassandra for integration tests: launcher"
        + " (no Docker engine: DOCKER_HOST unset, /var/run/docker.sock absent)");
  }

  @Test
  void should_follow_the_override_without_asking_docker() {
    AtomicInteger probes = new AtomicInteger();
    Supplier<DockerStatus> probe = () -> {
      probes.incrementAndGet();
      return ENGINE;
    };

    assertThat(BackendSelection.select("launcher", probe).backend()).isEqualTo(Backend.LAUNCHER);
    assertThat(BackendSelection.select(" External ", probe).backend()).isEqualTo(Backend.EXTERNAL);
    assertThat(BackendSelection.select("TESTCONTAINERS", () -> NO_ENGINE).backend()).isEqualTo(Backend.TESTCONTAINERS);
    assertThat(BackendSelection.select("launcher", probe).reason()).isEqualTo("chosen with idgen.it.cassandra=launcher");
    assertThat(probes).hasValue(0);
  }

  @Test
  void should_treat_a_blank_override_as_none() {
    assertThat(BackendSelection.select("  ", () -> NO_ENGINE).backend()).isEqualTo(Backend.LAUNCHER);
    assertThat(BackendSelection.select("", () -> ENGINE).backend()).isEqualTo(Backend.TESTCONTAINERS);
  }

  @Test
  void should_refuse_an_unknown_override_rather_than_guess() {
    assertThatThrownBy(() -> BackendSelection.select("docker", () -> ENGINE))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("idgen.it.cassandra='docker': expected launcher, testcontainers or external");
  }

  @Test
  void should_take_the_override_from_the_system_property_before_the_environment() {
    Map<String, String> props = Map.of("idgen.it.cassandra", "external");
    Map<String, String> env = Map.of("IDGEN_IT_CASSANDRA", "launcher");

    assertThat(BackendSelection.override(props::get, env::get)).isEqualTo("external");
    assertThat(BackendSelection.override(Map.of("idgen.it.cassandra", " ")::get, env::get)).isEqualTo("launcher");
    assertThat(BackendSelection.override(Map.<String, String>of()::get, Map.<String, String>of()::get)).isNull();
  }

  @Test
  void should_name_every_backend_by_its_id() {
    for (Backend b : Backend.values()) {
      assertThat(Backend.fromId(b.id())).isEqualTo(b);
    }
  }
}
