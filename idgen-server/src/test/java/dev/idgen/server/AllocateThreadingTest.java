package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.server.config.ServerSettings;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Calls run on the network thread (GrpcModule); an Allocate that must wait for the store, and every admin
 * call, move off it. Shown over Netty with one connection (one event loop): while a call waits on a
 * stalled store, other calls on the same connection are still served.
 */
class AllocateThreadingTest {

  @Test
  void should_keep_serving_a_connection_while_one_of_its_calls_waits_for_the_store() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    InMemoryRangeStore store = new InMemoryRangeStore();
    try (TestServer server = TestServer.startNetty(Map.of(), store)) {
      server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("fast").build());
      server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("slow").build());
      server.allocate("fast", 1); // loads the sequence and its first block
      store.beforeReserve = name -> {
        if (name.equals("slow")) {
          stall(entered, release);
        }
      };

      CompletableFuture<List<IdRange>> slow = new CompletableFuture<>();
      IdGenGrpc.newStub(server.channel).withDeadlineAfter(60, TimeUnit.SECONDS).allocate(
          AllocateRequest.newBuilder().setSequence("slow").setCount(5).build(), collect(slow));
      try {
        assertThat(entered.await(30, TimeUnit.SECONDS)).as("the slow call reached the store").isTrue();

        Set<Long> firsts = new HashSet<>();
        for (int i = 0; i < 50; i++) { // same channel, same connection, same event loop
          List<IdRange> ranges = new ArrayList<>();
          server.idGen().withDeadlineAfter(10, TimeUnit.SECONDS)
              .allocate(AllocateRequest.newBuilder().setSequence("fast").setCount(2).build())
              .forEachRemaining(ranges::add);
          assertThat(TestServer.count(ranges)).isEqualTo(2);
          assertThat(firsts.add(ranges.get(0).getFirst())).isTrue();
        }
        assertThat(slow).as("the slow call still waits for the store").isNotDone();
      } finally {
        release.countDown();
      }
      assertThat(TestServer.count(slow.get(30, TimeUnit.SECONDS))).isEqualTo(5);
    }
  }

  @Test
  void should_keep_serving_allocate_on_a_connection_while_an_admin_call_on_it_waits_for_the_store()
      throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    InMemoryRangeStore store = new InMemoryRangeStore();
    try (TestServer server = TestServer.startNetty(Map.of(), store)) {
      server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("fast").build());
      server.allocate("fast", 1);
      store.hook = operation -> {
        if (operation.equals("create")) {
          stall(entered, release);
        }
      };
      CompletableFuture<List<Sequence>> created = new CompletableFuture<>();
      SequenceAdminGrpc.newStub(server.channel).withDeadlineAfter(60, TimeUnit.SECONDS).createSequence(
          CreateSequenceRequest.newBuilder().setName("later").build(), collect(created));
      try {
        assertThat(entered.await(30, TimeUnit.SECONDS)).as("the admin call reached the store").isTrue();
        for (int i = 0; i < 20; i++) { // same connection: its event loop is free
          List<IdRange> ranges = new ArrayList<>();
          server.idGen().withDeadlineAfter(10, TimeUnit.SECONDS)
              .allocate(AllocateRequest.newBuilder().setSequence("fast").setCount(3).build())
              .forEachRemaining(ranges::add);
          assertThat(TestServer.count(ranges)).isEqualTo(3);
        }
        assertThat(created).as("the admin call still waits for the store").isNotDone();
      } finally {
        release.countDown();
      }
      assertThat(created.get(30, TimeUnit.SECONDS)).extracting(Sequence::getName).containsExactly("later");
    }
  }

  @Test
  void should_refuse_calls_over_the_waiting_bound_at_once_and_serve_those_within_it() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    InMemoryRangeStore store = new InMemoryRangeStore();
    int bound = 8;
    try (TestServer server = TestServer.startNetty(Map.of(ServerSettings.MAX_WAITING_CALLS, bound), store)) {
      server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("frozen").build());
      store.beforeReserve = name -> stall(entered, release); // the store freezes
      List<CompletableFuture<List<IdRange>>> calls = new ArrayList<>();
      for (int i = 0; i < 3 * bound; i++) {
        CompletableFuture<List<IdRange>> call = new CompletableFuture<>();
        IdGenGrpc.newStub(server.channel).withDeadlineAfter(60, TimeUnit.SECONDS).allocate(
            AllocateRequest.newBuilder().setSequence("frozen").setCount(1).build(), collect(call));
        calls.add(call);
      }
      List<Throwable> refused = new ArrayList<>();
      try {
        assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
        for (CompletableFuture<List<IdRange>> call : calls) {
          try {
            call.get(200, TimeUnit.MILLISECONDS);
          } catch (java.util.concurrent.ExecutionException e) {
            refused.add(e.getCause());
          } catch (java.util.concurrent.TimeoutException e) {
            // waiting within the bound
          }
        }
        // What an operator sees meanwhile: the waiting calls at the bound, the refusals counted.
        String metrics = server.injector.getInstance(io.micrometer.prometheusmetrics.PrometheusMeterRegistry.class)
            .scrape();
        assertThat(TestServer.sample(metrics, "idgen_waiting_calls")).isEqualTo(bound);
        assertThat(TestServer.sample(metrics, "idgen_calls_refused_total{reason=\"busy\"}")).isEqualTo(2 * bound);
      } finally {
        release.countDown();
      }
      assertThat(refused).as("every call over the bound is refused at once").hasSize(2 * bound)
          .allSatisfy(t -> {
            assertThat(Status.fromThrowable(t).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
            assertThat(Status.fromThrowable(t).getDescription()).contains("busy")
                .contains("idgen.limits.max-waiting-calls");
            ErrorDetails busy = ErrorDetails.of(t);
            assertThat(busy.reason()).isEqualTo("SERVER_BUSY");
            assertThat(busy.metadata()).containsEntry("limit", String.valueOf(bound));
            assertThat(busy.retryDelayMillis()).isEqualTo(100);
          });
      long served = 0;
      for (CompletableFuture<List<IdRange>> call : calls) {
        if (!call.isCompletedExceptionally()) {
          served += TestServer.count(call.get(30, TimeUnit.SECONDS));
        }
      }
      assertThat(served).as("the calls within the bound are served once the store is back").isEqualTo(bound);
    }
  }

  /** Blocks the store's caller until the test releases it. */
  private static void stall(CountDownLatch entered, CountDownLatch release) {
    entered.countDown();
    try {
      release.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /** Completes {@code done} with a call's responses once it ends OK, or with its error. */
  private static <T> StreamObserver<T> collect(CompletableFuture<List<T>> done) {
    List<T> received = new ArrayList<>();
    return new StreamObserver<>() {
      @Override
      public void onNext(T value) {
        received.add(value);
      }

      @Override
      public void onError(Throwable t) {
        done.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {
        done.complete(received);
      }
    };
  }
}
