package dev.idgen.server;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import dev.idgen.server.access.AccessInterceptor;
import dev.idgen.server.api.IdGenService;
import dev.idgen.server.api.PeerService;
import dev.idgen.server.api.RequestParsing;
import dev.idgen.server.api.SequenceAdminService;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.metrics.GrpcCallMetrics;
import dev.idgen.server.transport.CallDurationLimit;
import dev.idgen.server.transport.OffloadInterceptor;
import dev.idgen.server.transport.ServerTransport;
import dev.idgen.server.transport.TlsCredentials;
import dev.idgen.server.transport.WorkerPool;
import dev.idgen.server.http.PublicServices;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import java.util.List;

/**
 * Builds the {@link Server}: {@code idgen.v1.IdGen}, {@code idgen.v1.SequenceAdmin}, {@code idgen.v1.IdGenPeer}
 * (strict forwarding between servers), server reflection
 * (v1, and v1alpha for the many tools that still only speak it) and the standard health service.
 *
 * <p>Every call of every service first passes the metrics layer ({@link GrpcCallMetrics}: latency and status of
 * each method, and Allocate's counters by sequence). {@code IdGen} and {@code SequenceAdmin} are then
 * intercepted, outermost first: the request parsing guard ({@link RequestParsing}: INVALID_ARGUMENT for bytes
 * that are not the request message), the forwarding headers of strict calls (IdGen), access rules, the
 * call-duration limit (Allocate), the move to the worker pool (SequenceAdmin). Health and reflection are not:
 * probes and tools work without credentials.
 *
 * <p>Threads: calls run on the Netty event loop that read them ({@code directExecutor}); gRPC's default,
 * a hand-off of every call to a cached thread pool, cost more CPU than serving an Allocate (BENCHMARKS.md).
 * Nothing that blocks may run there: Allocate serves from memory and moves the calls that must wait to the
 * {@link WorkerPool}; every SequenceAdmin call runs there ({@link OffloadInterceptor}); health and
 * reflection answer from memory.
 *
 * <p>The transport is a parameter so that tests serve the very same services in-process. Netty
 * ({@link ServerTransport#netty()}) gets the credentials ({@code idgen.grpc.tls}) and the connection limits
 * ({@code idgen.limits}, {@code idgen.grpc.keepalive}).
 */
final class GrpcModule extends AbstractModule {

  private final ServerTransport transport;

  GrpcModule(ServerTransport transport) {
    this.transport = transport;
  }

  /** Netty on {@code idgen.grpc.host}:{@code idgen.grpc.port}. */
  static GrpcModule netty() {
    return new GrpcModule(ServerTransport.netty());
  }

  @Override
  protected void configure() {
    com.google.inject.multibindings.Multibinder.newSetBinder(binder(), dev.idgen.server.lifecycle.ServerComponent.class)
        .addBinding().to(dev.idgen.server.api.StrictForwarder.class);
  }

  @Provides
  @Singleton
  HealthStatusManager health() {
    return new HealthStatusManager();
  }

  /**
   * IdGen and SequenceAdmin behind their interceptors, built once: the gRPC server and the HTTP/JSON port
   * ({@code dev.idgen.server.http}) serve these same definitions.
   */
  @Provides
  @Singleton
  PublicServices publicServices(IdGenService idGen, SequenceAdminService admin, AccessInterceptor access,
      CallDurationLimit callDuration, OffloadInterceptor offload) {
    // ServerInterceptors.intercept: the last one listed runs first.
    // RequestParsing outermost: bytes that are not the request message get INVALID_ARGUMENT.
    return new PublicServices(List.of(
        RequestParsing.guard(ServerInterceptors.intercept(idGen, callDuration, access,
            dev.idgen.server.api.StrictForwarder.headers())),
        RequestParsing.guard(ServerInterceptors.intercept(admin, offload, access))));
  }

  @Provides
  @Singleton
  @SuppressWarnings("deprecation") // ProtoReflectionService is v1alpha, deprecated but still widely used
  Server server(ServerSettings settings, OperationsSettings operations, IdGenService idGen,
      SequenceAdminService admin, PublicServices services, PeerService peers, HealthStatusManager health,
      TlsCredentials tls, AccessInterceptor access, GrpcCallMetrics rpcMetrics) {
    OperationsSettings.Limits limits = operations.limits();
    // Both services' meters exist from the start (OK at zero): a dashboard's rate() has a series to read.
    rpcMetrics.preregisterService(idGen);
    rpcMetrics.preregisterService(admin);
    io.grpc.ServerBuilder<?> builder = transport.serverBuilder(settings, limits, tls.credentials())
        // Every call runs on the network thread that read it: no hand-off to a thread pool per call,
        // which cost more than serving an Allocate. What may block moves to the worker pool: Allocate
        // calls that must wait (IdGenService) and every SequenceAdmin call (OffloadInterceptor).
        .directExecutor()
        .maxInboundMessageSize(limits.maxInboundMessageSize())
        .maxInboundMetadataSize(limits.maxInboundMetadataSize())
        // Runs before every service's own interceptors: each call of every method is timed, with its status,
        // whatever refused it (parsing, access rules, the call-duration limit).
        .intercept(rpcMetrics);
    services.services().forEach(builder::addService);
    return builder
        // Strict forwarding between servers: the same access rules as Allocate; a long-lived stream, so not
        // under the call-duration limit (StrictForwarder retires its streams itself).
        .addService(RequestParsing.guard(ServerInterceptors.intercept(peers, access)))
        .addService(ProtoReflectionServiceV1.newInstance())
        .addService(ProtoReflectionService.newInstance())
        .addService(health.getHealthService())
        .build();
  }
}
