package dev.idgen.server.lifecycle;

import java.io.IOException;
import java.time.Duration;

/**
 * A part of the daemon with a life cycle of its own (the metrics endpoint, the sequence monitor, the
 * certificate reloader): {@code IdGenServer} starts each one after the gRPC server, and closes each one
 * after the allocator and the store. Modules contribute them through a Guice {@code Multibinder}.
 */
public interface ServerComponent extends AutoCloseable {

  /**
   * Starts the component; called once.
   *
   * @throws IOException if it cannot (a port that is taken, say): the start fails
   */
  void start() throws IOException;

  /**
   * Step 3 of a graceful shutdown, with the gRPC server: stops taking new calls; open ones go on. A
   * component that serves no calls does nothing (the default). Must not throw.
   */
  default void stopAccepting() {}

  /**
   * Step 4, before the allocator and the store close: waits up to {@code timeout} for open calls, then
   * cancels them. The default has none. Must not throw.
   */
  default void awaitCalls(Duration timeout) {}

  /** Stops it. Idempotent; must not throw. */
  @Override
  void close();
}
