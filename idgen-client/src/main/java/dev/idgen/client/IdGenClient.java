package dev.idgen.client;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.api.v1.IdGenGrpc;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * A client of idgen servers that hands out IDs at memory speed: each {@link IdSource} keeps ranges
 * of IDs leased from the servers and fetches the next lease in the background before it runs out
 * (except for {@code ORDERING_STRICT} sequences, which it cannot cache: one call per request, see
 * {@link IdSource}).
 *
 * <pre>{@code
 * try (IdGenClient client = IdGenClient.builder().target("dns:///idgen:7070").build()) {
 *   IdSource orders = client.sequence("orders");
 *   long id = orders.next();
 * }
 * }</pre>
 *
 * <p>Create one client per process (or per set of servers) and keep it: it holds the connections,
 * and its sources hold the leases. Closing it abandons the IDs its sources hold (a gap, never a
 * duplicate).
 *
 * <p>Threads: a client is safe for any number of threads. Its sources are created once per sequence
 * name in a concurrent map; all background work runs on one {@link ScheduledExecutorService} (the
 * client's own single daemon thread unless {@linkplain IdGenClientBuilder#executor one was given}).
 * {@link #close()} is idempotent and may race with everything else: a source created concurrently
 * with it is closed too.
 */
@ThreadSafe
public final class IdGenClient implements AutoCloseable {
  /** How long {@link #close()} waits for channels and threads to stop. */
  private static final long CLOSE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(5);
  /** The server's rule for sequence names, checked here to fail fast on typos. */
  private static final Pattern SEQUENCE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

  private final ClientSettings settings;
  private final Endpoints endpoints;
  private final ScheduledExecutorService executor;
  /** The client's own executor's threads, or empty if the executor was given. */
  private final List<Thread> ownThreads;
  private final boolean ownsExecutor;
  private final List<ManagedChannel> ownChannels;
  private final ConcurrentMap<String, LeasedIdSource> sources = new ConcurrentHashMap<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  /** Told of every source created (metrics binders: {@link IdGenClientMetrics}). */
  private final List<Consumer<IdSource>> sourceListeners = new CopyOnWriteArrayList<>();

  IdGenClient(ClientSettings settings, List<String> targets, List<Channel> channels,
      ChannelCredentials credentials, Endpoints.CallSettings calls, ScheduledExecutorService givenExecutor) {
    this.settings = settings;
    if (givenExecutor != null) {
      this.executor = givenExecutor;
      this.ownsExecutor = false;
      this.ownThreads = List.of();
    } else {
      List<Thread> threads = new CopyOnWriteArrayList<>();
      ScheduledThreadPoolExecutor own =
          new ScheduledThreadPoolExecutor(1, threadFactory("idgen-client-" + settings.name() + "-", threads));
      own.setRemoveOnCancelPolicy(true);
      this.executor = own;
      this.ownsExecutor = true;
      this.ownThreads = threads;
    }
    // gRPC callbacks run on the executor; once it is shut down (close()), on the transport's thread,
    // where they see the source closed and return. A rejected callback would leave gRPC's call
    // unfinished and its channel unable to terminate.
    Executor callbacks = task -> {
      try {
        executor.execute(task);
      } catch (RejectedExecutionException e) {
        task.run();
      }
    };
    List<ManagedChannel> created = new ArrayList<>();
    List<Endpoints.Endpoint> all = new ArrayList<>();
    try {
      for (String target : targets) {
        ManagedChannel channel = newChannel(target, credentials);
        created.add(channel);
        all.add(new Endpoints.Endpoint(target, channel, callbacks, calls));
      }
    } catch (RuntimeException e) {
      created.forEach(ManagedChannel::shutdownNow);
      if (ownsExecutor) {
        executor.shutdownNow();
      }
      throw e;
    }
    for (Channel channel : channels) {
      all.add(new Endpoints.Endpoint(channel.authority(), channel, callbacks, calls));
    }
    this.ownChannels = List.copyOf(created);
    this.endpoints = new Endpoints(all, settings.maxBackoffNanos());
  }

  /**
   * The service config of the channels the client creates: round-robin over every address of a target,
   * and gRPC's client-side health checking of {@code idgen.v1.IdGen} (the {@code grpc-services}
   * dependency carries it), so that a server that reports {@code NOT_SERVING} (a graceful stop, before
   * it refuses calls) gets no new calls: a target's other addresses take them, and a target with none
   * left fails its calls {@code UNAVAILABLE} at once, which the sources retry on another target. A
   * server without the health service counts as serving.
   */
  static final Map<String, ?> SERVICE_CONFIG = Map.of(
      "loadBalancingConfig", List.of(Map.of("round_robin", Map.of())),
      "healthCheckConfig", Map.of("serviceName", IdGenGrpc.SERVICE_NAME));

  private static ManagedChannel newChannel(String target, ChannelCredentials credentials) {
    try {
      return Grpc.newChannelBuilder(target, credentials).defaultServiceConfig(SERVICE_CONFIG).build();
    } catch (RuntimeException e) {
      throw new IllegalStateException("cannot create a channel for target '" + target + "' (is a gRPC"
          + " transport such as io.grpc:grpc-netty-shaded on the runtime classpath?): " + e.getMessage(), e);
    }
  }

  private static ThreadFactory threadFactory(String prefix, List<Thread> threads) {
    AtomicInteger n = new AtomicInteger();
    return task -> {
      Thread t = new Thread(task, prefix + n.incrementAndGet());
      t.setDaemon(true);
      threads.add(t);
      return t;
    };
  }

  /**
   * Returns a new builder, with every setting at its default and no server yet.
   *
   * @return a new builder
   */
  public static IdGenClientBuilder builder() {
    return new IdGenClientBuilder();
  }

  /**
   * Returns the source of a sequence's IDs: the same instance for the same name, for the life of the
   * client. The first call for a name requests a lease at once, in the background, so that the first
   * {@link IdSource#next()} is less likely to wait (for an {@code ORDERING_STRICT} sequence, its answer
   * only tells the source the ordering: see {@link IdSource}). The sequence must exist on the servers (they
   * create none implicitly); if it does not, {@code next()} fails with reason {@code REJECTED} and
   * status {@code NOT_FOUND}.
   *
   * @param name the sequence's name: 1 to 64 characters from {@code [A-Za-z0-9._-]}, starting with a
   *     letter or digit
   * @return the sequence's source
   * @throws IllegalArgumentException if the name is malformed
   * @throws IllegalStateException if the client is closed
   */
  public IdSource sequence(String name) {
    if (name == null || !SEQUENCE_NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("sequence name: '" + name
          + "' (expected: 1 to 64 characters from [A-Za-z0-9._-], starting with a letter or digit)");
    }
    checkOpen();
    LeasedIdSource source = sources.get(name);
    if (source != null) {
      return source;
    }
    LeasedIdSource created = new LeasedIdSource(name, settings, endpoints, executor);
    source = sources.putIfAbsent(name, created);
    if (source != null) {
      return source;
    }
    if (closed.get()) {
      created.close(); // close() may have missed it
      checkOpen();
    }
    created.start();
    sourceListeners.forEach(l -> l.accept(created));
    return created;
  }

  /**
   * Tells {@code listener} of every source this client has and will create, on the thread that creates it.
   * A source created while this runs may be told twice: listeners must be idempotent.
   */
  void onEverySource(Consumer<IdSource> listener) {
    sourceListeners.add(listener);
    sources.values().forEach(listener);
  }

  /** The client's name ({@link IdGenClientBuilder#name}). */
  String name() {
    return settings.name();
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("the IdGenClient " + settings.name() + " is closed");
    }
  }

  /**
   * Closes the client: cancels the lease requests in flight, fails callers that wait (and later
   * callers) with reason {@code CLOSED}, shuts down the channels of its targets, and, if the client
   * created its executor, shuts it down and waits for its thread to end. Channels and the executor
   * given to the builder are left to the application. Waits at most a few seconds; idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    sources.values().forEach(LeasedIdSource::close);
    ownChannels.forEach(ManagedChannel::shutdownNow);
    if (ownsExecutor) {
      executor.shutdownNow();
    }
    long deadline = System.nanoTime() + CLOSE_TIMEOUT_NANOS;
    boolean interrupted = false;
    try {
      for (ManagedChannel channel : ownChannels) {
        channel.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      }
      if (ownsExecutor) {
        executor.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        for (Thread t : ownThreads) {
          if (t != Thread.currentThread()) { // close() called from the client's own thread
            TimeUnit.NANOSECONDS.timedJoin(t, Math.max(1, deadline - System.nanoTime()));
          }
        }
      }
    } catch (InterruptedException e) {
      interrupted = true;
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Describes the client: its name and servers.
   *
   * @return a short description
   */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("IdGenClient{name=").append(settings.name()).append(", servers=[");
    for (int i = 0; i < endpoints.size(); i++) {
      sb.append(i == 0 ? "" : ", ").append(endpoints.get(i).name);
    }
    return sb.append("]").append(closed.get() ? ", closed" : "").append('}').toString();
  }
}
