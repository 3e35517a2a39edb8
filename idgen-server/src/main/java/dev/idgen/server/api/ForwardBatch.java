package dev.idgen.server.api;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.api.v1.ForwardedAnswer;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdGenPeerGrpc;
import dev.idgen.core.IdRange;
import dev.idgen.server.status.ErrorStatus;
import dev.idgen.server.transport.NetworkThreads;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The forwarded calls of one strict sequence to one owner ({@link StrictForwarder} keeps one per pair): the
 * callers that wait, coalesced into batches of up to the per-call limit, at most {@code maxInFlight} batches
 * in flight; each batch sent on a {@link Pipe} (a long-lived {@code IdGenPeer/ForwardAllocate} stream per caller
 * token) or, to an owner that refused pipes, as one unary {@code Allocate}; and the answer cut among the
 * batch's callers in arrival order (see {@link StrictForwarder} for why that keeps the strict promise).
 *
 * <p>Threads: {@link #submit} may run on a network thread and never blocks. The waiters, the count in flight and
 * the pipes are guarded by this object's monitor, held only to move waiters and enqueue batches; a pipe's
 * state is guarded by the same monitor ({@code ForwardBatch.this}), and one thread at a time writes a pipe,
 * outside it. Answers arrive on the channel's network thread (a direct executor), which cuts the ranges and
 * completes the callers: at once for those that called on that thread, else with one task per network thread
 * they called on.
 */
@ThreadSafe
final class ForwardBatch {
  /** The forwarding's log lines keep its category: operators may filter by it. */
  private static final Logger log = LoggerFactory.getLogger(StrictForwarder.class);

  /**
   * The longest a forwarded call may take: a unary one when its callers set no deadline; on a pipe, the oldest
   * batch not answered (the pipe is then cancelled, and its batches fail).
   */
  static final Duration MAX_FORWARD_TIME = Duration.ofSeconds(10);
  /**
   * A pipe is half-closed after this long without a batch, and replaced once this old, so that the caller
   * token it carries is checked again by the owner now and then and pipes of sequences no longer called end.
   */
  static final Duration PIPE_IDLE = Duration.ofSeconds(30);
  static final Duration PIPE_MAX_AGE = Duration.ofMinutes(5);

  private final String target;
  private final String sequence;
  @GuardedBy("this") private final ArrayDeque<Waiter> waiting = new ArrayDeque<>();
  @GuardedBy("this") private int inFlight;
  /** Open pipes to the owner, by the caller token they carry ("" for none). */
  @GuardedBy("this") private final Map<String, Pipe> pipes = new HashMap<>(2);

  private final long maxIdsPerCall;
  /** Forwarded calls of this sequence to this owner at once; more callers wait and go as one call. */
  private final int maxInFlight;
  /** Told of every forwarded call, with how many callers it carries. */
  private final IntConsumer sent;
  private final OwnerChannels channels;
  private final ForwardHeaders headers;
  private final ForwardErrors errors;

  ForwardBatch(String target, String sequence, long maxIdsPerCall, int maxInFlight, IntConsumer sent,
      OwnerChannels channels, ForwardHeaders headers, ForwardErrors errors) {
    this.target = target;
    this.sequence = sequence;
    this.maxIdsPerCall = maxIdsPerCall;
    this.maxInFlight = maxInFlight;
    this.sent = sent;
    this.channels = channels;
    this.headers = headers;
    this.errors = errors;
  }

  /** One caller; {@code loop}: the network thread it called on (null: none), where its answer is sent from. */
  record Waiter(long count, @Nullable Deadline deadline, @Nullable String authorization,
      StrictForwarder.Callback callback, @Nullable Runnable reroute, @Nullable Executor loop) {}

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

  // Every Pipe is made by (and only ever held by) this ForwardBatch, so its lock ForwardBatch.this is this:
  // Error Prone cannot relate the two.
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
    if (channels.pipesRefused(target)) {
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
    Metadata callHeaders = headers.forCall(authorization);
    // Outside the callers' contexts (a call takes the current one when it is made): the first caller's call
    // ending (or being cancelled) must not cancel the forwarded call that serves the others too. Its
    // deadline is set above.
    Answer answer = new Answer(batch);
    Context previous = Context.ROOT.attach();
    ClientCall<AllocateRequest, dev.idgen.api.v1.IdRange> call = null;
    try {
      call = channels.channel(target)
          .newCall(IdGenGrpc.getAllocateMethod(), CallOptions.DEFAULT.withDeadline(deadline));
      call.start(answer, callHeaders);
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
   * <p>Threads: batches are enqueued under the {@link ForwardBatch}'s monitor and written by {@link #flush}, which
   * one thread at a time runs (gRPC's outbound calls must not run concurrently), outside the monitor; a start that
   * fails at once closes the call on the same thread, which the monitor allows. Answers and the close arrive on the
   * channel's network thread.
   */
  final class Pipe extends ClientCall.Listener<ForwardedAnswer> {
    @Nullable private final String authorization;
    final long openedNanos;
    private final ClientCall<AllocateRequest, ForwardedAnswer> call;
    /** Batches sent (or about to be), oldest first, each with when it was enqueued. */
    @GuardedBy("ForwardBatch.this") private final ArrayDeque<Sent> outstanding = new ArrayDeque<>();
    @GuardedBy("ForwardBatch.this") private final ArrayDeque<AllocateRequest> unsent = new ArrayDeque<>();
    @GuardedBy("ForwardBatch.this") private boolean started;
    @GuardedBy("ForwardBatch.this") private boolean flushing;
    /** No batch goes on this pipe any more: it is half-closed once what was enqueued is written. */
    @GuardedBy("ForwardBatch.this") private boolean retired;
    @GuardedBy("ForwardBatch.this") private boolean halfClosed;
    @GuardedBy("ForwardBatch.this") private long lastUsedNanos;

    Pipe(@Nullable String authorization, long now) {
      this.authorization = authorization;
      this.openedNanos = now;
      this.lastUsedNanos = now;
      // Made outside the callers' contexts: a caller's call ending must not cancel the stream the others use.
      Context previous = Context.ROOT.attach();
      try {
        call = channels.channel(target)
            .newCall(IdGenPeerGrpc.getForwardAllocateMethod(), CallOptions.DEFAULT);
      } finally {
        Context.ROOT.detach(previous);
      }
    }

    @GuardedBy("ForwardBatch.this")
    void enqueueLocked(List<Waiter> batch, AllocateRequest request, long now) {
      outstanding.addLast(new Sent(batch, request, now));
      unsent.addLast(request);
      lastUsedNanos = now;
    }

    /** From now on no batch is enqueued here; {@link #flush} half-closes it. */
    @GuardedBy("ForwardBatch.this")
    void retireLocked() {
      retired = true;
      pipes.remove(authorization == null ? "" : authorization, this);
    }

    /** Starts the call if it is new, writes what was enqueued, half-closes it once retired. */
    void flush() {
      synchronized (ForwardBatch.this) {
        if (flushing) {
          return; // the thread that flushes now writes what this one enqueued too
        }
        flushing = true;
      }
      for (;;) {
        boolean start;
        AllocateRequest request;
        boolean halfClose;
        synchronized (ForwardBatch.this) {
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
            call.start(this, headers.forCall(authorization));
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
      synchronized (ForwardBatch.this) {
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
      synchronized (ForwardBatch.this) {
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
        channels.refusePipes(target);
        for (Sent s : unanswered) {
          sendUnary(s.batch(), s.request(), authorization);
        }
        return;
      }
      StatusRuntimeException t = status.asRuntimeException(trailers);
      Optional<String> reason = ForwardErrors.reason(t);
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
      synchronized (ForwardBatch.this) {
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
    } else if (ranges.isEmpty() && ForwardErrors.misrouted(error)) {
      rerouted(batch, error);
    } else {
      finished(batch, ranges, errors.failure(error, sequence, target));
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
    // Also makes the allocator read the owner row again.
    StatusRuntimeException error = errors.failure(t, sequence, target);
    for (Waiter w : batch) {
      if (w.reroute() != null) {
        w.reroute().run();
      }
    }
    finished(failed, List.of(), error);
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

}
