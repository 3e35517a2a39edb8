package dev.idgen.server.access;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdGenClientBuilder;
import dev.idgen.client.IdGenClientException;
import dev.idgen.server.TestServer;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client stub's bearer tokens against a server with access rules on (in-process, which counts as a
 * secure transport): the token reaches the access interceptor, and a rotated token file works on both
 * sides without a restart.
 */
class ClientTokenTest {
  private static final String OLD = "orders-token-old-0123456789";
  private static final String NEW = "orders-token-new-9876543210";
  private static final String OPS = "ops-token-0123456789abcdef";

  @TempDir
  Path dir;

  private Path serverFile;
  private TestServer server;

  @BeforeEach
  void start() throws IOException {
    serverFile = Files.writeString(dir.resolve("server-orders-token"), OLD);
    server = TestServer.start(Map.of(
        "idgen.access.enabled", true,
        "idgen.access.tokens", List.of(
            Map.of("identity", "orders-service", "token-file", serverFile.toString()),
            Map.of("identity", "ops", "token", OPS)),
        "idgen.access.rules", List.of(
            Map.of("identity", "orders-service", "allocate", List.of("orders*"), "admin", List.of()),
            Map.of("identity", "ops", "allocate", List.of("*"), "admin", List.of("*")))));
    for (String name : List.of("orders", "orders-2", "billing")) {
      server.admin().withInterceptors(TestServer.bearer(OPS))
          .createSequence(CreateSequenceRequest.newBuilder().setName(name).build());
    }
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private IdGenClientBuilder builder() {
    return IdGenClient.builder().channel(server.channel).minLeaseSize(5).maxLeaseSize(5)
        .waitDeadline(Duration.ofSeconds(5));
  }

  @Test
  void should_be_let_in_with_its_token_and_refused_without_one_or_beyond_its_rules() {
    try (IdGenClient withToken = builder().bearerToken(OLD).build();
        IdGenClient without = builder().build()) {
      assertThat(withToken.sequence("orders").next(12)).hasSize(12).doesNotHaveDuplicates();

      IdGenClientException anonymous = catchThrowableOfType(IdGenClientException.class,
          () -> without.sequence("orders").next());
      assertThat(anonymous.status().orElseThrow().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
      IdGenClientException denied = catchThrowableOfType(IdGenClientException.class,
          () -> withToken.sequence("billing").next());
      assertThat(denied.status().orElseThrow().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    }
  }

  @Test
  void should_use_the_rotated_token_file_once_both_sides_read_it() throws IOException {
    Path clientFile = Files.writeString(dir.resolve("client-orders-token"), OLD + "\n");
    try (IdGenClient client = builder().bearerTokenFile(clientFile).build()) {
      assertThat(client.sequence("orders").next(3)).hasSize(3);

      // The secret is rotated: the server's copy and the client's (a mounted secret each), then the
      // server's reload, which it runs every idgen.access.token-refresh-interval.
      Files.writeString(serverFile, NEW);
      Path staged = Files.writeString(dir.resolve("client-orders-token.new"), NEW + "\n");
      Files.move(staged, clientFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      server.injector.getInstance(BearerTokens.class).check();

      assertThat(client.sequence("orders-2").next(12)).as("a new source: every call with the new token")
          .hasSize(12);
      try (IdGenClient stale = builder().bearerToken(OLD).build()) {
        IdGenClientException refused = catchThrowableOfType(IdGenClientException.class,
            () -> stale.sequence("orders").next());
        assertThat(refused.status().orElseThrow().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
      }
    }
  }
}
