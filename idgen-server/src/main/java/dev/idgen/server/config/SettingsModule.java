package dev.idgen.server.config;

import com.google.inject.AbstractModule;
import com.typesafe.config.Config;

/**
 * Binds the configuration: the typed {@link ServerSettings} and {@link AdminSettings}, and the raw {@link Config} for modules
 * whose settings live in their own subtree (a store's, for instance).
 */
public final class SettingsModule extends AbstractModule {

  private final Config config;
  private final ServerSettings settings;

  /** {@code settings} must have been read from {@code config} ({@link ServerSettings#from}). */
  public SettingsModule(Config config, ServerSettings settings) {
    this.config = config;
    this.settings = settings;
  }

  @Override
  protected void configure() {
    bind(Config.class).toInstance(config);
    bind(ServerSettings.class).toInstance(settings);
    bind(AdminSettings.class).toInstance(AdminSettings.from(config));
  }
}
