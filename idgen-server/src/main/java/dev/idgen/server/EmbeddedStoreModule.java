package dev.idgen.server;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import dev.idgen.core.RangeStore;
import dev.idgen.core.StoreUnavailableException;
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
    // Opened eagerly (Main builds the injector in Stage.PRODUCTION): a directory that cannot be used (a
    // damaged file, a full or read-only disk) fails the start with the store's message, before the port is
    // bound, so the server never reports SERVING on it.
    try {
      return EmbeddedRangeStore.open(settings.embeddedDir());
    } catch (StoreUnavailableException e) {
      // Main logs the root cause of a failed start: let that be the store's message, which names the file
      // and the cause, not SQLite's exception under it (kept, as suppressed, for the stack trace).
      StoreUnavailableException refused = new StoreUnavailableException(e.getMessage());
      if (e.getCause() != null) {
        refused.addSuppressed(e.getCause());
      }
      throw refused;
    }
  }
}
