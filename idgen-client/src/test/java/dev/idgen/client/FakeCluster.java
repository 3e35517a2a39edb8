package dev.idgen.client;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * In-process fake servers sharing one {@link FakeBackend} (a cluster: an ID leased by one server is
 * never leased by another), each with its own switches and a direct-executor channel to it.
 */
final class FakeCluster implements AutoCloseable {

  /** One in-process server of the cluster. */
  record FakeServer(String name, FakeIdGenService service, Server server, ManagedChannel channel) {
    /** Stops the server at once: calls on its channel then fail with UNAVAILABLE. */
    void stop() {
      server.shutdownNow();
      try {
        server.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  final FakeBackend backend = new FakeBackend();
  private final List<FakeServer> servers = new ArrayList<>();

  FakeServer server() {
    String name = InProcessServerBuilder.generateName();
    FakeIdGenService service = new FakeIdGenService(backend);
    Server server;
    try {
      server = InProcessServerBuilder.forName(name).directExecutor().addService(service).build().start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ManagedChannel channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    FakeServer s = new FakeServer(name, service, server, channel);
    servers.add(s);
    return s;
  }

  @Override
  public void close() {
    for (FakeServer s : servers) {
      s.channel().shutdownNow();
      s.server().shutdownNow();
    }
    try {
      for (FakeServer s : servers) {
        s.channel().awaitTermination(5, TimeUnit.SECONDS);
        s.server().awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
