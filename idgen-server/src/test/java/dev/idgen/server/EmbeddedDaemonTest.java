package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.SequenceAdminGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.inprocess.InProcessChannelBuilder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The public entry point that other modules' tests and benchmarks start the daemon with. */
class EmbeddedDaemonTest {

  @TempDir
  Path dir;

  @Test
  void should_serve_in_process_with_the_callers_interceptors_around_every_call() {
    List<String> methods = Collections.synchronizedList(new ArrayList<>());
    ServerInterceptor recorder = new ServerInterceptor() {
      @Override
      public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
          ServerCallHandler<Q, A> next) {
        methods.add(call.getMethodDescriptor().getBareMethodName());
        return next.startCall(call, headers);
      }
    };
    try (EmbeddedDaemon daemon = EmbeddedDaemon.inProcess(dir, List.of(recorder))) {
      ManagedChannel channel = InProcessChannelBuilder.forName(daemon.inProcessName()).build();
      try {
        SequenceAdminGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
            .createSequence(CreateSequenceRequest.newBuilder().setName("orders").setStart(10).build());
        List<IdRange> ranges = new ArrayList<>();
        IdGenGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
            .allocate(AllocateRequest.newBuilder().setSequence("orders").setCount(3).build())
            .forEachRemaining(ranges::add);

        assertThat(TestServer.ids(ranges)).containsExactly(10L, 11L, 12L);
        assertThat(methods).containsExactly("CreateSequence", "Allocate");
        assertThat(daemon.port()).isEqualTo(-1);
      } finally {
        channel.shutdownNow();
      }
    }
  }

  @Test
  void should_serve_on_a_free_loopback_port_and_have_no_in_process_name() {
    try (EmbeddedDaemon daemon = EmbeddedDaemon.onLoopback(dir, 0)) {
      assertThat(daemon.port()).isPositive();
      assertThatThrownBy(daemon::inProcessName).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("127.0.0.1:" + daemon.port());
    }
  }
}
