package dev.idgen.client;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;

/**
 * Exports an {@link IdGenClient}'s counters to Micrometer, per sequence: the {@link IdSourceStats} of each
 * source, and, when its {@linkplain #interceptor() interceptor} was given to the builder, the client's
 * {@code Allocate} calls by final status and its failovers. Needs {@code io.micrometer:micrometer-core} on
 * the classpath, which {@code idgen-client} declares optional: nothing else of the client loads it.
 *
 * <pre>{@code
 * IdGenClientMetrics metrics = new IdGenClientMetrics();
 * IdGenClient client = IdGenClient.builder().target("dns:///idgen:7070").intercept(metrics.interceptor()).build();
 * metrics.monitor(client).bindTo(registry);
 * }</pre>
 *
 * <p>Meters (Prometheus names; tags {@code client} = the client's {@linkplain IdGenClientBuilder#name name},
 * {@code sequence}): {@code idgen_client_ids_served_total}, {@code idgen_client_leases_total},
 * {@code idgen_client_lease_size}, {@code idgen_client_ids_held}, {@code idgen_client_waits_seconds_count}
 * and {@code _sum} (waits and the time spent in them), {@code idgen_client_failed_calls_total},
 * {@code idgen_client_ids_expired_total}, {@code idgen_client_strict_ordering} (1 or 0); from the interceptor,
 * {@code idgen_client_calls_total} (with {@code status}: the gRPC status code name) and
 * {@code idgen_client_failovers_total}.
 *
 * <p>Nothing is added to the path of {@link IdSource#next()}: the stats meters read
 * {@link IdSource#stats()} when the registry is scraped; the interceptor counts once per {@code Allocate}
 * call (one per lease).
 *
 * <p>Threads: safe for any number. {@link #monitor} and {@link #bindTo} may come in either order (a
 * framework binds its binders when it likes); they synchronize on one lock. Sources created later get their
 * meters when they are created; registering a meter twice returns the first (Micrometer), so a source or
 * status registered by two paths at once is harmless.
 */
@ThreadSafe
public final class IdGenClientMetrics implements MeterBinder {
  private static final String PREFIX = "idgen.client.";

  private final Object lock = new Object();
  /** Written under {@code lock}, once; read without it by the interceptor's counters. */
  private volatile IdGenClient client;
  private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();
  private final ConcurrentMap<CallKey, LongAdder> calls = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, LongAdder> failovers = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, LastCall> lastCalls = new ConcurrentHashMap<>();

  /** Creates the binder; then give its {@link #interceptor()} to the builder and {@link #monitor} the client. */
  public IdGenClientMetrics() {}

  /**
   * Names the client whose sources to export, once; registries bound before get its meters now.
   *
   * @param client the client
   * @return this
   * @throws IllegalStateException if a client was given before
   */
  @CanIgnoreReturnValue
  public IdGenClientMetrics monitor(IdGenClient client) {
    Objects.requireNonNull(client, "client");
    synchronized (lock) {
      if (this.client != null) {
        throw new IllegalStateException("IdGenClientMetrics already monitors " + this.client);
      }
      this.client = client;
      for (MeterRegistry r : registries) {
        attach(r, client);
      }
    }
    return this;
  }

  /**
   * Registers the meters of every source the client has and will have, and of the calls the interceptor
   * counted and will count; before {@link #monitor}, from the moment a client is monitored.
   *
   * @param registry the registry
   */
  @Override
  public void bindTo(MeterRegistry registry) {
    synchronized (lock) {
      registries.add(registry);
      IdGenClient c = client;
      if (c != null) {
        attach(registry, c);
      }
    }
  }

  private void attach(MeterRegistry registry, IdGenClient c) {
    String name = c.name();
    c.onEverySource(source -> registerSource(registry, name, source));
    calls.forEach((key, count) -> registerCalls(registry, name, key, count));
    failovers.forEach((sequence, count) -> registerFailovers(registry, name, sequence, count));
  }

  private static void registerSource(MeterRegistry registry, String client, IdSource source) {
    Tags tags = Tags.of("client", client, "sequence", source.sequence());
    counter(registry, "ids.served", "IDs handed to callers", tags, source, s -> s.stats().idsServed());
    counter(registry, "leases", "Allocate calls that delivered IDs", tags, source, s -> s.stats().leases());
    counter(registry, "failed.calls", "Allocate calls that failed (retried or not)", tags, source,
        s -> s.stats().failedCalls());
    counter(registry, "ids.expired", "IDs dropped unused because their range's valid_for ran out (a gap)", tags,
        source, s -> s.stats().idsExpired());
    Gauge.builder(PREFIX + "lease.size", source, s -> s.stats().leaseSize())
        .description("IDs the source asks for per lease now (0: strict sequence)").tags(tags).register(registry);
    Gauge.builder(PREFIX + "ids.held", source, s -> s.stats().idsHeld())
        .description("IDs leased and not handed out yet").tags(tags).register(registry);
    Gauge.builder(PREFIX + "strict.ordering", source, s -> s.stats().strictOrdering() ? 1 : 0)
        .description("1 if the sequence is ORDERING_STRICT (no IDs cached), else 0").tags(tags).register(registry);
    FunctionTimer.builder(PREFIX + "waits", source, s -> s.stats().waits(),
            s -> s.stats().waitTime().toNanos(), TimeUnit.NANOSECONDS)
        .description("Callers that found nothing left and waited for a lease, and the time they waited")
        .tags(tags).register(registry);
  }

  private static void counter(MeterRegistry registry, String name, String description, Tags tags, IdSource source,
      ToDoubleFunction<IdSource> value) {
    FunctionCounter.builder(PREFIX + name, source, value).description(description).tags(tags).register(registry);
  }

  private static void registerCalls(MeterRegistry registry, String client, CallKey key, LongAdder count) {
    FunctionCounter.builder(PREFIX + "calls", count, LongAdder::sum)
        .description("Allocate calls by final gRPC status")
        .tags("client", client, "sequence", key.sequence(), "status", key.status())
        .register(registry);
  }

  private static void registerFailovers(MeterRegistry registry, String client, String sequence, LongAdder count) {
    FunctionCounter.builder(PREFIX + "failovers", count, LongAdder::sum)
        .description("Allocate calls sent to another server than the sequence's previous call, which had failed")
        .tags("client", client, "sequence", sequence)
        .register(registry);
  }

  /** A counter that must be registered on every bound registry once it exists. */
  private LongAdder calls(CallKey key) {
    LongAdder count = calls.get(key);
    if (count != null) {
      return count;
    }
    LongAdder created = new LongAdder();
    count = calls.putIfAbsent(key, created);
    if (count != null) {
      return count;
    }
    IdGenClient c = client;
    if (c != null) { // after the put: an attach that runs now sees one or the other (or both: idempotent)
      for (MeterRegistry r : registries) {
        registerCalls(r, c.name(), key, created);
      }
    }
    return created;
  }

  private LongAdder failovers(String sequence) {
    LongAdder count = failovers.get(sequence);
    if (count != null) {
      return count;
    }
    LongAdder created = new LongAdder();
    count = failovers.putIfAbsent(sequence, created);
    if (count != null) {
      return count;
    }
    IdGenClient c = client;
    if (c != null) {
      for (MeterRegistry r : registries) {
        registerFailovers(r, c.name(), sequence, created);
      }
    }
    return created;
  }

  /**
   * Returns the interceptor that counts the client's {@code Allocate} calls by final status, and its
   * failovers: give it to {@link IdGenClientBuilder#intercept} before {@code build()}. Other methods pass
   * through untouched.
   *
   * @return the interceptor
   */
  public ClientInterceptor interceptor() {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        ClientCall<Q, R> call = next.newCall(method, options);
        if (!method.getFullMethodName().equals(IdGenGrpc.getAllocateMethod().getFullMethodName())) {
          return call;
        }
        return new CountedCall<>(call, next);
      }
    };
  }

  /** The server ({@code Channel}: one per endpoint of the client) of a sequence's last call, and its outcome. */
  private static final class LastCall {
    @GuardedBy("this") private Channel channel;
    @GuardedBy("this") private boolean failed;

    /** Whether a call to {@code to} is a failover; it becomes the sequence's last call. */
    synchronized boolean start(Channel to) {
      boolean failover = failed && channel != null && channel != to;
      channel = to;
      failed = false;
      return failover;
    }

    synchronized void end(Channel on, boolean ok) {
      if (channel == on) {
        failed = !ok;
      }
    }
  }

  /** One Allocate call: its sequence is known from its request message, its status when it closes. */
  private final class CountedCall<Q, R> extends ForwardingClientCall.SimpleForwardingClientCall<Q, R> {
    private final Channel channel;
    /** Set by sendMessage, read in onClose: gRPC orders them (the call's listener runs after the start). */
    private volatile String sequence;

    CountedCall(ClientCall<Q, R> delegate, Channel channel) {
      super(delegate);
      this.channel = channel;
    }

    @Override
    public void start(Listener<R> listener, Metadata headers) {
      super.start(new ForwardingClientCallListener.SimpleForwardingClientCallListener<R>(listener) {
        @Override
        public void onClose(Status status, Metadata trailers) {
          String s = sequence;
          if (s != null) {
            calls(new CallKey(s, status.getCode().name())).increment();
            lastCalls.computeIfAbsent(s, k -> new LastCall()).end(channel, status.isOk());
          }
          super.onClose(status, trailers);
        }
      }, headers);
    }

    @Override
    public void sendMessage(Q message) {
      if (message instanceof AllocateRequest request && sequence == null) {
        String s = request.getSequence();
        sequence = s;
        LongAdder failed = failovers(s); // registered at 0 from the sequence's first call on
        if (lastCalls.computeIfAbsent(s, k -> new LastCall()).start(channel)) {
          failed.increment();
        }
      }
      super.sendMessage(message);
    }
  }

  private record CallKey(String sequence, String status) {}
}
