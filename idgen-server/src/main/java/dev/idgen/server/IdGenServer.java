package dev.idgen.server;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.google.inject.Inject;
import com.google.inject.Singleton;
import dev.idgen.core.Allocator;
import dev.idgen.core.RangeStore;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.api.PeerService;
import dev.idgen.server.lifecycle.ServerComponent;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running daemon: the gRPC server over the allocator over the store, and their life cycle.
 *
 * <p>Health: the server as a whole ({@code ""}) and each service report NOT_SERVING until the store
 * answers ({@link RangeStore#ready()}: the Cassandra store connects in the background, so that a server
 * started before Cassandra waits for it instead of exiting) and the allocator can serve
 * ({@link Allocator#ready()}: its first floor sync), SERVING from then on, and NOT_SERVING again
 * from the start of a shutdown. A store that gives up connecting stops the server ({@link #startFailure()}).
 * Once SERVING, a server stays so while the store is unreachable: it serves from its reserves. The name
 * {@value #LIVENESS} reports SERVING for as long as the process serves gRPC, whatever the store: what a
 * liveness probe asks, so that waiting for Cassandra is not mistaken for a hung process.
 *
 * <p>Shutdown is graceful and in steps, each of which a test can take on its own:
 * <ol>
 *   <li>{@link #beginShutdown()}: health reports NOT_SERVING for every service and for the server as a
 *       whole (""), while calls are still served, so that balancers and probes notice first;
 *   <li>the quiet period ({@code idgen.shutdown.quiet-period});
 *   <li>{@link #stopAccepting()}: new calls are refused, open calls (streams) go on, but forwarding servers'
 *       streams ({@link PeerService}) end once the request each serves is answered;
 *   <li>{@link #finishShutdown()}: open calls get up to {@code idgen.shutdown.timeout} to finish, then
 *       are cancelled; the allocator (its reserves become a counted gap) and the store are closed.
 * </ol>
 * {@link #shutdown()} takes them all; a JVM shutdown hook calls it on SIGTERM.
 *
 * <p>Thread-safe: the shutdown hook, the main thread and tests may call in at once; the steps run at most
 * once each, under {@code lock}.
 */
@ThreadSafe
@Singleton
final class IdGenServer {

  private static final Logger log = LoggerFactory.getLogger(IdGenServer.class);

  /** The health service's name for the server as a whole. */
  private static final String OVERALL = HealthStatusManager.SERVICE_NAME_ALL_SERVICES;

  /** The health service's name that is SERVING while the process runs, for liveness probes. */
  static final String LIVENESS = "liveness";

  private final Server server;
  private final HealthStatusManager health;
  private final Allocator allocator;
  private final RangeStore store;
  private final ServerSettings settings;
  private final Set<ServerComponent> components;
  private final PeerService peers;
  private final Object lock = new Object();
  /** Serializes whole {@link #shutdown()}s; taken before {@code lock}, never after. */
  private final Object shutdownLock = new Object();

  @GuardedBy("lock")
  private boolean shuttingDown;

  @GuardedBy("lock")
  private boolean closed;

  /** Why the store gave up connecting; null while it has not. */
  @GuardedBy("lock")
  private Throwable startFailure;

  @Inject
  IdGenServer(Server server, HealthStatusManager health, Allocator allocator, RangeStore store,
      ServerSettings settings, Set<ServerComponent> components, PeerService peers) {
    this.peers = peers;
    this.components = components;
    this.server = server;
    this.health = health;
    this.allocator = allocator;
    this.store = store;
    this.settings = settings;
  }

  /**
   * Starts listening, then the other components (the metrics endpoint, say), and reports SERVING as soon
   * as the store answers (at once, unless it is still connecting).
   *
   * @throws IOException if the address cannot be bound (the port is taken, say)
   */
  IdGenServer start() throws IOException {
    synchronized (lock) {
      if (shuttingDown) {
        throw new IllegalStateException("already shut down");
      }
      // The health manager starts with "" SERVING: not before the store answers.
      setHealth(ServingStatus.NOT_SERVING);
      health.setStatus(LIVENESS, ServingStatus.SERVING);
      server.start();
      for (ServerComponent component : components) {
        component.start();
      }
    }
    log.info("idgen-server {} started: gRPC on {}, {}", Versions.server(), server.getListenSockets(),
        settings.describeStore());
    // The allocator is ready once its store answers and it has confirmed the floors (it serves from then on).
    allocator.ready().whenComplete((ok, error) -> storeReady(error));
    return this;
  }

  /** The store answers (error null), or gave up connecting: SERVING, or a stop. */
  private void storeReady(Throwable error) {
    synchronized (lock) {
      if (shuttingDown) {
        return;
      }
      if (error == null) {
        setHealth(ServingStatus.SERVING);
        log.info("idgen-server is SERVING: the store answers");
        return;
      }
      startFailure = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
      log.error("idgen-server stops: the store could not be opened: {}", startFailure.getMessage());
    }
    // Not on this thread: it is the store's own, which closing the store ends.
    Thread stopper = new Thread(this::shutdown, "idgen-start-failed");
    stopper.setDaemon(true);
    stopper.start();
  }

  /** Why the store gave up connecting (the server then stops by itself), if it did. */
  Optional<Throwable> startFailure() {
    synchronized (lock) {
      return Optional.ofNullable(startFailure);
    }
  }

  /** The port the server listens on (the chosen one if {@code idgen.grpc.port} is 0); -1 in-process. */
  int port() {
    return server.getPort();
  }

  /** Step 1: health reports NOT_SERVING; calls are still served. Idempotent. */
  void beginShutdown() {
    synchronized (lock) {
      if (shuttingDown) {
        return;
      }
      shuttingDown = true;
      setHealth(ServingStatus.NOT_SERVING);
      // Terminal: nothing can flip the status back to SERVING from here on.
      health.enterTerminalState();
    }
    log.info("idgen-server stopping: health is NOT_SERVING; new calls are refused after {}",
        ServerSettings.format(settings.quietPeriod()));
  }

  /** Step 3: new calls are refused; open calls go on. Idempotent. */
  void stopAccepting() {
    beginShutdown();
    server.shutdown();
    for (ServerComponent component : components) {
      component.stopAccepting(); // the HTTP/JSON port closes with the gRPC one
    }
    // Forwarding servers' streams would never end by themselves: each ends once its request in hand is answered.
    peers.drain();
  }

  /**
   * Step 4: waits up to {@code idgen.shutdown.timeout} for open calls, cancels the rest, then closes the
   * allocator and the store. Idempotent.
   */
  void finishShutdown() {
    stopAccepting();
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      boolean interrupted = false;
      try {
        if (!server.awaitTermination(settings.shutdownTimeout().toNanos(), TimeUnit.NANOSECONDS)) {
          log.warn("Open calls did not finish within {}; cancelling them",
              ServerSettings.format(settings.shutdownTimeout()));
        }
      } catch (InterruptedException e) {
        interrupted = true;
      }
      for (ServerComponent component : components) {
        component.awaitCalls(settings.shutdownTimeout()); // the HTTP/JSON port's calls, before the allocator closes
      }
      server.shutdownNow();
      try {
        // Cancelled calls end promptly; bounded all the same, so that a stuck handler cannot hang exit.
        server.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        interrupted = true;
      }
      closeQuietly("allocator", allocator);
      logReturned();
      closeQuietly("store", store);
      for (ServerComponent component : components) {
        closeQuietly(component.toString(), component);
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    log.info("idgen-server stopped");
  }

  /**
   * All the steps, with the quiet period between the first two. A second caller (the shutdown hook and
   * a test, say) waits for the first one to finish.
   */
  void shutdown() {
    synchronized (shutdownLock) {
      boolean began;
      synchronized (lock) {
        began = !shuttingDown;
      }
      beginShutdown();
      if (began) {
        quietPeriod(settings.quietPeriod());
      }
      finishShutdown();
    }
  }

  /**
   * After the allocator closed: what its reserves became, in one line an operator (or the chaos harness,
   * which reads it from the log of a server it stopped) can find: given back to the store, or a gap.
   */
  private void logReturned() {
    try {
      long abandoned = 0;
      for (Allocator.SequenceStats s : allocator.sequenceStats()) {
        abandoned += s.abandoned();
      }
      log.info("reserves at shutdown: returned={} IDs given back to the store, abandoned={} IDs not given"
          + " back (a gap)", allocator.stats().returned(), abandoned);
    } catch (RuntimeException e) {
      log.warn("Could not read the allocator's counters at shutdown", e);
    }
  }

  /** Blocks until the server has terminated (after {@link #shutdown()}, from another thread). */
  void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }

  private static void quietPeriod(Duration period) {
    if (period.isZero()) {
      return;
    }
    try {
      Thread.sleep(period.toMillis());
    } catch (InterruptedException e) {
      // Asked to hurry: skip the rest of the quiet period, but still stop in order.
      Thread.currentThread().interrupt();
    }
  }

  @GuardedBy("lock")
  private void setHealth(ServingStatus status) {
    List<String> names = new ArrayList<>();
    names.add(OVERALL);
    for (ServerServiceDefinition service : server.getServices()) {
      names.add(service.getServiceDescriptor().getName());
    }
    for (String name : names) {
      health.setStatus(name, status);
    }
  }

  private static void closeQuietly(String what, AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception e) {
      // Shutting down anyway: report and go on closing the rest.
      log.warn("Closing the {} failed", what, e);
    }
  }
}
