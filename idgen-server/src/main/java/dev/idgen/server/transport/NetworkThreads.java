package dev.idgen.server.transport;

import io.grpc.netty.shaded.io.netty.util.concurrent.EventExecutor;
import io.grpc.netty.shaded.io.netty.util.internal.ThreadExecutorMap;
import java.util.concurrent.Executor;
import javax.annotation.Nullable;

/**
 * The network thread a piece of work runs on, so that work finishing elsewhere can be handed back to it in one
 * task (calls run on the event loop that read them; see {@code GrpcModule}).
 *
 * <p>Thread-safe: reads only the calling thread's own state.
 */
public final class NetworkThreads {

  private NetworkThreads() {}

  /** The event loop the calling thread runs, or null when it runs none (a worker, the in-process transport). */
  @Nullable
  public static Executor current() {
    EventExecutor loop = ThreadExecutorMap.currentExecutor();
    return loop != null && loop.inEventLoop() ? loop : null;
  }
}
