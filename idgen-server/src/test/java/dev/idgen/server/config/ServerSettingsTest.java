package dev.idgen.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ServerSettingsTest {

  @TempDir
  Path dir;

  @Test
  void should_read_the_defaults_from_reference_conf() {
    ServerSettings settings = ServerSettings.from(load(Optional.empty(), Map.of(), new Properties()));

    assertThat(settings.grpcPort()).isEqualTo(7070);
    assertThat(settings.grpcHost()).isEqualTo("0.0.0.0");
    assertThat(settings.store()).isEqualTo(ServerSettings.StoreKind.EMBEDDED);
    assertThat(settings.embeddedDir()).isEqualTo(Path.of("data").toAbsolutePath());
    assertThat(settings.maxIdsPerCall()).isEqualTo(1_000_000);
    assertThat(settings.outageRunway()).isEqualTo(Duration.ofMinutes(5));
    assertThat(settings.minNodeBlock()).isEqualTo(100);
    assertThat(settings.refillStep()).isEqualTo(0.25);
    assertThat(settings.maxWait()).isEqualTo(Duration.ofSeconds(5));
    assertThat(settings.quietPeriod()).isEqualTo(Duration.ofSeconds(1));
    assertThat(settings.shutdownTimeout()).isEqualTo(Duration.ofSeconds(20));
    assertThat(settings.giveBackDeadline()).isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void should_let_the_environment_override_the_file_and_system_properties_override_both() throws IOException {
    Path file = write("idgen.grpc.port = 7171\nidgen.grpc.host = \"127.0.0.1\"\nidgen.store = embedded\n");
    Properties systemProperties = new Properties();
    systemProperties.setProperty("idgen.grpc.host", "::1");

    ServerSettings settings = ServerSettings.from(load(Optional.of(file),
        Map.of("IDGEN_GRPC_PORT", "9090", "IDGEN_GRPC_HOST", "10.0.0.1", "PATH", "/bin"), systemProperties));

    assertThat(settings.grpcPort()).isEqualTo(9090);
    assertThat(settings.grpcHost()).isEqualTo("::1");
  }

  @Test
  void should_map_every_environment_variable_to_a_documented_key() {
    Map<String, String> environment = Map.of(
        "IDGEN_GRPC_PORT", "1", "IDGEN_GRPC_HOST", "h", "IDGEN_STORE", "cassandra",
        "IDGEN_EMBEDDED_DIR", "/d", "IDGEN_MAX_IDS_PER_CALL", "7", "IDGEN_ALLOCATOR_MAX_WAIT", "1ms",
        "IDGEN_SERVER_NAME", "idgen-0:7070", "IDGEN_GRPC_ADVERTISE_ADDRESS", "10.2.3.4",
        "IDGEN_STRICT_OWNER_LEASE", "4s", "IDGEN_STRICT_FORWARDED_IN_FLIGHT", "3");

    ServerSettings settings = ServerSettings.from(load(Optional.empty(), environment, new Properties()));

    assertThat(settings).isEqualTo(new ServerSettings("h", 1, ServerSettings.StoreKind.CASSANDRA, Path.of("/d"),
        7, Duration.ofMinutes(5), 100, 0.25, Duration.ofMillis(1), Duration.ofSeconds(1),
        Duration.ofSeconds(20), Duration.ofSeconds(3), "idgen-0:7070", Duration.ofMinutes(10), Duration.ofSeconds(10),
        Duration.ofSeconds(10), 1000, Duration.ofHours(1), "10.2.3.4", Duration.ofSeconds(4),
        0.1, 3));
  }

  @Test
  void should_advertise_the_configured_address_or_the_bound_one() {
    ServerSettings bound = new ServerSettings("10.0.0.5", 7070, ServerSettings.StoreKind.CASSANDRA, Path.of("/d"),
        7, Duration.ofMinutes(5), 100, 0.25, Duration.ofMillis(1), Duration.ofSeconds(1), Duration.ofSeconds(20), Duration.ofSeconds(3),
        "", Duration.ofMinutes(10), Duration.ofSeconds(10), Duration.ofSeconds(10), 1000, Duration.ofHours(1), "",
        Duration.ofSeconds(10), 0.1, 2);
    assertThat(bound.effectiveAdvertiseAddress(7071)).isEqualTo("10.0.0.5:7071");
    ServerSettings named = new ServerSettings("0.0.0.0", 7070, ServerSettings.StoreKind.CASSANDRA, Path.of("/d"),
        7, Duration.ofMinutes(5), 100, 0.25, Duration.ofMillis(1), Duration.ofSeconds(1), Duration.ofSeconds(20), Duration.ofSeconds(3),
        "", Duration.ofMinutes(10), Duration.ofSeconds(10), Duration.ofSeconds(10), 1000, Duration.ofHours(1),
        "idgen-2.idgen", Duration.ofSeconds(10), 0.1, 2);
    assertThat(named.effectiveAdvertiseAddress(7070)).isEqualTo("idgen-2.idgen:7070");
    ServerSettings withPort = new ServerSettings("0.0.0.0", 7070, ServerSettings.StoreKind.CASSANDRA,
        Path.of("/d"), 7, Duration.ofMinutes(5), 100, 0.25, Duration.ofMillis(1), Duration.ofSeconds(1),
        Duration.ofSeconds(20), Duration.ofSeconds(3), "", Duration.ofMinutes(10), Duration.ofSeconds(10), Duration.ofSeconds(10), 1000,
        Duration.ofHours(1), "10.1.2.3:9000", Duration.ofSeconds(10), 0.1, 2);
    assertThat(withPort.effectiveAdvertiseAddress(7070)).isEqualTo("10.1.2.3:9000");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "idgen.grpc.port = 70000                  | idgen.grpc.port",
      "idgen.grpc.port = -1                     | idgen.grpc.port",
      "idgen.grpc.port = seven                  | idgen.grpc.port",
      "idgen.grpc.host = \"\"                   | idgen.grpc.host",
      "idgen.store = mysql                      | idgen.store",
      "idgen.embedded.dir = \" \"               | idgen.embedded.dir",
      "idgen.limits.max-ids-per-call = 0        | idgen.limits.max-ids-per-call",
      "idgen.allocator.outage-runway = 0s       | idgen.allocator.outage-runway",
      "idgen.allocator.min-node-block = 0       | idgen.allocator.min-node-block",
      "idgen.allocator.refill-step = 4.5        | idgen.allocator.refill-step",
      "idgen.allocator.refill-step = 0          | idgen.allocator.refill-step",
      "idgen.allocator.max-wait = soon          | idgen.allocator.max-wait",
      "idgen.allocator.max-wait = -1s           | idgen.allocator.max-wait",
      "idgen.shutdown.quiet-period = -5s        | idgen.shutdown.quiet-period",
      "idgen.shutdown.timeout = forever         | idgen.shutdown.timeout",
      "idgen.shutdown.timeout = 1000000d        | idgen.shutdown.timeout",
      "idgen.allocator.outage-runway = 2d       | idgen.allocator.outage-runway",
      "idgen.grpc.prot = 7070                   | idgen.grpc.prot",
      "idgen.strict.forwarded-in-flight = 0     | idgen.strict.forwarded-in-flight",
  })
  void should_fail_at_start_with_a_message_naming_the_key(String line, String key) throws IOException {
    Path file = write(line + "\n");

    assertThatThrownBy(() -> ServerSettings.from(load(Optional.of(file), Map.of(), new Properties())))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(key)
        .hasMessageContaining(file.toString());
  }

  @Test
  void should_fail_when_the_config_file_does_not_exist() {
    Path missing = dir.resolve("missing.conf");

    assertThatThrownBy(() -> load(Optional.of(missing), Map.of(), new Properties()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(missing.toString());
  }

  @Test
  void should_format_durations_as_they_are_written_in_configuration() {
    assertThat(ServerSettings.format(Duration.ofSeconds(1))).isEqualTo("1s");
    assertThat(ServerSettings.format(Duration.ofMillis(250))).isEqualTo("250ms");
    assertThat(ServerSettings.format(Duration.ZERO)).isEqualTo("0s");
    assertThat(ServerSettings.format(Duration.ofDays(1))).isEqualTo("1d");
  }

  private static Config load(Optional<Path> file, Map<String, String> environment, Properties properties) {
    return ConfigLoader.load(file, environment, properties);
  }

  private Path write(String content) throws IOException {
    Path file = Files.createTempFile(dir, "idgen", ".conf");
    Files.writeString(file, content);
    return file;
  }
}
