package dev.idgen.server;

import com.google.inject.Injector;
import com.google.inject.Module;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.core.ForwardingRangeStore;
import dev.idgen.core.RangeStore;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.transport.CallDurationLimit;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.MetadataUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The daemon as production wires it (the same Guice modules, but the test's store and an in-process
 * transport with a unique name), started, with a direct-executor channel to it. Close it after each test.
 *
 * <p>Public, with the few static helpers that tests of several packages share (statuses, ID counts, bearer
 * tokens, metric samples, raw request bytes): the tests of each package ({@code api}, {@code access},
 * {@code transport}, {@code metrics}) drive the whole daemon through it.
 */
public final class TestServer implements AutoCloseable {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  /** The test's store; null on the embedded store. */
  public final InMemoryRangeStore store;
  final IdGenServer server;
  /** In-process, or plaintext over Netty; null over Netty with TLS. */
  public final ManagedChannel channel;
  public final ServerSettings settings;
  /** The daemon's object graph: what a test reaches into (a reloader to run now, the meter registry). */
  public final Injector injector;

  private TestServer(InMemoryRangeStore store, IdGenServer server, ManagedChannel channel,
      ServerSettings settings, Injector injector) {
    this.store = store;
    this.server = server;
    this.channel = channel;
    this.settings = settings;
    this.injector = injector;
  }

  public static TestServer start() {
    return start(Map.of());
  }

  /** Settings are reference.conf's, with no quiet period, overridden by {@code overrides}. */
  public static TestServer start(Map<String, Object> overrides) {
    InMemoryRangeStore store = new InMemoryRangeStore();
    return start(overrides, binder -> binder.bind(RangeStore.class).toInstance(store), store);
  }

  /** In-process, with the call-duration limit on {@code timer}, which the test fires. */
  public static TestServer start(Map<String, Object> overrides, CallDurationLimit.Timer timer) {
    InMemoryRangeStore store = new InMemoryRangeStore();
    return start(overrides, binder -> binder.bind(RangeStore.class).toInstance(store), store, timer, false);
  }

  /** The daemon on the production embedded store, in {@code dir}. */
  public static TestServer startEmbedded(Path dir) {
    return startEmbedded(dir, Map.of());
  }

  /** The daemon on the production embedded store, in {@code dir}, with settings {@code overrides}. */
  public static TestServer startEmbedded(Path dir, Map<String, Object> overrides) {
    Map<String, Object> values = new HashMap<>(overrides);
    values.put(ServerSettings.EMBEDDED_DIR, dir.toString());
    return start(values, new EmbeddedStoreModule(), null);
  }

  /**
   * In-process, on {@code store}, which it does not close: several servers of one test on one store, as
   * servers share a Cassandra keyspace (processes never share an embedded directory: its file is locked).
   */
  public static TestServer startOn(RangeStore store, Map<String, Object> overrides) {
    RangeStore shared = new ForwardingRangeStore(store) {}; // does not close the store it forwards to
    return start(overrides, binder -> binder.bind(RangeStore.class).toInstance(shared), null);
  }

  /**
   * Over Netty on a free loopback port ({@link #port()}), with the production transport settings
   * (TLS, limits). {@link #channel} is a plaintext channel to it, or null when TLS is on.
   */
  public static TestServer startNetty(Map<String, Object> overrides) {
    return startNetty(overrides, new InMemoryRangeStore());
  }

  /** Over Netty, on the given store (a test's subclass that stalls or fails). */
  public static TestServer startNetty(Map<String, Object> overrides, InMemoryRangeStore store) {
    Map<String, Object> values = new HashMap<>(overrides);
    values.putIfAbsent(ServerSettings.GRPC_HOST, "127.0.0.1");
    values.putIfAbsent(ServerSettings.GRPC_PORT, 0);
    return start(values, binder -> binder.bind(RangeStore.class).toInstance(store), store, null, true);
  }

  /**
   * In-process, on the production Cassandra store module configured by {@code idgen.cassandra.*} of
   * {@code overrides} (and their {@code datastax-java-driver} block). Started whether or not Cassandra
   * answers: the store connects in the background.
   */
  public static TestServer startCassandra(Map<String, Object> overrides) {
    Map<String, Object> values = new HashMap<>(overrides);
    values.put(ServerSettings.STORE, "cassandra");
    return startWith(values, config -> new CassandraStoreModule(CassandraStoreModule.settings(config)), null, null,
        false);
  }

  private static TestServer start(Map<String, Object> overrides, Module storeModule,
      InMemoryRangeStore store) {
    return start(overrides, storeModule, store, null, false);
  }

  private static TestServer start(Map<String, Object> overrides, Module storeModule,
      InMemoryRangeStore store, CallDurationLimit.Timer timer, boolean netty) {
    return startWith(overrides, config -> storeModule, store, timer, netty);
  }

  /** With the store module that {@code storeModuleFor} makes of the test's configuration. */
  private static TestServer startWith(Map<String, Object> overrides, Function<Config, Module> storeModuleFor,
      InMemoryRangeStore store, CallDurationLimit.Timer timer, boolean netty) {
    Map<String, Object> values = new HashMap<>();
    values.put(ServerSettings.QUIET_PERIOD, "0s");
    values.put(ServerSettings.SHUTDOWN_TIMEOUT, "5s");
    // Advances return at once unless a test asks for client leases that expire.
    values.put(ServerSettings.CLIENT_LEASE_LIFETIME, "0s");
    values.put("idgen.metrics.host", "127.0.0.1");
    values.put("idgen.metrics.port", 0);
    // HTTP/JSON off unless a test asks for it (idgen.http.port = -1: a free port, httpPort()).
    values.put(dev.idgen.server.http.HttpSettings.HOST, "127.0.0.1");
    values.put(dev.idgen.server.http.HttpSettings.PORT, 0);
    values.putAll(overrides);
    // Without the driver's reference.conf, as ConfigLoader reads it: datastax-java-driver is the user's.
    Config config = ConfigFactory.parseMap(values)
        .withFallback(ConfigFactory.defaultReference().withoutPath(CassandraStoreModule.DRIVER_ROOT)).resolve();
    ServerSettings settings = ServerSettings.from(config);
    OperationsSettings operations = OperationsSettings.from(config, Map.of());
    String name = InProcessServerBuilder.generateName();
    Injector injector = Wiring.injector(config, operations, storeModuleFor.apply(config),
        netty ? GrpcModule.netty()
            : new GrpcModule((s, limits, credentials) -> InProcessServerBuilder.forName(name).directExecutor()),
        timer);
    IdGenServer server = injector.getInstance(IdGenServer.class);
    try {
      server.start();
    } catch (IOException e) {
      server.finishShutdown();
      throw new UncheckedIOException(e);
    }
    ManagedChannel channel;
    if (!netty) {
      channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    } else if (!operations.tls().enabled()) {
      channel = io.grpc.Grpc.newChannelBuilderForAddress("127.0.0.1", server.port(),
          io.grpc.InsecureChannelCredentials.create()).build();
    } else {
      channel = null;
    }
    return new TestServer(store, server, channel, settings, injector);
  }

  /** The HTTP/JSON port; -1 when off (the tests' default). */
  public int httpPort() {
    return dev.idgen.server.http.HttpModule.port(injector);
  }

  /** The gRPC port (Netty), -1 in-process. */
  public int port() {
    return server.port();
  }

  /** The server's one allocator: to look at what it has loaded. */
  public dev.idgen.core.Allocator allocator() {
    return injector.getInstance(dev.idgen.core.Allocator.class);
  }

  public IdGenGrpc.IdGenBlockingStub idGen() {
    return IdGenGrpc.newBlockingStub(channel);
  }

  public SequenceAdminGrpc.SequenceAdminBlockingStub admin() {
    return SequenceAdminGrpc.newBlockingStub(channel);
  }

  public ServingStatus health(String service) {
    return HealthGrpc.newBlockingStub(channel)
        .check(HealthCheckRequest.newBuilder().setService(service).build())
        .getStatus();
  }

  public Sequence create(String name) {
    return admin().createSequence(CreateSequenceRequest.newBuilder().setName(name).build());
  }

  /** The ranges of one Allocate call; throws its error status (after reading every range). */
  public List<IdRange> allocate(String sequence, long count) {
    return allocate(sequence, count, new ArrayList<>());
  }

  /**
   * The ranges of one Allocate call, each also added to {@code received} as it arrives, so that the ranges
   * streamed before an error status are still seen.
   */
  public List<IdRange> allocate(String sequence, long count, List<IdRange> received) {
    Iterator<IdRange> ranges = idGen().allocate(
        AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build());
    List<IdRange> result = new ArrayList<>();
    while (ranges.hasNext()) { // hasNext() throws the call's error status once the ranges are read
      IdRange range = ranges.next();
      received.add(range);
      result.add(range);
    }
    return result;
  }

  /** Every ID of {@code ranges}, in order. */
  public static List<Long> ids(List<IdRange> ranges) {
    List<Long> ids = new ArrayList<>();
    for (IdRange range : ranges) {
      for (long i = 0; i < range.getCount(); i++) {
        ids.add(range.getFirst() + i * range.getStride());
      }
    }
    return ids;
  }

  public static long count(List<IdRange> ranges) {
    return ranges.stream().mapToLong(IdRange::getCount).sum();
  }

  /** Fails the test unless {@code call} fails; returns its status exception. */
  public static StatusRuntimeException failure(Runnable call) {
    try {
      call.run();
    } catch (StatusRuntimeException e) {
      return e;
    }
    throw new AssertionError("expected the call to fail with a status");
  }

  /** A client interceptor that sends {@code authorization: Bearer TOKEN}. */
  public static ClientInterceptor bearer(String token) {
    Metadata headers = new Metadata();
    headers.put(AUTHORIZATION, "Bearer " + token);
    return MetadataUtils.newAttachHeadersInterceptor(headers);
  }

  /** The value of one sample of a Prometheus scrape, e.g. {@code idgen_ids_lost_total{reason="advanced"}}. */
  public static double sample(String scrape, String series) {
    for (String line : scrape.split("\n")) {
      if (line.startsWith(series + " ") || (!series.contains("{") && line.startsWith(series + "{"))) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    throw new AssertionError("no sample " + series + " in:\n" + scrape);
  }

  /** Requests and responses as raw bytes: to send what is not a valid message. */
  public static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  };

  @Override
  public void close() {
    if (channel != null) {
      channel.shutdownNow();
    }
    server.finishShutdown();
  }
}
