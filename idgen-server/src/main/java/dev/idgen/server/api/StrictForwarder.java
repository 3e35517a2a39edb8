package dev.idgen.server.api;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.google.inject.Inject;
import com.google.inject.Singleton;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.api.v1.ForwardedAnswer;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdGenPeerGrpc;
import dev.idgen.core.Allocator;
import dev.idgen.core.IdRange;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.lifecycle.PeriodicTask;
import dev.idgen.server.lifecycle.ServerComponent;
import dev.idgen.server.status.ErrorStatus;
import dev.idgen.server.transport.NetworkThreads;
import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.protobuf.StatusProto;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * <p><b>Pipes.</b> Batches travel as the requests of one long-lived {@code idgen.v1.IdGenPeer/ForwardAllocate}
 * stream per (owner, sequence, caller token), a {@link Batch.Pipe}, not as one {@code Allocate} call each: a batch
 * then costs both servers a message each way instead of a call's setup, headers, interceptors and trailers (12
 * runs of {@code strict.sh} per version: 0.79 of the default ordering's calls/s against 0.70 with unary calls,
 * BENCHMARKS.md). The owner answers a pipe's requests in order, so an answer is for the oldest batch not answered.
 * A pipe is half-closed after {@link #PIPE_IDLE} without a batch and replaced once {@link #PIPE_MAX_AGE} old (the
 * owner checks the token it carries again), and cancelled when a batch waits {@link #MAX_FORWARD_TIME} for its
 * answer. Batches a pipe leaves unanswered when it ends fail as a unary call would, and are sent again after a
 * fresh read of the owner row when nothing was handed out for them. An owner that answers UNIMPLEMENTED (an older
 * version, during a rolling upgrade) gets unary calls for {@link #UNARY_AFTER_REFUSAL}.
 *
 * <p><b>Headers.</b> A forwarded call carries {@code idgen-forwarded-by} (so that the owner never forwards
 * it again: it answers {@code NOT_OWNER} if it no longer owns the sequence) and the first caller's
 * {@code authorization} header (each caller passed this server's access rules already; the owner checks
 * the token again). With certificate identities instead of tokens, the owner sees this server's own
 * certificate: give it the allocate permission (docs/operations-security-and-metrics.md).
 *
 * <p>Threads: {@link #forward} may run on a network thread: it never blocks. Each (owner, sequence) has a
 * {@link Batch} queue guarded by its monitor, held only to move waiters and enqueue batches on pipes; one thread
 * at a time writes a pipe, outside the monitor. The answers arrive on the channel's network thread (a direct
 * executor), which cuts the ranges and completes the callers' streams: those that called on that thread at once,
 * the others with one task per network thread they called on (a write from another thread wakes the connection's
 * thread on its own); a periodic sweep cancels and retires pipes.
 */
@ThreadSafe
@Singleton
public final class StrictForwarder implements ServerComponent {
  private static final Logger log = LoggerFactory.getLogger(StrictForwarder.class);

  /** Set on forwarded calls: the forwarding server's name. */
  static final Metadata.Key<String> FORWARDED_BY =
      Metadata.Key.of("idgen-forwarded-by", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  /** The call's {@code idgen-forwarded-by}, or null for a call from a client. */
  static final Context.Key<String> FORWARDED = Context.key("idgen-forwarded-by");
  /** The call's {@code authorization} header, or null: passed on to the owner. */
  static final Context.Key<String> CALLER_AUTHORIZATION = Context.key("idgen-authorization");

  /**
   * The longest a forwarded call may take: a unary one when its callers set no deadline; on a pipe, the oldest
   * batch not answered (the pipe is then cancelled, and its batches fail).
   */
  private static final Duration MAX_FORWARD_TIME = Duration.ofSeconds(10);
  /**
   * A pipe is half-closed after this long without a batch, and replaced once this old, so that the caller
   * token it carries is checked again by the owner now and then and pipes of sequences no longer called end.
   */
  private static final Duration PIPE_IDLE = Duration.ofSeconds(30);
  private static final Duration PIPE_MAX_AGE = Duration.ofMinutes(5);
  /** How long forwarded calls go unary to an owner that answered a pipe UNIMPLEMENTED, before a pipe is tried again. */
  private static final Duration UNARY_AFTER_REFUSAL = Duration.ofMinutes(1);
  /** How often pipes are checked for an owner that does not answer, and for idleness. */
  private static final Duration SWEEP_EVERY = Duration.ofSeconds(1);

  private final Allocator allocator;
  private final String self;
  private final long maxIdsPerCall;
  /** Forwarded calls per (owner, sequence) at once; more callers wait and go as one call. */
  private final int maxInFlight;
  private final ChannelCredentials credentials;
  private final ConcurrentMap<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  private final ConcurrentMap<String, Batch> batches = new ConcurrentHashMap<>();
  private volatile boolean closed;
  /** Owners that answered a pipe UNIMPLEMENTED, with when ({@link System#nanoTime}). */
  private final ConcurrentMap<String, Long> pipesRefusedAt = new ConcurrentHashMap<>();
  @Nullable private volatile PeriodicTask sweep;
  /** Told of every forwarded call, with how many callers it carries. */
  private final java.util.function.IntConsumer sent;

  @Inject
  StrictForwarder(Allocator allocator, ServerSettings settings, OperationsSettings operations,
      dev.idgen.server.metrics.IdGenMetrics metrics) {
    this(allocator, settings.serverName().isEmpty() ? "idgen" : settings.serverName(), settings.maxIdsPerCall(),
        settings.forwardedInFlight(), credentials(operations.tls()), metrics::forwarded);
  }

  StrictForwarder(Allocator allocator, String self, long maxIdsPerCall, int maxInFlight,
      ChannelCredentials credentials, java.util.function.IntConsumer sent) {
    this.sent = sent;
    this.allocator = allocator;
    this.self = self;
    this.maxIdsPerCall = maxIdsPerCall;
    this.maxInFlight = maxInFlight;
    this.credentials = credentials;
  }

  /**
   * Plaintext when this server serves plaintext; else TLS, trusting {@code trust-certs} (or the JVM's CAs)
   * and presenting this server's own certificate, for owners that ask for client certificates.
   */
  private static ChannelCredentials credentials(OperationsSettings.Tls tls) {
    if (!tls.enabled()) {
      return InsecureChannelCredentials.create();
    }
    try {
      TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
      if (tls.certChain().isPresent() && tls.privateKey().isPresent()) {
        b.keyManager(tls.certChain().get().toFile(), tls.privateKey().get().toFile());
      }
      if (tls.trustCerts().isPresent()) {
        b.trustManager(tls.trustCerts().get().toFile());
      }
      return b.build();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the TLS files for forwarding strict sequences", e);
    }
  }

  /** Puts the forwarding and authorization headers into the call's context, for {@link IdGenService}. */
  public static ServerInterceptor headers() {
    return new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
          ServerCallHandler<Q, R> next) {
        String forwardedBy = headers.get(FORWARDED_BY);
        String authorization = headers.get(AUTHORIZATION);
        if (forwardedBy == null && authorization == null) {
          return next.startCall(call, headers);
        }
        Context context = Context.current().withValues(FORWARDED, forwardedBy, CALLER_AUTHORIZATION, authorization);
        return Contexts.interceptCall(context, call, headers, next);
      }
    };
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
    batches.computeIfAbsent(target + '\u0000' + sequence, k -> new Batch(target, sequence))
        .submit(new Waiter(count, deadline, authorization, callback, reroute, NetworkThreads.current()));
  }

  private ManagedChannel channel(String target) {
    return channels.computeIfAbsent(target, t -> Grpc.newChannelBuilder(t, credentials)
        .directExecutor() // answers are cut and sent on; nothing blocks
        // No gRPC retries: a forwarded call that fails is rerouted or answered here (misrouted, failure), and
        // the retry machinery (RetriableStream) was a fifth of a forwarder's samples in a JFR profile.
        .disableRetry()
        .build());
  }

  /** A forwarded call's headers: who forwards it, and the token of the caller it carries, if any. */
  private Metadata headersFor(@Nullable String authorization) {
    Metadata headers = new Metadata();
    headers.put(FORWARDED_BY, self);
    if (authorization != null) {
      headers.put(AUTHORIZATION, authorization);
    }
    return headers;
  }

  private boolean pipesRefused(String target) {
    Long at = pipesRefusedAt.get(target);
    if (at == null) {
      return false;
    }
    if (System.nanoTime() - at > UNARY_AFTER_REFUSAL.toNanos()) {
      pipesRefusedAt.remove(target, at);
      return false;
    }
    return true;
  }

  private void refusePipes(String target) {
    if (pipesRefusedAt.put(target, System.nanoTime()) == null) {
      log.info("the owner {} does not serve idgen.v1.IdGenPeer (an older version?): forwarding one call per batch"
          + " to it for {} s", target, UNARY_AFTER_REFUSAL.toSeconds());
    }
  }

  private void sweep() {
    long now = System.nanoTime();
    for (Batch b : batches.values()) {
      for (Batch.Pipe p : b.pipes()) {
        p.sweep(now);
      }
    }
  }

  /** One caller; {@code loop}: the network thread it called on (null: none), where its answer is sent from. */
  private record Waiter(long count, @Nullable Deadline deadline, @Nullable String authorization, Callback callback,
      @Nullable Runnable reroute, @Nullable Executor loop) {}

  /** The forwarded calls of one sequence to one owner. */
  private final class Batch {
    private final String target;
    private final String sequence;
    @GuardedBy("this") private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();
    @GuardedBy("this") private int inFlight;
    /** Open pipes to the owner, by the caller token they carry ("" for none). */
    @GuardedBy("this") private final Map<String, Pipe> pipes = new HashMap<>(2);

    Batch(String target, String sequence) {
      this.target = target;
      this.sequence = sequence;
    }

    void submit(Waiter w) {
      List<Waiter> send;
      synchronized (this) {
        waiting.addLast(w);
        if (inFlight >= maxInFlight) {
          return;
        }
        send = takeBatch();
      }
      send(send);
    }

    @GuardedBy("this")
    private List<Waiter> takeBatch() {
      List<Waiter> out = new ArrayList<>();
      long total = 0;
      while (!waiting.isEmpty() && total + waiting.peekFirst().count() <= maxIdsPerCall) {
        Waiter w = waiting.pollFirst();
        total += w.count();
        out.add(w);
      }
      if (!out.isEmpty()) {
        inFlight++;
      }
      return out;
    }

    // Every Pipe is made by (and only ever held by) this Batch, so its lock Batch.this is this: Error Prone
    // cannot relate the two.
    @SuppressWarnings("GuardedBy")
    private void send(List<Waiter> batch) {
      if (batch.isEmpty()) {
        return;
      }
      long total = 0;
      String authorization = null;
      for (Waiter w : batch) {
        total += w.count();
        if (authorization == null) {
          authorization = w.authorization();
        }
      }
      AllocateRequest request = AllocateRequest.newBuilder().setSequence(sequence).setCount(total).build();
      sent.accept(batch.size());
      if (pipesRefused(target)) {
        sendUnary(batch, request, authorization);
        return;
      }
      Pipe pipe;
      Pipe retired = null;
      long now = System.nanoTime();
      synchronized (this) {
        String key = authorization == null ? "" : authorization;
        pipe = pipes.get(key);
        if (pipe != null && now - pipe.openedNanos > PIPE_MAX_AGE.toNanos()) {
          retired = pipe;
          retired.retireLocked();
          pipe = null;
        }
        if (pipe == null) {
          pipe = new Pipe(authorization, now);
          pipes.put(key, pipe);
        }
        pipe.enqueueLocked(batch, request, now);
      }
      if (retired != null) {
        retired.flush();
      }
      pipe.flush();
    }

    /**
     * The way forwarded calls went before {@code IdGenPeer} (and go to an owner that does not serve it): one
     * {@code Allocate} call per batch, with the forwarding headers and the earliest deadline of its callers.
     */
    private void sendUnary(List<Waiter> batch, AllocateRequest request, @Nullable String authorization) {
      Deadline deadline = Deadline.after(MAX_FORWARD_TIME.toNanos(), TimeUnit.NANOSECONDS);
      for (Waiter w : batch) {
        if (w.deadline() != null && w.deadline().isBefore(deadline)) {
          deadline = w.deadline();
        }
      }
      Metadata headers = headersFor(authorization);
      // Outside the callers' contexts (a call takes the current one when it is made): the first caller's call
      // ending (or being cancelled) must not cancel the forwarded call that serves the others too. Its
      // deadline is set above.
      Answer answer = new Answer(batch);
      Context previous = Context.ROOT.attach();
      ClientCall<AllocateRequest, dev.idgen.api.v1.IdRange> call = null;
      try {
        call = channel(target).newCall(IdGenGrpc.getAllocateMethod(), CallOptions.DEFAULT.withDeadline(deadline));
        call.start(answer, headers);
        // A forwarded call's answer is a few ranges at most (one per stripe it touched): no flow control needed.
        call.request(Integer.MAX_VALUE);
        call.sendMessage(request);
        call.halfClose();
      } catch (RuntimeException e) {
        if (call != null) {
          call.cancel("forwarding failed", e);
        }
        answer.onClose(Status.fromThrowable(e), new Metadata()); // once: a close after the cancel is ignored
      } finally {
        Context.ROOT.detach(previous);
      }
    }

    /**
     * One {@code IdGenPeer.ForwardAllocate} stream to the owner, carrying one caller token (the first caller's of
     * the batch that opened it, which the owner checks again): each batch is one request, and the owner answers
     * them in order, so the oldest batch not answered yet is the one an answer is for.
     *
     * <p>Threads: batches are enqueued under the {@link Batch}'s monitor and written by {@link #flush}, which one
     * thread at a time runs (gRPC's outbound calls must not run concurrently), outside the monitor; a start that
     * fails at once closes the call on the same thread, which the monitor allows. Answers and the close arrive on
     * the channel's network thread.
     */
    private final class Pipe extends ClientCall.Listener<ForwardedAnswer> {
      @Nullable private final String authorization;
      final long openedNanos;
      private final ClientCall<AllocateRequest, ForwardedAnswer> call;
      /** Batches sent (or about to be), oldest first, each with when it was enqueued. */
      @GuardedBy("Batch.this") private final ArrayDeque<Sent> outstanding = new ArrayDeque<>();
      @GuardedBy("Batch.this") private final ArrayDeque<AllocateRequest> unsent = new ArrayDeque<>();
      @GuardedBy("Batch.this") private boolean started;
      @GuardedBy("Batch.this") private boolean flushing;
      /** No batch goes on this pipe any more: it is half-closed once what was enqueued is written. */
      @GuardedBy("Batch.this") private boolean retired;
      @GuardedBy("Batch.this") private boolean halfClosed;
      @GuardedBy("Batch.this") private long lastUsedNanos;

      Pipe(@Nullable String authorization, long now) {
        this.authorization = authorization;
        this.openedNanos = now;
        this.lastUsedNanos = now;
        // Made outside the callers' contexts: a caller's call ending must not cancel the stream the others use.
        Context previous = Context.ROOT.attach();
        try {
          call = channel(target).newCall(IdGenPeerGrpc.getForwardAllocateMethod(), CallOptions.DEFAULT);
        } finally {
          Context.ROOT.detach(previous);
        }
      }

      @GuardedBy("Batch.this")
      void enqueueLocked(List<Waiter> batch, AllocateRequest request, long now) {
        outstanding.addLast(new Sent(batch, request, now));
        unsent.addLast(request);
        lastUsedNanos = now;
      }

      /** From now on no batch is enqueued here; {@link #flush} half-closes it. */
      @GuardedBy("Batch.this")
      void retireLocked() {
        retired = true;
        pipes.remove(authorization == null ? "" : authorization, this);
      }

      /** Starts the call if it is new, writes what was enqueued, half-closes it once retired. */
      void flush() {
        synchronized (Batch.this) {
          if (flushing) {
            return; // the thread that flushes now writes what this one enqueued too
          }
          flushing = true;
        }
        for (;;) {
          boolean start;
          AllocateRequest request;
          boolean halfClose;
          synchronized (Batch.this) {
            start = !started;
            started = true;
            request = start ? null : unsent.pollFirst();
            halfClose = !start && request == null && retired && !halfClosed;
            if (!start && request == null && !halfClose) {
              flushing = false;
              return;
            }
            halfClosed |= halfClose;
          }
          try {
            if (start) {
              call.start(this, headersFor(authorization));
              call.request(Integer.MAX_VALUE); // one small answer per request, and at most maxInFlight requests
            } else if (request != null) {
              call.sendMessage(request);
            } else {
              call.halfClose();
            }
          } catch (RuntimeException e) {
            call.cancel("forwarding failed", e); // its close fails what was enqueued
          }
        }
      }

      @Override
      public void onMessage(ForwardedAnswer answer) {
        Sent s;
        synchronized (Batch.this) {
          s = outstanding.pollFirst();
        }
        if (s == null) {
          call.cancel("the owner answered a request that was not sent", null);
          return;
        }
        List<IdRange> ranges = new ArrayList<>(answer.getRangesCount());
        for (dev.idgen.api.v1.IdRange r : answer.getRangesList()) {
          ranges.add(SequenceMessages.fromProto(r));
        }
        boolean ok = !answer.hasStatus() || answer.getStatus().getCode() == Status.Code.OK.value();
        concluded(s.batch(), ranges, ok ? null : StatusProto.toStatusRuntimeException(answer.getStatus()));
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        List<Sent> unanswered;
        synchronized (Batch.this) {
          retireLocked();
          unanswered = new ArrayList<>(outstanding);
          outstanding.clear();
          unsent.clear();
        }
        if (unanswered.isEmpty()) {
          return;
        }
        if (status.getCode() == Status.Code.UNIMPLEMENTED) {
          // An owner that does not serve IdGenPeer (an older version, during a rolling upgrade): one call per
          // batch to it for a while. Nothing was handed out for these batches.
          refusePipes(target);
          for (Sent s : unanswered) {
            sendUnary(s.batch(), s.request(), authorization);
          }
          return;
        }
        StatusRuntimeException t = status.asRuntimeException(trailers);
        Optional<String> reason = reason(t);
        if (status.isOk() || reason.map(ErrorReason.SERVER_SHUTTING_DOWN.name()::equals).orElse(false)) {
          // The owner ended the stream without answering these (it is stopping): they were not served, and the
          // owner is not to be asked again before its row is read again.
          t = Status.UNAVAILABLE.withDescription("the owner ended the forwarding stream: " + status.getCode() + " "
              + status.getDescription()).asRuntimeException();
        }
        for (Sent s : unanswered) {
          concluded(s.batch(), List.of(), t);
        }
      }

      /** For the sweep: cancels a pipe whose oldest batch waited too long, retires an idle or old one. */
      void sweep(long now) {
        boolean cancel = false;
        boolean retire = false;
        synchronized (Batch.this) {
          Sent oldest = outstanding.peekFirst();
          if (oldest != null) {
            cancel = now - oldest.enqueuedNanos() > MAX_FORWARD_TIME.toNanos();
          } else if (!retired && (now - lastUsedNanos > PIPE_IDLE.toNanos()
              || now - openedNanos > PIPE_MAX_AGE.toNanos())) {
            retireLocked();
            retire = true;
          }
        }
        if (cancel) {
          call.cancel("the owner did not answer a forwarded call within " + MAX_FORWARD_TIME.toSeconds() + " s",
              null);
        } else if (retire) {
          flush();
        }
      }
    }

    private record Sent(List<Waiter> batch, AllocateRequest request, long enqueuedNanos) {}

    /** The pipes open now, for the sweep. */
    synchronized List<Pipe> pipes() {
      return new ArrayList<>(pipes.values());
    }

    /** The owner's answer to one forwarded call, on the channel's network thread. */
    private final class Answer extends ClientCall.Listener<dev.idgen.api.v1.IdRange> {
      private final List<Waiter> batch;
      private final List<IdRange> received = new ArrayList<>(1);
      /** Its callers are answered once, whether the call closed or failed to start. */
      private final AtomicBoolean answered = new AtomicBoolean();

      Answer(List<Waiter> batch) {
        this.batch = batch;
      }

      @Override
      public void onMessage(dev.idgen.api.v1.IdRange r) {
        received.add(SequenceMessages.fromProto(r));
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        if (!answered.compareAndSet(false, true)) {
          return;
        }
        concluded(batch, received, status.isOk() ? null : status.asRuntimeException(trailers));
      }
    }

    /**
     * One forwarded call's outcome, unary or on a pipe: its ranges are cut among its callers; after an error
     * ({@code error} non-null), callers that got nothing from an owner that is not where it was look again.
     */
    private void concluded(List<Waiter> batch, List<IdRange> ranges, @Nullable StatusRuntimeException error) {
      if (error == null) {
        finished(batch, ranges, null);
      } else if (ranges.isEmpty() && misrouted(error)) {
        rerouted(batch, error);
      } else {
        finished(batch, ranges, failure(error));
      }
    }

    /** Nothing was handed out and the owner is not where it was: callers that may look again do. */
    private void rerouted(List<Waiter> batch, Throwable t) {
      List<Waiter> failed = new ArrayList<>();
      for (Waiter w : batch) {
        if (w.reroute() == null) {
          failed.add(w);
        }
      }
      StatusRuntimeException error = failure(t); // also makes the allocator read the owner row again
      for (Waiter w : batch) {
        if (w.reroute() != null) {
          w.reroute().run();
        }
      }
      finished(failed, List.of(), error);
    }

    /** The owner refused the call as not its own, or could not be reached at all. */
    private boolean misrouted(Throwable t) {
      Optional<String> reason = reason(t);
      return reason.map(r -> r.equals(ErrorReason.NOT_OWNER.name()))
          .orElse(Status.fromThrowable(t).getCode() == Status.Code.UNAVAILABLE);
    }

    /** Cuts the ranges among the batch's callers in arrival order; those left without IDs get the error. */
    private void finished(List<Waiter> batch, List<IdRange> ranges, @Nullable StatusRuntimeException error) {
      int next = 0;
      IdRange rest = null;
      Executor here = NetworkThreads.current();
      Map<Executor, List<Runnable>> elsewhere = null;
      for (Waiter w : batch) {
        List<IdRange> mine = new ArrayList<>(1);
        long need = w.count();
        while (need > 0) {
          if (rest == null) {
            if (next == ranges.size()) {
              break;
            }
            rest = ranges.get(next++);
          }
          long k = Math.min(need, rest.count());
          mine.add(rest.head(k));
          rest = k < rest.count() ? rest.tail(k) : null;
          need -= k;
        }
        StatusRuntimeException own = need == 0 ? null : error != null ? error
            : ErrorStatus.of(ErrorReason.INTERNAL_ERROR, StatusMapper.INTERNAL_DESCRIPTION).exception();
        if (need > 0 && error == null) {
          log.error("the owner {} of sequence '{}' answered a forwarded call with fewer IDs than asked", target,
              sequence);
        }
        if (w.loop() == null || w.loop() == here) {
          answer(w, mine, own);
        } else {
          if (elsewhere == null) {
            elsewhere = new HashMap<>(4);
          }
          elsewhere.computeIfAbsent(w.loop(), l -> new ArrayList<>(4)).add(() -> answer(w, mine, own));
        }
      }
      if (elsewhere != null) {
        handBack(elsewhere);
      }
      List<Waiter> send;
      synchronized (this) {
        inFlight--;
        send = takeBatch();
      }
      send(send);
    }

    /**
     * Completes callers on the network threads they called on, one task per thread: their answers are then
     * written and flushed there as a served call's are, instead of each write waking that thread on its own.
     */
    private void handBack(Map<Executor, List<Runnable>> byLoop) {
      for (Map.Entry<Executor, List<Runnable>> e : byLoop.entrySet()) {
        List<Runnable> answers = e.getValue();
        Runnable all = () -> answers.forEach(Runnable::run);
        try {
          e.getKey().execute(all);
        } catch (RejectedExecutionException shutDown) {
          all.run(); // the loop is closing with its connections: the streams fail their writes themselves
        }
      }
    }

    /**
     * Hands one caller its outcome. A caller whose answer fails must leave neither the other callers of its batch
     * unanswered nor the batch counted in flight (which would stop the sequence's forwarding here).
     */
    private void answer(Waiter w, List<IdRange> mine, @Nullable StatusRuntimeException own) {
      try {
        w.callback().done(mine, own);
      } catch (RuntimeException e) {
        log.error("answering a forwarded caller of sequence '{}' failed", sequence, e);
      }
    }

    /** What callers see when the forwarded call failed. */
    private StatusRuntimeException failure(Throwable t) {
      Status status = Status.fromThrowable(t);
      Metadata trailers = Status.trailersFromThrowable(t);
      Optional<String> reason = reason(t);
      if (reason.isPresent() && !reason.get().equals(ErrorReason.NOT_OWNER.name())) {
        // idgen's own answer (NOT_FOUND, OUT_OF_RANGE, OWNER_UNAVAILABLE, SERVER_BUSY ...): as it is.
        return status.asRuntimeException(trailers);
      }
      // Not the owner any more, or not reachable (dead, cut off, stopped): the next call reads the owner
      // row again before it forwards anywhere.
      allocator.ownerRefused(sequence, target);
      Duration retry = reason.isPresent() ? Duration.ofMillis(100) : allocator.ownerLease().dividedBy(4);
      return ErrorStatus.of(ErrorReason.OWNER_UNAVAILABLE, "sequence '" + sequence + "' is strict, and its owner "
              + target + " could not serve the forwarded call: " + status.getCode() + " "
              + status.getDescription())
          .put("sequence", sequence).put("owner", target).retryAfter(retry).exception();
    }
  }

  /** The ErrorInfo reason of an idgen error status, if it has one. */
  private static Optional<String> reason(Throwable t) {
    com.google.rpc.Status details = StatusProto.fromThrowable(t);
    if (details == null) {
      return Optional.empty();
    }
    for (com.google.protobuf.Any any : details.getDetailsList()) {
      if (any.is(com.google.rpc.ErrorInfo.class)) {
        try {
          com.google.rpc.ErrorInfo info = any.unpack(com.google.rpc.ErrorInfo.class);
          if (ErrorStatus.DOMAIN.equals(info.getDomain())) {
            return Optional.of(info.getReason());
          }
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
          return Optional.empty();
        }
      }
    }
    return Optional.empty();
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
    for (ManagedChannel c : channels.values()) {
      c.shutdownNow();
    }
  }
}
