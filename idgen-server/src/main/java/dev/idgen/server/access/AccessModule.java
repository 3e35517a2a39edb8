package dev.idgen.server.access;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.google.inject.multibindings.Multibinder;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.lifecycle.ServerComponent;

/**
 * Binds access control ({@code idgen.access}): the {@link AccessInterceptor} that the gRPC module installs
 * on the services, and the {@link BearerTokens} it checks tokens against, whose reloader is a
 * {@link ServerComponent}.
 */
public final class AccessModule extends AbstractModule {

  private final OperationsSettings.Access settings;

  public AccessModule(OperationsSettings.Access settings) {
    this.settings = settings;
  }

  @Override
  protected void configure() {
    Multibinder.newSetBinder(binder(), ServerComponent.class).addBinding().to(BearerTokens.class);
  }

  @Provides
  @Singleton
  BearerTokens bearerTokens() {
    return new BearerTokens(settings);
  }

  @Provides
  @Singleton
  AccessInterceptor access(BearerTokens tokens) {
    return new AccessInterceptor(settings, tokens);
  }
}
