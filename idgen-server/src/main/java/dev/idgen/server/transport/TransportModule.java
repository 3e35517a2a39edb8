package dev.idgen.server.transport;

import com.google.inject.AbstractModule;
import com.google.inject.Injector;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.google.inject.multibindings.Multibinder;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.lifecycle.ServerComponent;
import javax.annotation.Nullable;

/**
 * Binds what the gRPC server runs on besides its services: the {@link WorkerPool} and the
 * {@link OffloadInterceptor} that moves calls to it, the credentials ({@link TlsCredentials}, reloaded) and
 * the call-duration limit ({@link CallDurationLimit}). Contributes their {@link ServerComponent}s.
 */
public final class TransportModule extends AbstractModule {

  private final OperationsSettings settings;
  @Nullable private final CallDurationLimit.Timer timer;

  /** With the call-duration limit on {@code timer} (tests control time with it); null: a real one. */
  public TransportModule(OperationsSettings settings, @Nullable CallDurationLimit.Timer timer) {
    this.settings = settings;
    this.timer = timer;
  }

  @Override
  protected void configure() {
    bind(WorkerPool.class).in(Singleton.class);
    Multibinder<ServerComponent> components = Multibinder.newSetBinder(binder(), ServerComponent.class);
    components.addBinding().to(WorkerPool.class);
    components.addBinding().to(TlsCredentials.class);
    if (timer == null) {
      components.addBinding().to(CallDurationLimit.SweepingTimer.class);
    }
  }

  @Provides
  @Singleton
  OffloadInterceptor offload(WorkerPool workers) {
    return new OffloadInterceptor(workers);
  }

  @Provides
  @Singleton
  TlsCredentials tls() {
    return new TlsCredentials(settings.tls());
  }

  @Provides
  @Singleton
  CallDurationLimit.SweepingTimer sweepingTimer() {
    return CallDurationLimit.SweepingTimer.started();
  }

  @Provides
  @Singleton
  CallDurationLimit callDurationLimit(Injector injector) {
    CallDurationLimit.Timer t = timer != null ? timer : injector.getInstance(CallDurationLimit.SweepingTimer.class);
    return new CallDurationLimit(settings.limits().maxCallDuration(), t);
  }
}
