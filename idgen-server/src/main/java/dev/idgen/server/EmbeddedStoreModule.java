package dev.idgen.server;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import dev.idgen.core.RangeStore;

/** Binds the embedded single-node {@link RangeStore}, kept in {@code idgen.embedded.dir}. */
final class EmbeddedStoreModule extends AbstractModule {

  @Provides
  @Singleton
  RangeStore store(ServerSettings settings) {
    // Placeholder until the embedded store (branch `store`) is merged into main.
    throw new IllegalStateException("the embedded store is not part of this build yet");
  }
}
