package dev.idgen.server;

import static dev.idgen.server.TestServer.failure;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.SequenceAdminGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import java.io.IOException;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A server on the Cassandra store whose contact point nothing listens on (yet): it starts, stays up and
 * reports NOT_SERVING, with the store connecting in the background, instead of exiting. (That it turns
 * SERVING once Cassandra comes is {@code CassandraLateStartIT}.)
 */
class CassandraNotUpYetTest {

  private TestServer server;

  @BeforeEach
  void start() throws IOException {
    server = TestServer.startCassandra(Map.of("idgen.cassandra.contact-points", "127.0.0.1:" + freePort()));
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void should_start_and_report_not_serving_until_the_store_answers() {
    assertThat(server.health("")).isEqualTo(ServingStatus.NOT_SERVING);
    assertThat(server.health(IdGenGrpc.SERVICE_NAME)).isEqualTo(ServingStatus.NOT_SERVING);
    assertThat(server.health(SequenceAdminGrpc.SERVICE_NAME)).isEqualTo(ServingStatus.NOT_SERVING);
    assertThat(server.server.startFailure()).isEmpty();
  }

  @Test
  void should_report_the_process_alive_to_liveness_probes_meanwhile() {
    assertThat(server.health(IdGenServer.LIVENESS)).isEqualTo(ServingStatus.SERVING);
  }

  @Test
  void should_answer_calls_unavailable_saying_that_cassandra_is_not_connected_yet() {
    StatusRuntimeException e = failure(() -> server.admin().getSequence(
        GetSequenceRequest.newBuilder().setName("orders").build()));

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(e.getStatus().getDescription()).contains("not connected to Cassandra at [127.0.0.1:");
    assertThat(failure(() -> server.allocate("orders", 1)).getStatus().getCode())
        .isEqualTo(Status.Code.UNAVAILABLE);
  }

  /** A port that nothing listens on once this returns. */
  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
