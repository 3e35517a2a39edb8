package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** grpcurl and similar tools discover the API through server reflection, v1 or v1alpha. */
class ReflectionTest {

  private TestServer server;

  @BeforeEach
  void start() {
    server = TestServer.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void should_list_the_idgen_services_through_reflection_v1() throws Exception {
    CompletableFuture<List<String>> services = new CompletableFuture<>();
    StreamObserver<io.grpc.reflection.v1.ServerReflectionRequest> requests =
        io.grpc.reflection.v1.ServerReflectionGrpc.newStub(server.channel).serverReflectionInfo(
            new StreamObserver<>() {
              @Override
              public void onNext(io.grpc.reflection.v1.ServerReflectionResponse response) {
                services.complete(response.getListServicesResponse().getServiceList().stream()
                    .map(io.grpc.reflection.v1.ServiceResponse::getName).toList());
              }

              @Override
              public void onError(Throwable t) {
                services.completeExceptionally(t);
              }

              @Override
              public void onCompleted() {}
            });
    requests.onNext(io.grpc.reflection.v1.ServerReflectionRequest.newBuilder().setListServices("").build());
    requests.onCompleted();

    assertThat(services.get(10, TimeUnit.SECONDS))
        .contains("idgen.v1.IdGen", "idgen.v1.SequenceAdmin", "grpc.health.v1.Health");
  }

  @Test
  void should_offer_the_error_detail_types_so_that_grpcurl_prints_them() throws Exception {
    CompletableFuture<io.grpc.reflection.v1.ServerReflectionResponse> answer = new CompletableFuture<>();
    StreamObserver<io.grpc.reflection.v1.ServerReflectionRequest> requests =
        io.grpc.reflection.v1.ServerReflectionGrpc.newStub(server.channel).serverReflectionInfo(
            new StreamObserver<>() {
              @Override
              public void onNext(io.grpc.reflection.v1.ServerReflectionResponse response) {
                answer.complete(response);
              }

              @Override
              public void onError(Throwable t) {
                answer.completeExceptionally(t);
              }

              @Override
              public void onCompleted() {}
            });
    // What grpcurl asks to print an Any in the status details.
    requests.onNext(io.grpc.reflection.v1.ServerReflectionRequest.newBuilder()
        .setFileContainingSymbol("google.rpc.ErrorInfo").build());
    requests.onCompleted();

    io.grpc.reflection.v1.ServerReflectionResponse response = answer.get(10, TimeUnit.SECONDS);
    assertThat(response.hasErrorResponse()).as("error %s", response.getErrorResponse()).isFalse();
    List<String> files = new java.util.ArrayList<>();
    for (com.google.protobuf.ByteString bytes : response.getFileDescriptorResponse().getFileDescriptorProtoList()) {
      files.add(com.google.protobuf.DescriptorProtos.FileDescriptorProto.parseFrom(bytes).getName());
    }
    assertThat(files).contains("google/rpc/error_details.proto");
  }

  @Test
  @SuppressWarnings("deprecation") // v1alpha: deprecated, still what many tools speak
  void should_list_the_idgen_services_through_reflection_v1alpha() throws Exception {
    CompletableFuture<List<String>> services = new CompletableFuture<>();
    StreamObserver<io.grpc.reflection.v1alpha.ServerReflectionRequest> requests =
        io.grpc.reflection.v1alpha.ServerReflectionGrpc.newStub(server.channel).serverReflectionInfo(
            new StreamObserver<>() {
              @Override
              public void onNext(io.grpc.reflection.v1alpha.ServerReflectionResponse response) {
                services.complete(response.getListServicesResponse().getServiceList().stream()
                    .map(io.grpc.reflection.v1alpha.ServiceResponse::getName).toList());
              }

              @Override
              public void onError(Throwable t) {
                services.completeExceptionally(t);
              }

              @Override
              public void onCompleted() {}
            });
    requests.onNext(
        io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder().setListServices("").build());
    requests.onCompleted();

    assertThat(services.get(10, TimeUnit.SECONDS)).contains("idgen.v1.IdGen", "idgen.v1.SequenceAdmin");
  }
}
