package dev.idgen.server;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.grpc.ServerBuilder;
import io.grpc.ServerInterceptor;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The real daemon for idgen-cli's tests: the production Guice modules and the embedded store (as
 * idgen-server's own {@code TestServer} wires them; a copy of those few lines, since test classes are not
 * shared between modules), served in-process or on a loopback port. In this package because the modules
 * are package-private. Close it after each test.
 */
public final class DaemonForTests implements AutoCloseable {

  private final IdGenServer server;
  private final String inProcessName;

  private DaemonForTests(IdGenServer server, String inProcessName) {
    this.server = server;
    this.inProcessName = inProcessName;
  }

  /** In-process (name: {@link #inProcessName()}), direct executor, {@code interceptors} on every call. */
  public static DaemonForTests inProcess(Path dataDir, List<ServerInterceptor> interceptors) {
    String name = InProcessServerBuilder.generateName();
    return start(dataDir, Map.of(), name, (settings, limits, credentials) -> {
      ServerBuilder<?> builder = InProcessServerBuilder.forName(name).directExecutor();
      interceptors.forEach(builder::intercept);
      return builder;
    });
  }

  /** On Netty, on 127.0.0.1 and a free port ({@link #port()}), plaintext. */
  public static DaemonForTests onLoopback(Path dataDir) {
    return start(dataDir, Map.of(ServerSettings.GRPC_HOST, "127.0.0.1", ServerSettings.GRPC_PORT, 0), null,
        (settings, limits, credentials) -> NettyServerBuilder.forAddress(
            new InetSocketAddress(settings.grpcHost(), settings.grpcPort())));
  }

  private static DaemonForTests start(Path dataDir, Map<String, Object> overrides, String name,
      GrpcModule.Transport transport) {
    Map<String, Object> values = new HashMap<>();
    values.put(ServerSettings.QUIET_PERIOD, "0s");
    values.put(ServerSettings.SHUTDOWN_TIMEOUT, "5s");
    values.put(ServerSettings.EMBEDDED_DIR, dataDir.toString());
    values.put("idgen.metrics.host", "127.0.0.1");
    values.put("idgen.metrics.port", 0);
    values.putAll(overrides);
    Config config = ConfigFactory.parseMap(values).withFallback(ConfigFactory.defaultReference()).resolve();
    IdGenServer server = Wiring.injector(config, OperationsSettings.from(config, Map.of()),
            new EmbeddedStoreModule(), new GrpcModule(transport), null)
        .getInstance(IdGenServer.class);
    try {
      server.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new DaemonForTests(server, name);
  }

  public String inProcessName() {
    return inProcessName;
  }

  public int port() {
    return server.port();
  }

  @Override
  public void close() {
    server.finishShutdown();
  }
}
