package dev.idgen.server;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import dev.idgen.core.RangeStore;
import dev.idgen.core.store.embedded.EmbeddedRangeStore;
import dev.idgen.server.config.ServerSettings;

/**
 * Binds the embedded single-node {@link RangeStore}, kept durably in {@code idgen.embedded.dir}.
 * {@link IdGenServer} closes it at shutdown, after the allocator.
 */
final class EmbeddedStoreModule extends AbstractModule {

  @Provides
  @Singleton
  RangeStore store(ServerSettings settings) {
    // Opened eagerly (Main builds the injector in Stage.PRODUCTION): a directory that cannot be used
    // fails the start with the store's message, before the port is bound.
    return EmbeddedRangeStore.open(settings.embeddedDir());
  }
}
