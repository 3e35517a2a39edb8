package dev.idgen.server.transport;

import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.config.ServerSettings;
import io.grpc.ServerBuilder;
import io.grpc.ServerCredentials;

/**
 * Makes the server builder of a transport; the gRPC module adds the services, interceptors and executor.
 * Production serves on Netty ({@link #netty()}); tests and embedders serve the very same services
 * in-process.
 */
@FunctionalInterface
public interface ServerTransport {

  ServerBuilder<?> serverBuilder(ServerSettings settings, OperationsSettings.Limits limits,
      ServerCredentials credentials);

  /**
   * Netty on {@code idgen.grpc.host}:{@code idgen.grpc.port}, with the credentials ({@code idgen.grpc.tls})
   * and the connection limits ({@code idgen.limits}, {@code idgen.grpc.keepalive}).
   */
  static ServerTransport netty() {
    return NettyTransport::serverBuilder;
  }
}
