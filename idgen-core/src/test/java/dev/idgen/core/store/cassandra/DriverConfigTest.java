package dev.idgen.core.store.cassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.config.DriverExecutionProfile;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The {@code datastax-java-driver} block: passed to the driver as it is, except where it would contradict what
 * idgen pins or sets from its own keys; what the driver then reads is checked in its default profile.
 */
@Execution(ExecutionMode.CONCURRENT) // shares nothing static; beside the classes that wait on real time
class DriverConfigTest {

  private static final CassandraSettings BASE =
      CassandraSettings.local(List.of("127.0.0.1:9042"), "dc1", "idgen", Map.of("dc1", 1));

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "advanced.protocol.version = V5                                                | V4",
      "basic.request.consistency = ONE                                               | LOCAL_QUORUM",
      "basic.request.serial-consistency = SERIAL                                     | LOCAL_SERIAL",
      "basic.request.default-idempotence = true                                      | false",
      "advanced.retry-policy.class = com.example.RetryEverything                     | DefaultRetryPolicy",
      "advanced.load-balancing-policy.dc-failover.allow-for-local-consistency-levels = true | false"})
  void should_refuse_a_block_that_contradicts_a_pinned_option_naming_the_key(String block, String pinned) {
    String key = block.substring(0, block.indexOf('=')).trim();

    assertThatThrownBy(() -> BASE.withDriverConfig(block))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("datastax-java-driver." + key + " = ")
        .hasMessageContaining("idgen pins it to " + pinned + ", because");
  }

  @Test
  void should_accept_a_block_that_restates_a_pinned_option() {
    CassandraSettings s = BASE.withDriverConfig("""
        advanced.protocol.version = V4
        advanced.retry-policy.class = com.datastax.oss.driver.internal.core.retry.DefaultRetryPolicy
        basic.request.default-idempotence = false
        """);

    assertThat(profile(s).getString(DefaultDriverOption.PROTOCOL_VERSION)).isEqualTo("V4");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "basic.request.timeout = 1 second                          | idgen.cassandra.request-timeout",
      "basic.contact-points = [\"10.0.0.1:9042\"]                | idgen.cassandra.contact-points",
      "basic.load-balancing-policy.local-datacenter = dc2        | idgen.cassandra.local-datacenter",
      "advanced.auth-provider.username = cassandra               | idgen.cassandra.username",
      "advanced.ssl-engine-factory.hostname-validation = false   | idgen.cassandra.tls.hostname-validation",
      "advanced.ssl-engine-factory.truststore-path = /tmp/t.p12  | idgen.cassandra.tls.truststore",
      "advanced.ssl-engine-factory.keystore-path = /tmp/k.p12    | idgen.cassandra.tls.keystore"})
  void should_refuse_an_option_that_an_idgen_setting_sets_naming_both(String block, String idgenKey) {
    String key = block.substring(0, block.indexOf('=')).trim();

    assertThatThrownBy(() -> BASE.withDriverConfig(block))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("datastax-java-driver." + key + " is set by " + idgenKey
            + " (set it there, and remove it from the block)");
  }

  @Test
  void should_refuse_a_key_that_is_no_driver_option() {
    assertThatThrownBy(() -> BASE.withDriverConfig("advanced.connection.pool.locale.size = 2"))
        .hasMessageStartingWith("datastax-java-driver.advanced.connection.pool.locale.size: no such driver option");
  }

  @Test
  void should_refuse_execution_profiles_which_idgen_never_uses() {
    assertThatThrownBy(() -> BASE.withDriverConfig("profiles.slow.basic.request.consistency = ONE"))
        .hasMessageStartingWith("datastax-java-driver.profiles: idgen runs every statement in the default profile");
  }

  @Test
  void should_refuse_a_block_that_is_not_hocon() {
    assertThatThrownBy(() -> BASE.withDriverConfig("advanced.connection { pool"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("datastax-java-driver: ");
  }

  @Test
  void should_pass_a_harmless_block_to_the_driver_as_it_is_under_the_pinned_options() {
    CassandraSettings s = BASE.withDriverConfig("""
        advanced.connection.pool.local.size = 3
        advanced.connection.pool.remote.size = 2
        advanced.heartbeat.interval = 10 seconds
        advanced.address-translator.subnet-addresses { "100.64.0.0/15" = "cassandra.example:9042" }
        """);

    DriverExecutionProfile p = profile(s);

    assertThat(p.getInt(DefaultDriverOption.CONNECTION_POOL_LOCAL_SIZE)).isEqualTo(3);
    assertThat(p.getInt(DefaultDriverOption.CONNECTION_POOL_REMOTE_SIZE)).isEqualTo(2);
    assertThat(p.getDuration(DefaultDriverOption.HEARTBEAT_INTERVAL)).isEqualTo(Duration.ofSeconds(10));
    // What idgen pins and sets, beside them.
    assertThat(p.getString(DefaultDriverOption.PROTOCOL_VERSION)).isEqualTo("V4");
    assertThat(p.getString(DefaultDriverOption.REQUEST_CONSISTENCY)).isEqualTo("LOCAL_QUORUM");
    assertThat(p.getString(DefaultDriverOption.REQUEST_SERIAL_CONSISTENCY)).isEqualTo("LOCAL_SERIAL");
    assertThat(p.getBoolean(DefaultDriverOption.REQUEST_DEFAULT_IDEMPOTENCE)).isFalse();
    assertThat(p.getString(DefaultDriverOption.RETRY_POLICY_CLASS)).isEqualTo("DefaultRetryPolicy");
    assertThat(p.getDuration(DefaultDriverOption.REQUEST_TIMEOUT)).isEqualTo(BASE.requestTimeout());
    // idgen's defaults, and the driver's own below them.
    assertThat(p.getBoolean(DefaultDriverOption.RECONNECT_ON_INIT)).isTrue();
    assertThat(p.getInt(DefaultDriverOption.LOAD_BALANCING_DC_FAILOVER_MAX_NODES_PER_REMOTE_DC)).isEqualTo(3);
    assertThat(p.getString(DefaultDriverOption.TIMESTAMP_GENERATOR_CLASS)).isEqualTo("AtomicTimestampGenerator");
    assertThat(p.isDefined(DefaultDriverOption.SSL_ENGINE_FACTORY_CLASS)).isFalse();
  }

  @Test
  void should_let_the_block_change_idgens_defaults() {
    CassandraSettings s = BASE.withDriverConfig("""
        advanced.reconnect-on-init = false
        advanced.reconnection-policy.max-delay = 30 seconds
        """);

    DriverExecutionProfile p = profile(s);

    assertThat(p.getBoolean(DefaultDriverOption.RECONNECT_ON_INIT)).isFalse();
    assertThat(p.getDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY)).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void should_build_tls_with_the_drivers_own_engine_factory_validating_host_names() {
    CassandraSettings s = BASE.withTls(new CassandraSettings.Tls(true, Optional.of(Path.of("/etc/idgen/trust.p12")),
        Optional.of("trust-secret"), Optional.of(Path.of("/etc/idgen/client.p12")), Optional.of("key-secret"), true))
        .withDriverConfig("advanced.ssl-engine-factory.cipher-suites = [\"TLS_AES_128_GCM_SHA256\"]");

    DriverExecutionProfile p = profile(s);

    assertThat(p.getString(DefaultDriverOption.SSL_ENGINE_FACTORY_CLASS)).isEqualTo("DefaultSslEngineFactory");
    assertThat(p.getBoolean(DefaultDriverOption.SSL_HOSTNAME_VALIDATION)).isTrue();
    assertThat(p.getString(DefaultDriverOption.SSL_TRUSTSTORE_PATH)).isEqualTo("/etc/idgen/trust.p12");
    assertThat(p.getString(DefaultDriverOption.SSL_TRUSTSTORE_PASSWORD)).isEqualTo("trust-secret");
    assertThat(p.getString(DefaultDriverOption.SSL_KEYSTORE_PATH)).isEqualTo("/etc/idgen/client.p12");
    assertThat(p.getString(DefaultDriverOption.SSL_KEYSTORE_PASSWORD)).isEqualTo("key-secret");
    assertThat(p.getStringList(DefaultDriverOption.SSL_CIPHER_SUITES)).containsExactly("TLS_AES_128_GCM_SHA256");
  }

  @Test
  void should_authenticate_with_the_plain_text_provider_when_credentials_are_set() {
    CassandraSettings s = new CassandraSettings(BASE.contactPoints(), "dc1", "idgen", false, Map.of(),
        Optional.of("idgen"), Optional.of("secret"), CassandraSettings.Tls.OFF, BASE.requestTimeout(),
        BASE.casDeadline(), BASE.poolRefillStep(), BASE.floorRefresh(), BASE.isolationRunway(), "");

    DriverExecutionProfile p = profile(s);

    assertThat(p.getString(DefaultDriverOption.AUTH_PROVIDER_CLASS)).isEqualTo("PlainTextAuthProvider");
    assertThat(p.getString(DefaultDriverOption.AUTH_PROVIDER_USER_NAME)).isEqualTo("idgen");
    assertThat(p.getString(DefaultDriverOption.AUTH_PROVIDER_PASSWORD)).isEqualTo("secret");
  }

  private static DriverExecutionProfile profile(CassandraSettings s) {
    try (DriverConfigLoader loader = DriverConfig.loader(s, false)) {
      return loader.getInitialConfig().getDefaultProfile();
    }
  }
}
