package dev.idgen.server.transport;

import static dev.idgen.server.TestServer.count;
import static dev.idgen.server.TestServer.failure;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.server.ErrorDetails;
import dev.idgen.server.TestServer;
import dev.idgen.server.config.ServerSettings;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What one client may hold: call duration, message size, concurrent calls per connection. */
class LimitsTest {

  private TestServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  /** A timer the test fires by hand. */
  static final class ManualTimer implements CallDurationLimit.Timer {
    final List<Runnable> tasks = new ArrayList<>();
    final List<Duration> delays = new ArrayList<>();
    final List<Boolean> cancelled = new ArrayList<>();

    @Override
    public synchronized Runnable schedule(Runnable task, Duration delay) {
      int i = tasks.size();
      tasks.add(task);
      delays.add(delay);
      cancelled.add(false);
      return () -> {
        synchronized (this) {
          cancelled.set(i, true);
        }
      };
    }

    synchronized void fireAll() {
      for (int i = 0; i < tasks.size(); i++) {
        if (!cancelled.get(i)) {
          tasks.get(i).run();
        }
      }
    }
  }

  @Test
  void should_cut_off_an_allocate_call_whose_client_stops_reading() {
    ManualTimer timer = new ManualTimer();
    server = TestServer.start(Map.of("idgen.limits.max-call-duration", "30s"), timer);
    server.create("orders");
    // Loaded, with a reserve: the call below is served from memory at once (no waiting thread).
    server.allocate("orders", 1);
    timer.fireAll(); // that call's timer, already cancelled
    timer.delays.clear();
    AtomicReference<Status> closed = new AtomicReference<>();
    AtomicReference<Metadata> closedTrailers = new AtomicReference<>();
    List<IdRange> received = new ArrayList<>();
    ClientCall<AllocateRequest, IdRange> call = server.channel.newCall(IdGenGrpc.getAllocateMethod(), CallOptions.DEFAULT);
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onMessage(IdRange message) {
        received.add(message);
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        closedTrailers.set(trailers);
        closed.set(status);
      }
    }, new Metadata());
    call.sendMessage(AllocateRequest.newBuilder().setSequence("orders").setCount(50).build());
    call.halfClose();
    // The client never calls request(n): flow control holds the ranges on the server.

    assertThat(closed.get()).isNull();
    assertThat(timer.delays).containsExactly(Duration.ofSeconds(30));
    timer.fireAll();

    assertThat(received).isEmpty();
    assertThat(closed.get().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(closed.get().getDescription()).contains("idgen.limits.max-call-duration");
    ErrorDetails details = ErrorDetails.of(closed.get(), closedTrailers.get());
    assertThat(details.reason()).isEqualTo("CALL_TOO_LONG");
    assertThat(details.metadata()).containsEntry("limit", ServerSettings.format(Duration.ofSeconds(30)));
    String metrics = server.injector.getInstance(io.micrometer.prometheusmetrics.PrometheusMeterRegistry.class)
        .scrape();
    // The 50 IDs it held are a counted gap.
    assertThat(TestServer.sample(metrics, "idgen_ids_lost_total{reason=\"abandoned\"}")).isEqualTo(50);
    assertThat(metrics).contains("idgen_allocate_calls_total{sequence=\"orders\",status=\"DEADLINE_EXCEEDED\"} 1.0");
  }

  @Test
  void should_cancel_the_timer_of_a_call_that_ended() {
    ManualTimer timer = new ManualTimer();
    server = TestServer.start(Map.of(), timer);
    server.create("orders");

    assertThat(count(server.allocate("orders", 5))).isEqualTo(5);

    assertThat(timer.cancelled).containsExactly(true);
  }

  @Test
  void should_refuse_a_request_larger_than_the_inbound_message_limit() {
    server = TestServer.startNetty(Map.of("idgen.limits.max-inbound-message-size", "1KiB"));

    StatusRuntimeException e = failure(() -> IdGenGrpc.newBlockingStub(server.channel)
        .withDeadlineAfter(10, TimeUnit.SECONDS)
        .allocate(AllocateRequest.newBuilder().setSequence("x".repeat(2_000)).setCount(1).build())
        .next());

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
  }

  @Test
  void should_queue_calls_beyond_the_concurrent_calls_per_connection() {
    server = TestServer.startNetty(Map.of("idgen.limits.max-concurrent-calls-per-connection", 1));
    server.create("orders");
    // Holds the one stream of the connection open: the request is sent but not half-closed.
    ClientCall<AllocateRequest, IdRange> holder = server.channel.newCall(IdGenGrpc.getAllocateMethod(), CallOptions.DEFAULT);
    holder.start(new ClientCall.Listener<>() {}, new Metadata());
    holder.sendMessage(AllocateRequest.newBuilder().setSequence("orders").setCount(1).build());
    holder.request(1);
    ManagedChannel otherConnection = Grpc.newChannelBuilderForAddress("127.0.0.1", server.port(),
        InsecureChannelCredentials.create()).build();
    try {
      // A second call on the same connection waits for a stream until its deadline …
      StatusRuntimeException waited = failure(() -> IdGenGrpc.newBlockingStub(server.channel)
          .withDeadlineAfter(500, TimeUnit.MILLISECONDS)
          .allocate(AllocateRequest.newBuilder().setSequence("orders").setCount(1).build()).next());
      // … while another connection has streams of its own.
      long ids = count(List.of(IdGenGrpc.newBlockingStub(otherConnection).withDeadlineAfter(30, TimeUnit.SECONDS)
          .allocate(AllocateRequest.newBuilder().setSequence("orders").setCount(3).build()).next()));

      assertThat(waited.getStatus().getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
      assertThat(ids).isEqualTo(3);
    } finally {
      holder.cancel("test done", null);
      otherConnection.shutdownNow();
    }
  }
}
