package dev.idgen.server.http;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.google.inject.multibindings.Multibinder;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.lifecycle.ServerComponent;
import dev.idgen.server.metrics.GrpcCallMetrics;
import dev.idgen.server.transport.TlsCredentials;

/**
 * Binds the HTTP/JSON port ({@link HttpServer}) as a {@link ServerComponent} when {@code idgen.http.port} is
 * not 0. It needs {@link PublicServices}, which the gRPC module provides.
 */
public final class HttpModule extends AbstractModule {

  private final HttpSettings settings;

  public HttpModule(HttpSettings settings) {
    this.settings = settings;
  }

  @Override
  protected void configure() {
    bind(HttpSettings.class).toInstance(settings);
    if (settings.enabled()) {
      Multibinder.newSetBinder(binder(), ServerComponent.class).addBinding().to(HttpServer.class);
    }
  }

  @Provides
  @Singleton
  HttpServer httpServer(ServerSettings server, OperationsSettings operations, PublicServices services,
      GrpcCallMetrics metrics, TlsCredentials tls) {
    return new HttpServer(settings, server, operations.limits(), services, metrics, tls);
  }

  /** The port HTTP/JSON listens on; -1 when off or not started. For tests and the start-up log. */
  public static int port(com.google.inject.Injector injector) {
    return settings(injector).enabled() ? injector.getInstance(HttpServer.class).port() : -1;
  }

  private static HttpSettings settings(com.google.inject.Injector injector) {
    return injector.getInstance(HttpSettings.class);
  }
}
