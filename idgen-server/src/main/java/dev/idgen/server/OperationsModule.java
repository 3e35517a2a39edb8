package dev.idgen.server;

import com.google.inject.AbstractModule;
import dev.idgen.server.access.AccessModule;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.lifecycle.ServerComponent;
import dev.idgen.server.metrics.MetricsModule;
import dev.idgen.server.transport.CallDurationLimit;
import dev.idgen.server.transport.TransportModule;
import javax.annotation.Nullable;

/**
 * Binds what an operator runs the daemon with: the {@link OperationsSettings}, and through each room's
 * own module the meters, the metrics endpoint and the sequence monitor ({@link MetricsModule}), access
 * control ({@link AccessModule}), and the transport's credentials (TLS, reloaded), call-duration limit and
 * worker pool ({@link TransportModule}). The rooms contribute their {@link ServerComponent}s for
 * {@link IdGenServer} to start and stop.
 */
final class OperationsModule extends AbstractModule {

  private final OperationsSettings settings;
  @Nullable private final CallDurationLimit.Timer timer;

  OperationsModule(OperationsSettings settings) {
    this(settings, null);
  }

  /** With the call-duration limit on {@code timer} (tests control time with it); null: a real one. */
  OperationsModule(OperationsSettings settings, @Nullable CallDurationLimit.Timer timer) {
    this.settings = settings;
    this.timer = timer;
  }

  @Override
  protected void configure() {
    bind(OperationsSettings.class).toInstance(settings);
    install(new TransportModule(settings, timer));
    install(new AccessModule(settings.access()));
    install(new MetricsModule(settings));
  }
}
