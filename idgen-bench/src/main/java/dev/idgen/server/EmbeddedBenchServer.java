package dev.idgen.server;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The idgen daemon on the embedded store, wired with the production Guice modules exactly as
 * {@code Main} wires it, but started inside the calling JVM: for JMH benchmarks and the load generator's
 * smoke test. Either on an in-process transport ({@link #inProcess}) or on Netty at a loopback port
 * ({@link #netty}).
 *
 * <p>It lives in idgen-bench but in the server's package, because the modules are package-private
 * (adapted from idgen-server's test helper {@code TestServer}). Not thread-safe; close it once.
 */
public final class EmbeddedBenchServer implements AutoCloseable {

  private final IdGenServer server;
  private final String inProcessName; // null on Netty

  private EmbeddedBenchServer(IdGenServer server, String inProcessName) {
    this.server = server;
    this.inProcessName = inProcessName;
  }

  /** On an in-process transport with a unique name; connect with {@link #inProcessChannel()}. */
  public static EmbeddedBenchServer inProcess(Path dir) {
    String name = InProcessServerBuilder.generateName();
    return start(dir, Map.of(), new GrpcModule((s, limits, credentials) -> InProcessServerBuilder.forName(name)), name);
  }

  /** On Netty at 127.0.0.1:{@code port} (0: a free port, see {@link #port()}). */
  public static EmbeddedBenchServer netty(Path dir, int port) {
    return start(dir, Map.of(ServerSettings.GRPC_PORT, port), GrpcModule.netty(), null);
  }

  private static EmbeddedBenchServer start(Path dir, Map<String, Object> overrides, GrpcModule grpc,
      String inProcessName) {
    Map<String, Object> values = new HashMap<>(overrides);
    values.put(ServerSettings.EMBEDDED_DIR, dir.toString());
    values.put(ServerSettings.GRPC_HOST, "127.0.0.1");
    values.putIfAbsent(ServerSettings.GRPC_PORT, 0);
    values.put("idgen.metrics.host", "127.0.0.1");
    values.put("idgen.metrics.port", 0);
    values.put(ServerSettings.QUIET_PERIOD, "0s");
    values.put(ServerSettings.SHUTDOWN_TIMEOUT, "5s");
    Config config = ConfigFactory.parseMap(values).withFallback(ConfigFactory.defaultReference()).resolve();
    IdGenServer server = Wiring.injector(config, OperationsSettings.from(config, Map.of()),
            new EmbeddedStoreModule(), grpc, null)
        .getInstance(IdGenServer.class);
    try {
      server.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new EmbeddedBenchServer(server, inProcessName);
  }

  /** The port on Netty; -1 in-process. */
  public int port() {
    return server.port();
  }

  /** A new channel to the in-process server (default executor, like an application's). */
  public ManagedChannel inProcessChannel() {
    if (inProcessName == null) {
      throw new IllegalStateException("not an in-process server");
    }
    return InProcessChannelBuilder.forName(inProcessName).build();
  }

  /** Stops the server at once (no quiet period), then closes the allocator and the store. */
  @Override
  public void close() {
    server.finishShutdown();
  }
}
