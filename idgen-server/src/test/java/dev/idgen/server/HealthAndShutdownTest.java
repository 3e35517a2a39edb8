package dev.idgen.server;

import static dev.idgen.server.TestServer.count;
import static dev.idgen.server.TestServer.failure;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.SequenceAdminGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class HealthAndShutdownTest {

  private TestServer server;
  private final ExecutorService callers = Executors.newSingleThreadExecutor();

  @BeforeEach
  void start() {
    server = TestServer.start();
  }

  @AfterEach
  void stop() {
    callers.shutdownNow();
    server.close();
  }

  @Test
  void should_report_serving_for_the_server_and_each_service_once_started() {
    assertThat(server.health("")).isEqualTo(ServingStatus.SERVING);
    assertThat(server.health(IdGenGrpc.SERVICE_NAME)).isEqualTo(ServingStatus.SERVING);
    assertThat(server.health(SequenceAdminGrpc.SERVICE_NAME)).isEqualTo(ServingStatus.SERVING);
  }

  @Test
  void should_report_not_serving_as_soon_as_shutdown_begins_while_still_serving_calls() {
    server.create("orders");

    server.server.beginShutdown();

    assertThat(server.health("")).isEqualTo(ServingStatus.NOT_SERVING);
    assertThat(server.health(IdGenGrpc.SERVICE_NAME)).isEqualTo(ServingStatus.NOT_SERVING);
    assertThat(server.health(SequenceAdminGrpc.SERVICE_NAME)).isEqualTo(ServingStatus.NOT_SERVING);
    // The quiet period: balancers see NOT_SERVING, calls that still arrive are served.
    assertThat(count(server.allocate("orders", 3))).isEqualTo(3);
  }

  @Test
  void should_let_a_call_started_before_shutdown_finish_and_refuse_new_calls() throws Exception {
    server.create("orders");
    CountDownLatch reserving = new CountDownLatch(1);
    CountDownLatch storeMayAnswer = new CountDownLatch(1);
    server.store.hook = operation -> {
      if (operation.equals("reserve")) {
        reserving.countDown();
        await(storeMayAnswer);
      }
    };
    CompletableFuture<List<IdRange>> open =
        CompletableFuture.supplyAsync(() -> server.allocate("orders", 5), callers);
    assertThat(reserving.await(10, TimeUnit.SECONDS)).isTrue(); // the call is in flight, in the store

    server.server.stopAccepting();
    StatusRuntimeException refused = failure(() -> server.allocate("orders", 1));
    storeMayAnswer.countDown();

    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(count(open.get(10, TimeUnit.SECONDS))).isEqualTo(5);
    server.server.finishShutdown();
  }

  @Test
  void should_shut_down_completely_more_than_once_without_harm() {
    server.server.shutdown();
    server.server.shutdown();

    assertThat(failure(() -> server.health("")).getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new AssertionError("the test never released the store");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
