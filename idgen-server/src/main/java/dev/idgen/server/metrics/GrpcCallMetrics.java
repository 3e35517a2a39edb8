package dev.idgen.server.metrics;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.api.v1.AllocateRangesResponse;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.core.Allocator;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingServerInterceptor;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The one metrics layer of every gRPC call: Micrometer's per-RPC meters of every method of every service
 * ({@code grpc_server_processing_duration_seconds}, {@code grpc_server_requests_received_messages_total},
 * {@code grpc_server_responses_sent_messages_total}, made by Micrometer's own gRPC binder, so they are named as other gRPC
 * services on Micrometer name them), and for {@code idgen.v1.IdGen} also the Allocate counters by sequence and
 * final status ({@code idgen_allocate_calls_total}, {@code idgen_ids_allocated_total}, {@code idgen_leases_total}).
 * It runs outside every other interceptor, so calls refused by the request parsing guard, the access rules or
 * the call-duration limit are timed and counted too.
 *
 * <p>Why one layer: an Allocate served from memory costs the server little more than its transport, and two
 * metric layers (Micrometer's interceptor and one of ours, each wrapping the call and its listener and keeping
 * its own per-call state) were a measurable part of what it costs above a bare gRPC server (BENCHMARKS.md). An
 * IdGen call now gets one wrapper of each kind and one record, and is recorded once, when it ends: when the
 * server closes it (its status), or when the client cancels it first ({@code CANCELLED}). Calls of the other
 * services are Micrometer's interceptor's, unchanged.
 *
 * <p>Sequences this server has not loaded are tagged {@value IdGenMetrics#OTHER_SEQUENCE}, so that made-up
 * names cannot create unbounded time series; {@link IdGenMetrics} folds loaded sequences beyond
 * {@code idgen.metrics.max-sequence-series} into it too.
 *
 * <p>Thread-safe. gRPC calls a listener's methods one at a time, and the service calls a call's methods one at a
 * time, but the two may run on different threads (a call served on the worker pool is closed there while the
 * client's cancellation arrives on the network thread). So a call ends exactly once, by a compare-and-set, and
 * the count of IDs it sent is published with release/acquire rather than a volatile write per range.
 */
@ThreadSafe
public final class GrpcCallMetrics extends MetricCollectingServerInterceptor {

  private final IdGenMetrics metrics;
  private final Allocator allocator;

  GrpcCallMetrics(MeterRegistry registry, UnaryOperator<Timer.Builder> timer, IdGenMetrics metrics,
      Allocator allocator) {
    // OK eagerly: every method's timer is there at zero from the start, a series for a dashboard's rate().
    super(registry, UnaryOperator.identity(), timer, Status.Code.OK);
    this.metrics = metrics;
    this.allocator = allocator;
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
      ServerCallHandler<Q, A> next) {
    if (!IdGenGrpc.SERVICE_NAME.equals(call.getMethodDescriptor().getServiceName())) {
      return super.interceptCall(call, headers, next);
    }
    MetricSet meters = metricsFor(call.getMethodDescriptor());
    MeteredCall<Q, A> metered = new MeteredCall<>(call, meters, meters.newProcessingDurationTiming(registry));
    return new SimpleForwardingServerCallListener<>(next.startCall(metered, headers)) {
      @Override
      public void onMessage(Q message) {
        metered.received(message);
        super.onMessage(message);
      }

      @Override
      public void onCancel() {
        metered.end(Status.Code.CANCELLED);
        super.onCancel();
      }
    };
  }

  /** An IdGen call, counting what it receives and sends; records all its meters once, when it ends. */
  private final class MeteredCall<Q, A> extends SimpleForwardingServerCall<Q, A> {
    private static final VarHandle IDS;
    private static final VarHandle ENDED;

    static {
      try {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        IDS = lookup.findVarHandle(MeteredCall.class, "ids", long.class);
        ENDED = lookup.findVarHandle(MeteredCall.class, "ended", boolean.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private final Counter requests;
    private final Counter responses;
    private final Consumer<Status.Code> timing;
    /** Written on the network thread that delivers the request; read at the end, after it (gRPC's order). */
    private String sequence = "";
    /** Written with release by the one thread sending at a time; read with acquire at the end. */
    private long ids;
    private volatile boolean ended;

    MeteredCall(ServerCall<Q, A> call, MetricSet meters, Consumer<Status.Code> timing) {
      super(call);
      this.requests = meters.getRequestCounter();
      this.responses = meters.getResponseCounter();
      this.timing = timing;
    }

    void received(Q message) {
      requests.increment();
      if (message instanceof AllocateRequest request) {
        sequence = request.getSequence();
      }
    }

    @Override
    public void sendMessage(A message) {
      if (message instanceof IdRange range) {
        IDS.setRelease(this, (long) IDS.getAcquire(this) + range.getCount());
      } else if (message instanceof AllocateRangesResponse answer) { // AllocateRanges, HTTP/JSON's Allocate
        long sent = 0;
        for (IdRange range : answer.getRangesList()) {
          sent += range.getCount();
        }
        IDS.setRelease(this, (long) IDS.getAcquire(this) + sent);
      }
      responses.increment();
      super.sendMessage(message);
    }

    @Override
    public void close(Status status, Metadata trailers) {
      end(status.getCode());
      super.close(status, trailers);
    }

    void end(Status.Code code) {
      if (!ended && ENDED.compareAndSet(this, false, true)) {
        timing.accept(code);
        String name = sequence;
        metrics.allocateCall(name, allocator.isLoaded(name), code, (long) IDS.getAcquire(this));
      }
    }
  }
}
