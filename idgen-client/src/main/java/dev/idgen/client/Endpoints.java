package dev.idgen.client;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.api.v1.IdGenGrpc;
import io.grpc.CallCredentials;
import io.grpc.Channel;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The servers a client talks to: one channel per configured target (a {@code dns:///} target is
 * itself balanced round-robin over its addresses by gRPC), or the channels given to the builder.
 *
 * <p>Lease requests rotate over the endpoints; an endpoint that failed with a retryable status is
 * skipped for a while (the client's maximum back-off), and a retry always goes to another endpoint
 * than the one that just failed when there is one.
 *
 * <p>Threads: the endpoint list is immutable; the rotation is an atomic counter and each endpoint's
 * "skip until" a volatile field, so picking an endpoint takes no lock.
 */
@ThreadSafe
final class Endpoints {

  /**
   * What every call carries, on every endpoint: call credentials (null: none) and interceptors (the
   * last sees a call first, as with {@link ClientInterceptors#intercept(Channel, List)}).
   */
  @SuppressWarnings("Immutable") // CallCredentials and interceptors are thread-safe by gRPC's contract
  record CallSettings(CallCredentials credentials, List<ClientInterceptor> interceptors) {
    static final CallSettings NONE = new CallSettings(null, List.of());
  }

  /** One server (or balanced group of servers) and the stub that calls it. */
  static final class Endpoint {
    final String name;
    final IdGenGrpc.IdGenStub stub;
    /** System.nanoTime() before which this endpoint is skipped if another one is usable. */
    private volatile long avoidUntil;
    private volatile boolean failedOnce;

    Endpoint(String name, Channel channel, Executor executor, CallSettings calls) {
      this.name = name;
      IdGenGrpc.IdGenStub s = IdGenGrpc.newStub(ClientInterceptors.intercept(channel, calls.interceptors()))
          .withExecutor(executor);
      this.stub = calls.credentials() == null ? s : s.withCallCredentials(calls.credentials());
    }

    boolean avoided(long now) {
      return failedOnce && now - avoidUntil < 0;
    }
  }

  private final Endpoint[] endpoints;
  private final long avoidNanos;
  private final AtomicInteger rotation = new AtomicInteger();

  Endpoints(List<Endpoint> endpoints, long avoidNanos) {
    if (endpoints.isEmpty()) {
      throw new IllegalArgumentException("endpoints: empty (expected: at least one)");
    }
    this.endpoints = endpoints.toArray(new Endpoint[0]);
    this.avoidNanos = avoidNanos;
  }

  int size() {
    return endpoints.length;
  }

  Endpoint get(int index) {
    return endpoints[index];
  }

  /**
   * Picks the endpoint for the next attempt: the next one in rotation that is neither {@code failed}
   * (the index of the endpoint the previous attempt failed on, or -1) nor recently failed; failing
   * that, the next one other than {@code failed}; failing that (a single endpoint), {@code failed}.
   */
  int pick(int failed) {
    int n = endpoints.length;
    int start = Math.floorMod(rotation.getAndIncrement(), n);
    long now = System.nanoTime();
    int fallback = -1;
    for (int k = 0; k < n; k++) {
      int i = (start + k) % n;
      if (i == failed) {
        continue;
      }
      if (!endpoints[i].avoided(now)) {
        return i;
      }
      if (fallback < 0) {
        fallback = i;
      }
    }
    return fallback >= 0 ? fallback : Math.max(failed, 0);
  }

  /** Remembers that an attempt on {@code index} failed with a retryable status. */
  void markFailed(int index) {
    Endpoint e = endpoints[index];
    e.avoidUntil = System.nanoTime() + avoidNanos;
    e.failedOnce = true;
  }
}
