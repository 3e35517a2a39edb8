package dev.idgen.server.lifecycle;

import java.io.IOException;

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

  /** Stops it. Idempotent; must not throw. */
  @Override
  void close();
}
