package dev.idgen.server;

import com.google.inject.AbstractModule;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import dev.idgen.core.Allocator;
import dev.idgen.core.AllocatorBuilder;
import dev.idgen.core.RangeStore;
import dev.idgen.server.config.AdminSettings;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.metrics.IdGenMetrics;

/**
 * Builds the process's one {@link Allocator} over whichever {@link RangeStore} the store module bound,
 * with its reservations timed ({@link IdGenMetrics#metered}). The allocator owns its refill threads;
 * {@link IdGenServer} closes it, then the store.
 */
final class AllocatorModule extends AbstractModule {

  @Provides
  @Singleton
  Allocator allocator(RangeStore store, ServerSettings settings, AdminSettings admin, IdGenMetrics metrics,
      com.google.inject.Provider<io.grpc.Server> server) {
    AllocatorBuilder b = Allocator.builder(metrics.metered(store));
    if (!settings.serverName().isEmpty() || settings.grpcPort() != 0) {
      b.serverName(settings.effectiveServerName(settings.grpcPort()));
    } // else: any free port, so no stable name: the allocator's own (host, process, instance)
    return b
        .maxIdsPerCall(settings.maxIdsPerCall())
        .outageRunway(settings.outageRunway())
        .minNodeBlock(settings.minNodeBlock())
        .refillStep(settings.refillStep())
        .serverLease(settings.serverLease())
        .advanceConfirmTimeout(settings.advanceConfirmTimeout())
        .clientLeaseLifetime(settings.clientLeaseLifetime())
        .unloadIdleAfter(settings.unloadIdleAfter())
        .giveBackDeadline(settings.giveBackDeadline())
        .ownerLease(settings.ownerLease())
        .ownerLeaseMargin(settings.ownerLeaseMarginDuration())
        .undeleteWindow(admin.undeleteWindow())
        // Asked for at the first claim of a strict sequence, by which time the port is bound (port 0 too).
        .ownerTarget(() -> settings.effectiveAdvertiseAddress(server.get().getPort()))
        .build();
  }
}
