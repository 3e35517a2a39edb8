package dev.idgen.server.access;

import static dev.idgen.server.TestServer.count;
import static dev.idgen.server.TestServer.failure;
import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.server.TestServer;
import dev.idgen.server.config.OperationsSettings;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Token files are read again when they change: a rotated secret works without a restart, the old one stops. */
class BearerTokensTest {
  private static final String OLD = "orders-token-old-0123456789";
  private static final String NEW = "orders-token-new-9876543210";
  private static final String OPS = "ops-token-0123456789abcdef";

  @TempDir
  Path dir;

  private TestServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private Map<String, Object> accessWithFile(Path file) {
    return Map.of(
        "idgen.access.enabled", true,
        "idgen.access.tokens", List.of(
            Map.of("identity", "orders-service", "token-file", file.toString()),
            Map.of("identity", "ops", "token", OPS)),
        "idgen.access.rules", List.of(
            Map.of("identity", "orders-service", "allocate", List.of("orders"), "admin", List.of()),
            Map.of("identity", "ops", "allocate", List.of("*"), "admin", List.of("*"))));
  }

  private BearerTokens tokens(Path file) {
    return new BearerTokens(OperationsSettings.from(ConfigFactory.parseMap(accessWithFile(file))
        .withFallback(ConfigFactory.defaultReference()).resolve(), Map.of()).access());
  }

  @Test
  void should_replace_a_rotated_token_file_and_refuse_the_old_token() throws IOException {
    Path file = Files.writeString(dir.resolve("orders-token"), OLD + "\n");
    BearerTokens tokens = tokens(file);
    assertThat(tokens.identity(OLD)).isEqualTo("orders-service");
    assertThat(tokens.check()).as("nothing changed").isZero();

    Files.writeString(file, NEW);

    assertThat(tokens.check()).isEqualTo(1);
    assertThat(tokens.identity(NEW)).isEqualTo("orders-service");
    assertThat(tokens.identity(OLD)).isNull();
    assertThat(tokens.identity(OPS)).as("inline tokens stay").isEqualTo("ops");
  }

  @Test
  void should_keep_the_previous_token_when_the_new_file_cannot_be_used() throws IOException {
    Path file = Files.writeString(dir.resolve("orders-token"), OLD);
    BearerTokens tokens = tokens(file);

    Files.writeString(file, "short");
    assertThat(tokens.check()).isZero();
    Files.writeString(file, OPS); // another identity's token
    assertThat(tokens.check()).isZero();
    Files.delete(file);
    assertThat(tokens.check()).isZero();

    assertThat(tokens.identity(OLD)).isEqualTo("orders-service");
    assertThat(tokens.identity(OPS)).isEqualTo("ops");
  }

  @Test
  void should_authenticate_with_the_rotated_token_on_a_running_server() throws IOException {
    Path file = Files.writeString(dir.resolve("orders-token"), OLD);
    server = TestServer.start(accessWithFile(file));
    server.admin().withInterceptors(TestServer.bearer(OPS)).createSequence(
        dev.idgen.api.v1.CreateSequenceRequest.newBuilder().setName("orders").build());
    assertThat(count(allocate(OLD, "orders", 2))).isEqualTo(2);

    Files.writeString(file, NEW);
    server.injector.getInstance(BearerTokens.class).check(); // what the reload thread does every minute

    StatusRuntimeException old = failure(() -> allocate(OLD, "orders", 1));
    assertThat(old.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(count(allocate(NEW, "orders", 3))).isEqualTo(3);
  }

  private List<IdRange> allocate(String token, String sequence, long count) {
    List<IdRange> out = new ArrayList<>();
    IdGenGrpc.newBlockingStub(server.channel).withInterceptors(TestServer.bearer(token))
        .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build())
        .forEachRemaining(out::add);
    return out;
  }
}
