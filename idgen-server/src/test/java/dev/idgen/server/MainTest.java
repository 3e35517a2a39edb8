package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.idgen.server.config.ServerSettings;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The command line, up to the point where a server would start. */
class MainTest {

  @TempDir
  Path dir;

  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  @Test
  void should_reject_bad_cassandra_settings_naming_the_key() throws IOException {
    Path file = Files.writeString(dir.resolve("c.conf"),
        "idgen.store = cassandra\nidgen.cassandra.contact-points = [\"no-port\"]\n");

    int code = run("--config", file.toString());

    assertThat(code).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("idgen.cassandra.contact-points").contains("host:port");
  }

  @Test
  void should_accept_a_replication_map_of_any_datacenter_names_but_check_its_values() throws IOException {
    Path file = Files.writeString(dir.resolve("r.conf"), "idgen.store = cassandra\n"
        + "idgen.cassandra.create-schema = true\nidgen.cassandra.replication { eu-west = 3, us-east = 0 }\n");

    int code = run("--config", file.toString());

    assertThat(code).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("idgen.cassandra.replication.us-east").doesNotContain("unknown setting");
  }

  @Test
  void should_stop_with_exit_code_1_when_cassandra_is_unreachable_and_the_driver_may_not_wait() throws IOException {
    // Port 1 on loopback: nothing listens, the connection is refused at once. By default the server would
    // wait for Cassandra (NOT_SERVING); reconnect-on-init = false makes the first failure final.
    Path file = Files.writeString(dir.resolve("u.conf"), """
        idgen.store = cassandra
        idgen.cassandra.contact-points = ["127.0.0.1:1"]
        idgen.grpc { host = "127.0.0.1", port = 0 }
        idgen.metrics { host = "127.0.0.1", port = 0 }
        idgen.http.port = 0
        idgen.shutdown.quiet-period = 0s
        datastax-java-driver.advanced.reconnect-on-init = false
        """);

    int code = run("--config", file.toString());

    assertThat(code).isEqualTo(Main.EXIT_START_FAILED);
  }

  @Test
  void should_refuse_a_driver_block_that_contradicts_what_idgen_pins_naming_the_key() throws IOException {
    Path file = Files.writeString(dir.resolve("v5.conf"), """
        idgen.store = cassandra
        datastax-java-driver {
          advanced.connection.pool.local.size = 2
          advanced.protocol.version = V5
        }
        """);

    int code = run("--config", file.toString());

    assertThat(code).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("datastax-java-driver.advanced.protocol.version = V5")
        .contains("idgen pins it to V4");
  }

  @Test
  void should_refuse_a_driver_option_that_an_idgen_key_sets_naming_both() throws IOException {
    Path file = Files.writeString(dir.resolve("t.conf"), """
        idgen.store = cassandra
        datastax-java-driver.basic.request.timeout = 1 second
        """);

    int code = run("--config", file.toString());

    assertThat(code).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("datastax-java-driver.basic.request.timeout is set by"
        + " idgen.cassandra.request-timeout");
  }

  @Test
  void should_pass_the_driver_block_of_the_config_file_on_as_written_without_the_drivers_defaults()
      throws IOException {
    Path file = Files.writeString(dir.resolve("pool.conf"), """
        idgen.store = cassandra
        datastax-java-driver {
          advanced.connection.pool.local.size = 2
          advanced.reconnection-policy.max-delay = 30 seconds
        }
        """);
    Main main = new Main();
    new CommandLine(main).parseArgs("--config", file.toString());

    String block = CassandraStoreModule.settings(main.loadConfig()).driverConfig();

    Config driver = ConfigFactory.parseString(block);
    assertThat(driver.getInt("advanced.connection.pool.local.size")).isEqualTo(2);
    assertThat(driver.getDuration("advanced.reconnection-policy.max-delay")).isEqualTo(Duration.ofSeconds(30));
    // Only what the file set: the driver's reference.conf (consistency LOCAL_ONE…) stays the driver's.
    assertThat(driver.entrySet()).hasSize(2);
  }

  @Test
  void should_refuse_an_unreadable_cassandra_truststore_naming_the_key() throws IOException {
    Path file = Files.writeString(dir.resolve("tls.conf"), """
        idgen.store = cassandra
        idgen.cassandra.tls { enabled = true, truststore = "/nonexistent/truststore.p12" }
        """);

    int code = run("--config", file.toString());

    assertThat(code).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("idgen.cassandra.tls.truststore").contains("/nonexistent/truststore.p12");
  }

  @Test
  void should_exit_with_a_usage_error_naming_the_key_of_a_bad_setting() throws IOException {
    Path file = Files.writeString(dir.resolve("bad.conf"), "idgen.shutdown.timeout = forever\n");

    int code = run("--config", file.toString());

    assertThat(code).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("idgen.shutdown.timeout").contains("bad.conf");
  }

  @Test
  void should_let_a_config_file_given_with_the_config_option_override_the_defaults() throws IOException {
    Path file = Files.writeString(dir.resolve("o.conf"), """
        idgen {
          grpc.port = 7171
          embedded.dir = "/var/lib/idgen"
          allocator.max-wait = 250ms
        }
        """);
    Main main = new Main();
    new CommandLine(main).parseArgs("--config", file.toString());

    ServerSettings settings = ServerSettings.from(main.loadConfig());

    assertThat(settings.grpcPort()).isEqualTo(7171);
    assertThat(settings.embeddedDir()).isEqualTo(Path.of("/var/lib/idgen"));
    assertThat(settings.maxWait()).isEqualTo(Duration.ofMillis(250));
    assertThat(settings.shutdownTimeout()).isEqualTo(Duration.ofSeconds(20)); // not in the file: default
  }

  @Test
  void should_print_the_version() {
    int code = run("--version");

    assertThat(code).isZero();
    assertThat(out.toString()).startsWith("idgen-server ").doesNotContain("${");
  }

  @Test
  void should_print_usage_with_the_config_option() {
    int code = run("--help");

    assertThat(code).isZero();
    assertThat(out.toString()).contains("--config=FILE").contains("reference.conf");
  }

  @Test
  void should_reject_an_unknown_option() {
    assertThat(run("--port", "1")).isEqualTo(Main.EXIT_USAGE);
    assertThat(err.toString()).contains("--port");
  }

  private int run(String... args) {
    return new CommandLine(new Main())
        .setOut(new PrintWriter(out, true))
        .setErr(new PrintWriter(err, true))
        .execute(args);
  }
}
