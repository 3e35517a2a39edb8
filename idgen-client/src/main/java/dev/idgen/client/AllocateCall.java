package dev.idgen.client;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One {@code IdGen.Allocate} call, for a lease ({@link Refiller}) or for a caller of a strict sequence
 * ({@link StrictRequest}); its owner says where its ranges, completion and failure go. Also what the
 * two share about calls: what a range's {@code valid_for} means, and the back-off between attempts.
 *
 * <p>Threads: the call is started by {@link #start} on the client's executor, never under a source's
 * lock; its callbacks run on the executor too, serialized by gRPC, and take the owner's lock themselves
 * (a callback of a call its owner no longer counts as active changes nothing). {@link #cancel()} may
 * come from any thread (close, a deadline) at any time, even before the call has fully started: each
 * side writes its own volatile flag ({@code started}, {@code cancelled}) and then reads the other's, so
 * at least one of them cancels. {@code sentNanos} is volatile because it is written on the thread that
 * starts the call and read by the callbacks.
 */
final class AllocateCall implements ClientResponseObserver<AllocateRequest, IdRange> {
  private static final Logger logger = Logger.getLogger(AllocateCall.class.getName());

  /** The longest {@code valid_for} taken as a limit: about 73 years; beyond it, none. */
  static final long MAX_VALID_FOR_NANOS = Long.MAX_VALUE / 4;

  final String sequence;
  final int endpoint;
  /** IDs this call asks for. */
  final long count;
  /** The ticker reading just before the call was started: its ranges expire {@code valid_for} after it. */
  volatile long sentNanos;

  private volatile ClientCallStreamObserver<AllocateRequest> call;
  /** Set once {@code allocate()} returned: a call is cancelled only once it has fully started. */
  private volatile boolean started;
  private volatile boolean cancelled;

  private final BiConsumer<AllocateCall, IdRange> onRange;
  private final Consumer<AllocateCall> onCompleted;
  private final BiConsumer<AllocateCall, Throwable> onFailed;

  /** A call whose ranges, completion and failure go to its owner's three methods. */
  AllocateCall(String sequence, int endpoint, long count, BiConsumer<AllocateCall, IdRange> onRange,
      Consumer<AllocateCall> onCompleted, BiConsumer<AllocateCall, Throwable> onFailed) {
    this.sequence = sequence;
    this.endpoint = endpoint;
    this.count = count;
    this.onRange = onRange;
    this.onCompleted = onCompleted;
    this.onFailed = onFailed;
  }

  /** Starts the call (never under a lock); a failure to start it goes to {@link #onError}. */
  void start(Endpoints endpoints, ClientSettings settings) {
    AllocateRequest request = AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build();
    try {
      IdGenGrpc.IdGenStub stub = endpoints.get(endpoint).stub
          .withDeadlineAfter(settings.callDeadlineNanos(), TimeUnit.NANOSECONDS);
      // The "sent" time the ranges of this call expire from: read before the call can send anything.
      sentNanos = settings.ticker().nanos();
      stub.allocate(request, this);
    } catch (RuntimeException e) {
      onError(e);
      return;
    }
    started();
  }

  @Override
  public void onNext(IdRange range) {
    onRange.accept(this, range);
  }

  @Override
  public void onError(Throwable t) {
    onFailed.accept(this, t);
  }

  @Override
  public void onCompleted() {
    onCompleted.accept(this);
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<AllocateRequest> requestStream) {
    call = requestStream;
  }

  /**
   * After the call started: if close() came meanwhile, it left the cancelling to us. Each side
   * writes its flag then reads the other's, so at least one of them cancels.
   */
  private void started() {
    started = true;
    if (cancelled) {
      cancelCall();
    }
  }

  /** Cancels the call, now if it has started, else as soon as it has. */
  void cancel() {
    cancelled = true;
    if (started) {
      cancelCall();
    }
  }

  private void cancelCall() {
    ClientCallStreamObserver<AllocateRequest> c = call;
    if (c == null) {
      return;
    }
    try {
      c.cancel("the IdGenClient was closed", null);
    } catch (RuntimeException e) {
      // close() must not fail because a transport did while cancelling.
      logger.log(Level.FINE, "sequence '" + sequence + "': cancelling a call failed", e);
    }
  }

  /**
   * The range's {@code valid_for} in nanoseconds: 0 if unset or zero (no limit), {@code -1} if
   * negative or not a valid {@code Duration} (a malformed range), saturated at {@code Long.MAX_VALUE}.
   */
  static long validForOf(IdRange r) {
    if (!r.hasValidFor()) {
      return 0;
    }
    com.google.protobuf.Duration validFor = r.getValidFor();
    long seconds = validFor.getSeconds();
    int nanos = validFor.getNanos();
    if (seconds < 0 || nanos < 0 || nanos > 999_999_999) {
      return -1;
    }
    if (seconds >= Long.MAX_VALUE / 1_000_000_000L) {
      return Long.MAX_VALUE;
    }
    return seconds * 1_000_000_000L + nanos;
  }

  /** The delay before the next attempt: the back-off, or the server's RetryInfo within the client's bound. */
  static long retryDelayNanos(ClientSettings settings, int failedAttempts, ServerError error) {
    long delay = backoffNanos(settings, failedAttempts);
    if (error.retryDelayNanos() > delay) {
      delay = Math.max(delay, Math.min(error.retryDelayNanos(), settings.maxBackoffNanos()));
    }
    return delay;
  }

  /**
   * A random delay that grows with the attempt number: uniform in {@code [d/2, d]} with {@code d =
   * min(maxBackoff, initialBackoff × 2^(attempt-1))}, so that clients failing together do not retry
   * in lock-step.
   */
  static long backoffNanos(ClientSettings settings, int attempt) {
    long d = settings.initialBackoffNanos();
    for (int k = 1; k < attempt && d < settings.maxBackoffNanos(); k++) {
      d *= 2;
    }
    d = Math.min(d, settings.maxBackoffNanos());
    return d / 2 + ThreadLocalRandom.current().nextLong(d / 2 + 1);
  }
}
