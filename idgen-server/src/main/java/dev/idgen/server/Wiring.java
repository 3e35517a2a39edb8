package dev.idgen.server;

import com.google.inject.Guice;
import com.google.inject.Injector;
import com.google.inject.Module;
import com.google.inject.Stage;
import com.typesafe.config.Config;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.config.SettingsModule;
import dev.idgen.server.http.HttpModule;
import dev.idgen.server.http.HttpSettings;
import dev.idgen.server.transport.CallDurationLimit;
import javax.annotation.Nullable;

/**
 * The daemon's object graph, one module per concern, exactly as {@link Main} wires it. Tests (in this
 * package) and {@link EmbeddedDaemon} (for other modules' tests and benchmarks) start the same graph with
 * another store module or transport, so that what they exercise is what production runs.
 */
final class Wiring {
  private Wiring() {}

  /**
   * @param config the resolved configuration (reference.conf as fallback)
   * @param timer the call-duration limit's timer; null: the production scheduler
   */
  static Injector injector(Config config, OperationsSettings operations, Module storeModule, GrpcModule grpc,
      @Nullable CallDurationLimit.Timer timer) {
    return Guice.createInjector(Stage.PRODUCTION,
        new SettingsModule(config, ServerSettings.from(config)),
        storeModule,
        new AllocatorModule(),
        new OperationsModule(operations, timer),
        new HttpModule(HttpSettings.from(config)),
        grpc);
  }
}
