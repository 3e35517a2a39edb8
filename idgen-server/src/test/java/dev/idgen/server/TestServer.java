package dev.idgen.server;

import com.google.inject.Guice;
import com.google.inject.Module;
import com.google.inject.Stage;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.core.RangeStore;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The daemon as production wires it (the same Guice modules, but the test's store and an in-process
 * transport with a unique name), started, with a direct-executor channel to it. Close it after each test.
 */
final class TestServer implements AutoCloseable {

  /** The test's store; null on the embedded store. */
  final InMemoryRangeStore store;
  final IdGenServer server;
  final ManagedChannel channel;
  final ServerSettings settings;

  private TestServer(InMemoryRangeStore store, IdGenServer server, ManagedChannel channel,
      ServerSettings settings) {
    this.store = store;
    this.server = server;
    this.channel = channel;
    this.settings = settings;
  }

  static TestServer start() {
    return start(Map.of());
  }

  /** Settings are reference.conf's, with no quiet period, overridden by {@code overrides}. */
  static TestServer start(Map<String, Object> overrides) {
    InMemoryRangeStore store = new InMemoryRangeStore();
    return start(overrides, binder -> binder.bind(RangeStore.class).toInstance(store), store);
  }

  /** The daemon on the production embedded store, in {@code dir}. */
  static TestServer startEmbedded(Path dir) {
    return start(Map.of(ServerSettings.EMBEDDED_DIR, dir.toString()), new EmbeddedStoreModule(), null);
  }

  private static TestServer start(Map<String, Object> overrides, Module storeModule,
      InMemoryRangeStore store) {
    Map<String, Object> values = new HashMap<>();
    values.put(ServerSettings.QUIET_PERIOD, "0s");
    values.put(ServerSettings.SHUTDOWN_TIMEOUT, "5s");
    values.putAll(overrides);
    Config config = ConfigFactory.parseMap(values).withFallback(ConfigFactory.defaultReference()).resolve();
    ServerSettings settings = ServerSettings.from(config);
    String name = InProcessServerBuilder.generateName();
    IdGenServer server = Guice.createInjector(Stage.PRODUCTION,
            new SettingsModule(config, settings),
            storeModule,
            new AllocatorModule(),
            new GrpcModule(s -> InProcessServerBuilder.forName(name).directExecutor()))
        .getInstance(IdGenServer.class);
    try {
      server.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ManagedChannel channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    return new TestServer(store, server, channel, settings);
  }

  IdGenGrpc.IdGenBlockingStub idGen() {
    return IdGenGrpc.newBlockingStub(channel);
  }

  SequenceAdminGrpc.SequenceAdminBlockingStub admin() {
    return SequenceAdminGrpc.newBlockingStub(channel);
  }

  ServingStatus health(String service) {
    return HealthGrpc.newBlockingStub(channel)
        .check(HealthCheckRequest.newBuilder().setService(service).build())
        .getStatus();
  }

  Sequence create(String name) {
    return admin().createSequence(CreateSequenceRequest.newBuilder().setName(name).build());
  }

  /** The ranges of one Allocate call; throws its error status (after reading every range). */
  List<IdRange> allocate(String sequence, long count) {
    return allocate(sequence, count, new ArrayList<>());
  }

  /**
   * The ranges of one Allocate call, each also added to {@code received} as it arrives, so that the ranges
   * streamed before an error status are still seen.
   */
  List<IdRange> allocate(String sequence, long count, List<IdRange> received) {
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
  static List<Long> ids(List<IdRange> ranges) {
    List<Long> ids = new ArrayList<>();
    for (IdRange range : ranges) {
      for (long i = 0; i < range.getCount(); i++) {
        ids.add(range.getFirst() + i * range.getStride());
      }
    }
    return ids;
  }

  static long count(List<IdRange> ranges) {
    return ranges.stream().mapToLong(IdRange::getCount).sum();
  }

  /** Fails the test unless {@code call} fails; returns its status exception. */
  static StatusRuntimeException failure(Runnable call) {
    try {
      call.run();
    } catch (StatusRuntimeException e) {
      return e;
    }
    throw new AssertionError("expected the call to fail with a status");
  }

  @Override
  public void close() {
    channel.shutdownNow();
    server.finishShutdown();
  }
}
