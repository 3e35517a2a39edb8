package dev.idgen.server;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.SequenceAdminGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The daemon as production wires it, on the embedded store and Netty on a free loopback port, with a real
 * channel to it: what a client over the network sees, framing and message parsing included (the in-process
 * transport of {@link TestServer} reports some transport-level failures differently). Close it after each test.
 */
final class NettyServer implements AutoCloseable {
  final IdGenServer server;
  final ManagedChannel channel;

  private NettyServer(IdGenServer server, ManagedChannel channel) {
    this.server = server;
    this.channel = channel;
  }

  static NettyServer startEmbedded(Path dir) {
    Config config = ConfigFactory.parseMap(Map.of(
            ServerSettings.EMBEDDED_DIR, dir.toString(),
            ServerSettings.GRPC_HOST, "127.0.0.1",
            ServerSettings.GRPC_PORT, 0,
            ServerSettings.QUIET_PERIOD, "0s",
            ServerSettings.SHUTDOWN_TIMEOUT, "5s",
            "idgen.metrics.host", "127.0.0.1",
            "idgen.metrics.port", 0))
        .withFallback(ConfigFactory.defaultReference()).resolve();
    IdGenServer server = Wiring.injector(config, OperationsSettings.from(config, Map.of()),
            new EmbeddedStoreModule(), GrpcModule.netty(), null)
        .getInstance(IdGenServer.class);
    try {
      server.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ManagedChannel channel = Grpc.newChannelBuilderForAddress("127.0.0.1", server.port(),
        InsecureChannelCredentials.create()).maxInboundMessageSize(16 << 20).build();
    return new NettyServer(server, channel);
  }

  SequenceAdminGrpc.SequenceAdminBlockingStub admin() {
    return SequenceAdminGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
  }

  ServingStatus health(String service) {
    return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
        .check(HealthCheckRequest.newBuilder().setService(service).build())
        .getStatus();
  }

  /** The ranges of one Allocate call, each added to {@code received} as it arrives; throws its error status. */
  List<IdRange> allocate(String sequence, long count, List<IdRange> received) {
    Iterator<IdRange> ranges = IdGenGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS)
        .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build());
    while (ranges.hasNext()) {
      received.add(ranges.next());
    }
    return received;
  }

  List<IdRange> allocate(String sequence, long count) {
    return allocate(sequence, count, new java.util.ArrayList<>());
  }

  @Override
  public void close() {
    channel.shutdownNow();
    server.finishShutdown();
  }
}
