package dev.idgen.server.api;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.inject.Inject;
import com.google.inject.Singleton;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.core.Allocator;
import dev.idgen.core.IdRange;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.lifecycle.PeriodicTask;
import dev.idgen.server.lifecycle.ServerComponent;
import dev.idgen.server.status.ErrorStatus;
import dev.idgen.server.transport.NetworkThreads;
import io.grpc.ChannelCredentials;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.ServerInterceptor;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiFunction;
import java.util.function.IntConsumer;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends Allocate calls of strict sequences that this server does not own to the server that does, over
 * one channel per owner, and hands each caller its part of the answer.
 *
 * <p><b>Coalescing.</b> Calls for one sequence that arrive while {@code idgen.strict.forwarded-in-flight}
 * forwarded calls of it are in flight wait, and are then sent as one call for their total count (up to the per-call
 * limit); its ranges are cut among them in arrival order. That keeps the strict promise. Every call of a
 * batch started before the batch was sent and completes only when the batch's answer arrives, so no call
 * of a batch completes before another call of the same batch, or of any batch in flight beside it,
 * started: their order among each other is free. And a call that completed anywhere before a caller of
 * the batch started had its IDs cut by the owner before the batch was sent, hence below the batch's.
 * Coalescing is what lets 1-ID calls through forwarding servers run at the owner's speed: the owner
 * serves one call per batch, not one per caller.
 *
 * <p><b>Pipes.</b> Batches travel as the requests of one long-lived {@code idgen.v1.IdGenPeer/ForwardAllocate} stream
 * per (owner, sequence, caller token), a {@link ForwardBatch.Pipe}, not as one {@code Allocate} call each: a batch
 * then costs both servers a message each way instead of a call's setup, headers, interceptors and trailers (12 runs
 * of {@code strict.sh} per version: 0.79 of the default ordering's calls/s against 0.70 with unary calls,
 * BENCHMARKS.md). The owner answers a pipe's requests in order, so an answer is for the oldest batch not answered. A
 * pipe is half-closed after {@link ForwardBatch#PIPE_IDLE} without a batch and replaced once {@link
 * ForwardBatch#PIPE_MAX_AGE} old (the owner checks the token it carries again), and cancelled when a batch waits
 * {@link ForwardBatch#MAX_FORWARD_TIME} for its answer. Batches a pipe leaves unanswered when it ends fail as a unary
 * call would, and are sent again after a fresh read of the owner row when nothing was handed out for them. An owner
 * that answers UNIMPLEMENTED (an older version, during a rolling upgrade) gets unary calls for {@link
 * OwnerChannels#UNARY_AFTER_REFUSAL}.
 *
 * <p><b>Headers.</b> A forwarded call carries {@code idgen-forwarded-by} (so that the owner never forwards
 * it again: it answers {@code NOT_OWNER} if it no longer owns the sequence) and the first caller's
 * {@code authorization} header (each caller passed this server's access rules already; the owner checks
 * the token again). With certificate identities instead of tokens, the owner sees this server's own
 * certificate: give it the allocate permission (docs/operations-security-and-metrics.md).
 *
 * <p><b>Rooms.</b> This class is the entry and the lifecycle: one {@link ForwardBatch} per (owner, sequence), which
 * coalesces, sends (on a pipe, or unary) and cuts the answers; {@link OwnerChannels} (the channel per owner, and
 * the owners that refused pipes); {@link ForwardHeaders} (the headers, both ways); {@link ForwardErrors} (what a
 * failed forwarded call means for its callers).
 *
 * <p>Threads: {@link #forward} may run on a network thread: it never blocks (a concurrent map of batches, then
 * the batch's own monitor; see {@link ForwardBatch}). A periodic sweep on a thread of its own cancels pipes whose
 * owner does not answer and retires idle ones; {@link #close} stops it and shuts the channels down.
 */
@ThreadSafe
@Singleton
public final class StrictForwarder implements ServerComponent {
  private static final Logger log = LoggerFactory.getLogger(StrictForwarder.class);

  /** Set on forwarded calls: the forwarding server's name. */
  static final Metadata.Key<String> FORWARDED_BY = ForwardHeaders.FORWARDED_BY;
  /** The call's {@code idgen-forwarded-by}, or null for a call from a client. */
  static final Context.Key<String> FORWARDED = ForwardHeaders.FORWARDED;
  /** The call's {@code authorization} header, or null: passed on to the owner. */
  static final Context.Key<String> CALLER_AUTHORIZATION = ForwardHeaders.CALLER_AUTHORIZATION;

  /** How often pipes are checked for an owner that does not answer, and for idleness. */
  private static final Duration SWEEP_EVERY = Duration.ofSeconds(1);

  private final OwnerChannels channels;
  /** The batch of one (owner target, sequence), with the settings and helpers every batch shares. */
  private final BiFunction<String, String, ForwardBatch> newBatch;
  private final ConcurrentMap<String, ForwardBatch> batches = new ConcurrentHashMap<>();
  private volatile boolean closed;
  @Nullable private volatile PeriodicTask sweep;

  @Inject
  StrictForwarder(Allocator allocator, ServerSettings settings, OperationsSettings operations,
      dev.idgen.server.metrics.IdGenMetrics metrics) {
    this(allocator, settings.serverName().isEmpty() ? "idgen" : settings.serverName(), settings.maxIdsPerCall(),
        settings.forwardedInFlight(), OwnerChannels.credentials(operations.tls()), metrics::forwarded);
  }

  /**
   * {@code maxInFlight}: forwarded calls per (owner, sequence) at once, more callers wait and go as one call;
   * {@code sent} is told of every forwarded call, with how many callers it carries.
   */
  StrictForwarder(Allocator allocator, String self, long maxIdsPerCall, int maxInFlight,
      ChannelCredentials credentials, IntConsumer sent) {
    OwnerChannels owners = new OwnerChannels(credentials);
    ForwardHeaders headers = new ForwardHeaders(self);
    ForwardErrors errors = new ForwardErrors(allocator);
    this.channels = owners;
    this.newBatch = (target, sequence) -> new ForwardBatch(target, sequence, maxIdsPerCall, maxInFlight, sent,
        owners, headers, errors);
  }

  /** Puts the forwarding and authorization headers into the call's context, for {@link IdGenService}. */
  public static ServerInterceptor headers() {
    return ForwardHeaders.interceptor();
  }

  /** What a forwarded caller gets: its ranges, then OK ({@code error} null) or the error. */
  interface Callback {
    void done(List<IdRange> ranges, @Nullable StatusRuntimeException error);
  }

  /**
   * Forwards one caller's {@code count} IDs of {@code sequence} to the owner at {@code target}. Never blocks.
   * If the owner turns out not to own it any more, or cannot be reached, and {@code reroute} is not null,
   * nothing is handed out and {@code reroute} runs instead of the callback (the caller looks the owner up
   * again: after a graceful stop, say, the sequence is free at once); otherwise the callback gets
   * OWNER_UNAVAILABLE.
   */
  void forward(String target, String sequence, long count, @Nullable Deadline deadline,
      @Nullable String authorization, Callback callback, @Nullable Runnable reroute) {
    if (closed) {
      callback.done(List.of(), ErrorStatus.of(ErrorReason.SERVER_SHUTTING_DOWN, "the server is shutting down")
          .exception());
      return;
    }
    batches.computeIfAbsent(target + '\u0000' + sequence,
            k -> newBatch.apply(target, sequence))
        .submit(new ForwardBatch.Waiter(count, deadline, authorization, callback, reroute, NetworkThreads.current()));
  }

  private void sweep() {
    long now = System.nanoTime();
    for (ForwardBatch b : batches.values()) {
      for (ForwardBatch.Pipe p : b.pipes()) {
        p.sweep(now);
      }
    }
  }

  @Override
  public void start() {
    sweep = PeriodicTask.every(SWEEP_EVERY, "idgen-strict-forwarder", () -> {
      try {
        sweep();
      } catch (RuntimeException e) {
        log.warn("the sweep of forwarding streams failed", e);
      }
    });
  }

  /** Closes the channels to owners; forwarded calls in flight fail. */
  @Override
  public void close() {
    closed = true;
    PeriodicTask.closeIfStarted(sweep);
    channels.close();
  }
}
