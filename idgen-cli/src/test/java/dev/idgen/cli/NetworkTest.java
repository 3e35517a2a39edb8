package dev.idgen.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.cli.CliRunner.Result;
import dev.idgen.server.EmbeddedDaemon;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The production channel (Netty, plaintext) against the daemon on a loopback port. */
class NetworkTest {

  @TempDir
  Path dataDir;

  @Test
  void should_create_and_allocate_over_a_real_connection() {
    try (EmbeddedDaemon daemon = EmbeddedDaemon.onLoopback(dataDir, 0)) {
      String target = "127.0.0.1:" + daemon.port();
      CliRunner cli = CliRunner.network();

      Result created = cli.run("--target", target, "--plaintext", "create", "orders", "--start", "10");
      Result allocated = cli.run("allocate", "orders", "-n", "3", "--target", target, "--plaintext");

      assertThat(created.exitCode()).isZero();
      assertThat(allocated.exitCode()).isZero();
      assertThat(allocated.out().lines()).containsExactly("10", "11", "12");
    }
  }

  @Test
  void should_exit_with_unavailable_when_no_server_listens() throws IOException {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }

    Result result = CliRunner.network()
        .run("get", "orders", "--plaintext", "--target", "127.0.0.1:" + port, "--deadline", "5s");

    assertThat(result.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE).isEqualTo(24);
    assertThat(result.err()).startsWith("idgen: UNAVAILABLE");
  }
}
