package dev.idgen.server;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import java.net.InetSocketAddress;

/**
 * Builds the {@link Server}: {@code idgen.v1.IdGen}, {@code idgen.v1.SequenceAdmin}, server reflection
 * (v1, and v1alpha for the many tools that still only speak it) and the standard health service.
 *
 * <p>The transport is a parameter so that tests serve the very same services in-process.
 */
final class GrpcModule extends AbstractModule {

  /** Makes the transport's server builder; the module adds the services. */
  @FunctionalInterface
  interface Transport {
    ServerBuilder<?> serverBuilder(ServerSettings settings);
  }

  private final Transport transport;

  GrpcModule(Transport transport) {
    this.transport = transport;
  }

  /** Netty on {@code idgen.grpc.host}:{@code idgen.grpc.port}. */
  static GrpcModule netty() {
    return new GrpcModule(settings ->
        NettyServerBuilder.forAddress(new InetSocketAddress(settings.grpcHost(), settings.grpcPort())));
  }

  @Provides
  @Singleton
  HealthStatusManager health() {
    return new HealthStatusManager();
  }

  @Provides
  @Singleton
  @SuppressWarnings("deprecation") // ProtoReflectionService is v1alpha, deprecated but still widely used
  Server server(ServerSettings settings, IdGenService idGen, SequenceAdminService admin,
      HealthStatusManager health) {
    return transport.serverBuilder(settings)
        .addService(idGen)
        .addService(admin)
        .addService(ProtoReflectionServiceV1.newInstance())
        .addService(ProtoReflectionService.newInstance())
        .addService(health.getHealthService())
        .build();
  }
}
