package dev.idgen.server.transport;

import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.config.ServerSettings;
import io.grpc.ServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** The production transport: Netty, with the settings' connection limits ({@link ServerTransport#netty()}). */
final class NettyTransport {

  private NettyTransport() {}

  static NettyServerBuilder serverBuilder(ServerSettings settings, OperationsSettings.Limits limits,
      ServerCredentials credentials) {
    LeakDetection.offUnlessAsked(); // before the first buffer: for the server and the forwarder's channels
    NettyServerBuilder b = NettyServerBuilder.forAddress(
        new InetSocketAddress(settings.grpcHost(), settings.grpcPort()), credentials);
    b.maxConcurrentCallsPerConnection(limits.maxConcurrentCallsPerConnection());
    b.permitKeepAliveWithoutCalls(limits.permitKeepaliveWithoutCalls());
    b.permitKeepAliveTime(limits.permitKeepaliveTime().toNanos(), TimeUnit.NANOSECONDS);
    ifSet(limits.keepaliveTime(), d -> b.keepAliveTime(d.toNanos(), TimeUnit.NANOSECONDS));
    ifSet(limits.keepaliveTimeout(), d -> b.keepAliveTimeout(d.toNanos(), TimeUnit.NANOSECONDS));
    ifSet(limits.maxConnectionIdle(), d -> b.maxConnectionIdle(d.toNanos(), TimeUnit.NANOSECONDS));
    ifSet(limits.maxConnectionAge(), d -> b.maxConnectionAge(d.toNanos(), TimeUnit.NANOSECONDS));
    ifSet(limits.maxConnectionAgeGrace(), d -> b.maxConnectionAgeGrace(d.toNanos(), TimeUnit.NANOSECONDS));
    ifSet(limits.handshakeTimeout(), d -> b.handshakeTimeout(d.toNanos(), TimeUnit.NANOSECONDS));
    return b;
  }

  private static void ifSet(Duration d, java.util.function.Consumer<Duration> setter) {
    if (!d.isZero()) {
      setter.accept(d);
    }
  }
}
