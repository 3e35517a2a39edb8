package dev.idgen.server;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.core.RangeStore;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The daemon as production wires it, on the embedded store and Netty on a free loopback port
 * ({@link EmbeddedDaemon#onLoopback}), with a real channel to it: what a client over the network sees,
 * framing and message parsing included (the in-process transport of {@link TestServer} reports some
 * transport-level failures differently). Close it after each test.
 */
final class NettyServer implements AutoCloseable {
  final EmbeddedDaemon daemon;
  final ManagedChannel channel;

  private NettyServer(EmbeddedDaemon daemon, ManagedChannel channel) {
    this.daemon = daemon;
    this.channel = channel;
  }

  static NettyServer startEmbedded(Path dir) {
    return connect(EmbeddedDaemon.onLoopback(dir, 0));
  }

  /** On {@code store}, which it does not close (several servers of one test share it). */
  static NettyServer startOn(RangeStore store) {
    return connect(EmbeddedDaemon.onLoopback(store));
  }

  private static NettyServer connect(EmbeddedDaemon daemon) {
    ManagedChannel channel = Grpc.newChannelBuilderForAddress("127.0.0.1", daemon.port(),
        InsecureChannelCredentials.create()).maxInboundMessageSize(16 << 20).build();
    return new NettyServer(daemon, channel);
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
    daemon.close();
  }
}
