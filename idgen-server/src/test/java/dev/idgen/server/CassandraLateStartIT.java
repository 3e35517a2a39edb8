package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.testing.CassandraExtension;
import dev.idgen.testing.TestCassandra;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A server started before its Cassandra: its contact point is a port that nothing listens on, and it
 * starts, stays up and reports NOT_SERVING; when Cassandra appears there (a TCP forwarder to the test
 * cluster's dc1 node, started later: the launcher's cluster is shared by the test JVM and cannot be started
 * late itself), the driver's reconnection finds it, the store applies the schema, and the server reports
 * SERVING and serves.
 */
@ExtendWith(CassandraExtension.class)
class CassandraLateStartIT {

  @Test
  void should_wait_for_cassandra_not_serving_and_serve_once_it_answers() throws Exception {
    int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort(); // free once closed: nothing listens there yet
    }
    String keyspace = "late_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);
    TestServer server = TestServer.startCassandra(Map.of(
        "idgen.cassandra.contact-points", "127.0.0.1:" + port,
        "idgen.cassandra.local-datacenter", TestCassandra.DC1,
        "idgen.cassandra.keyspace", keyspace,
        "idgen.cassandra.create-schema", true,
        "idgen.cassandra.replication.dc1", 1,
        "idgen.cassandra.replication.dc2", 1));
    try {
      CompletableFuture<ServingStatus> serving = watchUntilServing(server);
      assertThat(server.health("")).isEqualTo(ServingStatus.NOT_SERVING);
      assertThat(server.health(IdGenServer.LIVENESS)).isEqualTo(ServingStatus.SERVING);
      assertThat(serving).isNotDone();

      try (Forwarder cassandra = new Forwarder(port, CassandraExtension.cluster().contactPoint(TestCassandra.DC1))) {
        // The driver retries every 5 s at most (idgen's default reconnection delay); the schema takes a few.
        assertThat(serving.get(90, TimeUnit.SECONDS)).isEqualTo(ServingStatus.SERVING);

        server.create("orders");
        assertThat(TestServer.count(server.allocate("orders", 10))).isEqualTo(10);
        assertThat(server.server.startFailure()).isEmpty();
      }
    } finally {
      server.close();
    }
  }

  /** Completes when the health service reports SERVING for the server as a whole (a Watch: no polling). */
  private static CompletableFuture<ServingStatus> watchUntilServing(TestServer server) {
    CompletableFuture<ServingStatus> serving = new CompletableFuture<>();
    HealthGrpc.newStub(server.channel).watch(HealthCheckRequest.getDefaultInstance(), new StreamObserver<>() {
      @Override
      public void onNext(HealthCheckResponse response) {
        if (response.getStatus() == ServingStatus.SERVING) {
          serving.complete(response.getStatus());
        }
      }

      @Override
      public void onError(Throwable t) {
        serving.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {}
    });
    return serving;
  }

  /** Listens on 127.0.0.1:{@code port} and copies every connection's bytes to and from {@code target}. */
  private static final class Forwarder implements AutoCloseable {
    private final ServerSocket listener;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    Forwarder(int port, String target) throws IOException {
      int colon = target.lastIndexOf(':');
      InetSocketAddress to = new InetSocketAddress(target.substring(0, colon),
          Integer.parseInt(target.substring(colon + 1)));
      listener = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
      daemon("forwarder-accept", () -> {
        while (!listener.isClosed()) {
          try {
            Socket in = listener.accept();
            Socket out = new Socket(to.getAddress(), to.getPort());
            sockets.add(in);
            sockets.add(out);
            daemon("forwarder-up", () -> copy(in, out));
            daemon("forwarder-down", () -> copy(out, in));
          } catch (IOException e) {
            return; // closed
          }
        }
      });
    }

    private static void copy(Socket from, Socket to) {
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        in.transferTo(out);
      } catch (IOException e) {
        // one side closed: so is the other
      } finally {
        try {
          to.close();
          from.close();
        } catch (IOException ignored) {
          // closing anyway
        }
      }
    }

    private static void daemon(String name, Runnable task) {
      Thread t = new Thread(task, name);
      t.setDaemon(true);
      t.start();
    }

    @Override
    public void close() throws IOException {
      listener.close();
      for (Socket s : sockets) {
        s.close();
      }
    }
  }
}
