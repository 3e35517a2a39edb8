package dev.idgen.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.server.TestServer;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.ClientCalls;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Bytes that are not the request message, over Netty: INVALID_ARGUMENT that names the type and the parse
 * error (gRPC alone answers UNKNOWN "Application error processing RPC"), the same connection keeps working.
 */
class RequestParsingTest {
  /** Field 1 (the name) as a length-delimited string of 100 bytes, but only 3 of them follow. */
  private static final byte[] TRUNCATED = {0x0a, 100, 'a', 'b', 'c'};

  private static final MethodDescriptor.Marshaller<byte[]> BYTES = TestServer.BYTES;

  private TestServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private Status rawUnary(MethodDescriptor<?, ?> real, byte[] bytes) {
    MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
        .setType(real.getType()).setFullMethodName(real.getFullMethodName())
        .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
    try {
      if (real.getType() == MethodDescriptor.MethodType.UNARY) {
        ClientCalls.blockingUnaryCall(server.channel, method, CallOptions.DEFAULT, bytes);
      } else {
        ClientCalls.blockingServerStreamingCall(server.channel, method, CallOptions.DEFAULT, bytes)
            .forEachRemaining(r -> {});
      }
      return Status.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus();
    }
  }

  @Test
  void should_answer_invalid_argument_naming_the_type_for_bytes_that_are_not_the_request() {
    server = TestServer.startNetty(Map.of());
    server.create("orders");

    Status allocate = rawUnary(IdGenGrpc.getAllocateMethod(), TRUNCATED);
    Status create = rawUnary(SequenceAdminGrpc.getCreateSequenceMethod(), TRUNCATED);

    assertThat(allocate.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(allocate.getDescription())
        .startsWith("the request is not a valid idgen.v1.AllocateRequest message (")
        .contains("truncated");
    assertThat(create.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(create.getDescription()).startsWith("the request is not a valid idgen.v1.CreateSequenceRequest");
    // The connection and the server go on: a valid call on the same channel, and health.
    assertThat(TestServer.count(server.allocate("orders", 7))).isEqualTo(7);
    assertThat(HealthGrpc.newBlockingStub(server.channel)
        .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.SERVING);
  }

  @Test
  void should_leave_valid_requests_and_their_errors_as_they_were() {
    server = TestServer.startNetty(Map.of());

    Status unknown = rawUnary(IdGenGrpc.getAllocateMethod(),
        dev.idgen.api.v1.AllocateRequest.newBuilder().setSequence("nope").setCount(1).build().toByteArray());
    Status empty = rawUnary(IdGenGrpc.getAllocateMethod(), new byte[0]); // a valid, empty message

    assertThat(unknown.getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(empty.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(empty.getDescription()).doesNotContain("is not a valid").contains("sequence");
  }
}
