package dev.idgen.spring;

import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.server.EmbeddedDaemon;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** The idgen daemon on its embedded store, on Netty at a loopback port, plaintext; for the starter's tests. */
final class Daemon implements AutoCloseable {
  private final EmbeddedDaemon daemon;

  Daemon(Path dir, String... sequences) {
    daemon = EmbeddedDaemon.onLoopback(dir, 0);
    ManagedChannel channel = Grpc.newChannelBuilder(target(), InsecureChannelCredentials.create()).build();
    try {
      for (String name : sequences) {
        SequenceAdminGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
            .createSequence(CreateSequenceRequest.newBuilder().setName(name).build());
      }
    } finally {
      channel.shutdownNow();
    }
  }

  String target() {
    return "127.0.0.1:" + daemon.port();
  }

  /** A loopback port nothing listens on (closed right after it was found free). */
  static String deadTarget() {
    try (ServerSocket s = new ServerSocket(0)) {
      return "127.0.0.1:" + s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    daemon.close();
  }
}
