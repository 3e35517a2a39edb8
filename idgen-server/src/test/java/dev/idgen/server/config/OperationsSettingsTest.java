package dev.idgen.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OperationsSettingsTest {

  @TempDir
  Path dir;

  private static Config config(Map<String, Object> values) {
    return ConfigFactory.parseMap(values).withFallback(ConfigFactory.defaultReference()).resolve();
  }

  @Test
  void should_default_to_metrics_on_9090_tls_off_and_access_off() {
    OperationsSettings s = OperationsSettings.from(config(Map.of()), Map.of());

    assertThat(s.metrics().enabled()).isTrue();
    assertThat(s.metrics().port()).isEqualTo(9090);
    assertThat(s.tls().enabled()).isFalse();
    assertThat(s.access().enabled()).isFalse();
    assertThat(s.alarms().headroomWarnings()).containsExactly(0.20, 0.10, 0.05);
    assertThat(s.limits().maxCallDuration()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void should_bound_per_sequence_series_to_1000_by_default_and_accept_0() {
    assertThat(OperationsSettings.from(config(Map.of()), Map.of()).metrics().maxSequenceSeries()).isEqualTo(1000);
    assertThat(OperationsSettings.from(config(Map.of("idgen.metrics.max-sequence-series", 0)), Map.of()).metrics()
        .maxSequenceSeries()).isZero();
  }

  @Test
  void should_read_quiet_sequences_every_30_minutes_by_default_and_accept_0_for_as_often_as_the_budget_allows() {
    assertThat(OperationsSettings.from(config(Map.of()), Map.of()).metrics().quietStoreReadInterval())
        .isEqualTo(Duration.ofMinutes(30));
    assertThat(OperationsSettings.from(config(Map.of("idgen.metrics.quiet-store-read-interval", "0s")), Map.of())
        .metrics().quietStoreReadInterval()).isZero();
    assertThatThrownBy(() -> OperationsSettings.from(config(Map.of("idgen.metrics.quiet-store-read-interval",
        "100ms")), Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("idgen.metrics.quiet-store-read-interval");
  }

  @Test
  void should_refuse_a_negative_sequence_series_bound_naming_the_key() {
    Config c = config(Map.of("idgen.metrics.max-sequence-series", -1));

    assertThatThrownBy(() -> OperationsSettings.from(c, Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("idgen.metrics.max-sequence-series")
        .hasMessageContaining("got -1");
  }

  @Test
  void should_read_tokens_inline_from_a_file_and_from_the_environment_as_digests() throws Exception {
    Path file = Files.writeString(dir.resolve("token"), "file-token-0123456789\n");
    OperationsSettings s = OperationsSettings.from(config(Map.of("idgen.access.tokens", List.of(
        Map.of("identity", "a", "token", "inline-token-0123456789"),
        Map.of("identity", "b", "token-file", file.toString()),
        Map.of("identity", "c", "token-env", "C_TOKEN")))), Map.of("C_TOKEN", "env-token-0123456789"));

    assertThat(s.access().tokenDigests()).containsOnly(
        Map.entry(OperationsSettings.sha256("inline-token-0123456789"), "a"),
        Map.entry(OperationsSettings.sha256("file-token-0123456789"), "b"),
        Map.entry(OperationsSettings.sha256("env-token-0123456789"), "c"));
  }

  @Test
  void should_refuse_a_token_variable_that_is_not_set() {
    Config c = config(Map.of("idgen.access.tokens", List.of(Map.of("identity", "c", "token-env", "MISSING"))));

    assertThatThrownBy(() -> OperationsSettings.from(c, Map.of()))
        .isInstanceOf(ConfigException.class).hasMessageContaining("MISSING").hasMessageContaining("idgen.access.tokens");
  }

  @Test
  void should_refuse_short_or_shared_tokens() {
    assertThatThrownBy(() -> OperationsSettings.from(config(Map.of("idgen.access.tokens",
        List.of(Map.of("identity", "a", "token", "short")))), Map.of()))
        .hasMessageContaining("at least 16");
    assertThatThrownBy(() -> OperationsSettings.from(config(Map.of("idgen.access.tokens", List.of(
        Map.of("identity", "a", "token", "same-token-0123456789"),
        Map.of("identity", "b", "token", "same-token-0123456789")))), Map.of()))
        .hasMessageContaining("distinct");
  }

  @Test
  void should_require_certificate_files_when_tls_is_on() {
    assertThatThrownBy(() -> OperationsSettings.from(config(Map.of("idgen.grpc.tls.enabled", true)), Map.of()))
        .isInstanceOf(ConfigException.class).hasMessageContaining("idgen.grpc.tls.cert-chain");
  }

  @Test
  void should_refuse_client_certificates_without_tls() {
    assertThatThrownBy(() -> OperationsSettings.from(config(Map.of("idgen.grpc.tls.client-auth", "require")),
        Map.of()))
        .hasMessageContaining("idgen.grpc.tls.client-auth");
  }

  @Test
  void should_refuse_an_unknown_key_in_a_rule() {
    assertThatThrownBy(() -> OperationsSettings.from(config(Map.of("idgen.access.rules", List.of(
        Map.of("identity", "a", "alocate", List.of("*"))))), Map.of()))
        .hasMessageContaining("alocate");
  }

  @Test
  void should_accept_every_new_key_through_the_loader_and_the_environment() {
    Config c = ConfigLoader.load(Optional.empty(),
        Map.of("IDGEN_METRICS_PORT", "9191", "IDGEN_ACCESS_ENABLED", "true"), new Properties());

    OperationsSettings s = OperationsSettings.from(c, Map.of());

    assertThat(s.metrics().port()).isEqualTo(9191);
    assertThat(s.access().enabled()).isTrue();
  }
}
