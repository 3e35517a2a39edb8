package dev.idgen.server;

import com.google.inject.Module;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.idgen.core.ForwardingRangeStore;
import dev.idgen.core.RangeStore;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.config.ServerSettings;
import io.grpc.ServerBuilder;
import io.grpc.ServerInterceptor;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.annotation.Nullable;

/**
 * The idgen daemon inside the calling JVM, for other modules' tests and benchmarks: the production object
 * graph ({@link Wiring#injector}, exactly as {@link Main} builds it) on the embedded store in a directory of
 * the caller's, served either in-process ({@link #inProcess}) or on Netty at a loopback port
 * ({@link #onLoopback}), plaintext.
 *
 * <p>Settings are {@code reference.conf}'s, except: gRPC (on Netty) and the metrics endpoint on 127.0.0.1,
 * the metrics endpoint on a free port, HTTP/JSON off, no shutdown quiet period, and a shutdown timeout of 5s.
 *
 * <p>The one public entry point into the daemon's wiring; everything else of {@code idgen-server} that is
 * public is so for the server's own packages. Not thread-safe; close it once.
 */
public final class EmbeddedDaemon implements AutoCloseable {

  private final IdGenServer server;
  @Nullable private final String inProcessName;

  private EmbeddedDaemon(IdGenServer server, @Nullable String inProcessName) {
    this.server = server;
    this.inProcessName = inProcessName;
  }

  /** In-process, under a unique name ({@link #inProcessName()}). */
  public static EmbeddedDaemon inProcess(Path dataDir) {
    return inProcess(dataDir, List.of());
  }

  /**
   * In-process, under a unique name ({@link #inProcessName()}), with {@code interceptors} around every
   * call of every service, outside the daemon's own (to observe what clients send, say).
   */
  public static EmbeddedDaemon inProcess(Path dataDir, List<ServerInterceptor> interceptors) {
    String name = InProcessServerBuilder.generateName();
    List<ServerInterceptor> outer = List.copyOf(interceptors);
    return start(dataDir, Map.of(), name, new GrpcModule((settings, limits, credentials) -> {
      ServerBuilder<?> builder = InProcessServerBuilder.forName(name);
      outer.forEach(builder::intercept);
      return builder;
    }));
  }

  /** On Netty at 127.0.0.1:{@code port} (0: a free port, see {@link #port()}), plaintext. */
  public static EmbeddedDaemon onLoopback(Path dataDir, int port) {
    return start(dataDir, Map.of(ServerSettings.GRPC_PORT, port), null, GrpcModule.netty());
  }

  /**
   * On Netty at a free loopback port, on {@code store}, which it does not close: several daemons of one test
   * on one store, as servers share a Cassandra keyspace (processes never share an embedded directory).
   */
  static EmbeddedDaemon onLoopback(RangeStore store) {
    return onLoopback(store, Map.of());
  }

  /**
   * As {@link #onLoopback(RangeStore)}, with settings {@code overrides} (keys as in {@code reference.conf}):
   * for tests in other modules and languages, {@code idgen.advance.client-lease-lifetime} gives ranges a
   * short {@code valid_for}.
   */
  public static EmbeddedDaemon onLoopback(RangeStore store, Map<String, Object> overrides) {
    RangeStore shared = new ForwardingRangeStore(store) {}; // does not close the store it forwards to
    return start(Path.of("unused"), overrides, null, GrpcModule.netty(),
        binder -> binder.bind(RangeStore.class).toInstance(shared));
  }

  private static EmbeddedDaemon start(Path dataDir, Map<String, Object> overrides, @Nullable String name,
      GrpcModule grpc) {
    return start(dataDir, overrides, name, grpc, new EmbeddedStoreModule());
  }

  private static EmbeddedDaemon start(Path dataDir, Map<String, Object> overrides, @Nullable String name,
      GrpcModule grpc, Module storeModule) {
    Map<String, Object> values = new HashMap<>();
    values.put(ServerSettings.EMBEDDED_DIR, dataDir.toString());
    values.put(ServerSettings.GRPC_HOST, "127.0.0.1");
    values.put(ServerSettings.GRPC_PORT, 0);
    values.put(ServerSettings.QUIET_PERIOD, "0s");
    values.put(ServerSettings.SHUTDOWN_TIMEOUT, "5s");
    // Tests and benchmarks: AdvanceSequence returns once the servers confirmed, without waiting for
    // client leases (ranges carry no valid_for).
    values.put(ServerSettings.CLIENT_LEASE_LIFETIME, "0s");
    values.put("idgen.metrics.host", "127.0.0.1");
    values.put("idgen.metrics.port", 0);
    // No HTTP/JSON: several daemons of one test JVM must not contend for port 8080.
    values.put(dev.idgen.server.http.HttpSettings.PORT, 0);
    values.putAll(overrides);
    Config config = ConfigFactory.parseMap(values).withFallback(ConfigFactory.defaultReference()).resolve();
    IdGenServer server = Wiring.injector(config, OperationsSettings.from(config, Map.of()),
            storeModule, grpc, null)
        .getInstance(IdGenServer.class);
    try {
      server.start();
    } catch (IOException e) {
      server.finishShutdown();
      throw new UncheckedIOException(e);
    }
    return new EmbeddedDaemon(server, name);
  }

  /** The in-process server's name, for {@code InProcessChannelBuilder.forName}. */
  public String inProcessName() {
    if (inProcessName == null) {
      throw new IllegalStateException("not an in-process daemon: connect to 127.0.0.1:" + port());
    }
    return inProcessName;
  }

  /** The port on Netty; -1 in-process. */
  public int port() {
    return server.port();
  }

  /** Stops at once (no quiet period), waits for open calls, then closes the allocator and the store. */
  @Override
  public void close() {
    server.finishShutdown();
  }
}
