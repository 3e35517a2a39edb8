package dev.idgen.server.api;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.google.inject.Inject;
import com.google.inject.Singleton;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.api.v1.ForwardedAnswer;
import dev.idgen.api.v1.IdGenPeerGrpc;
import dev.idgen.core.Allocator;
import dev.idgen.core.IdRange;
import dev.idgen.core.KnownSequence;
import dev.idgen.core.Route;
import dev.idgen.server.metrics.IdGenMetrics;
import dev.idgen.server.status.ErrorStatus;
import dev.idgen.server.transport.WorkerPool;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import javax.annotation.Nullable;

/**
 * {@code idgen.v1.IdGenPeer}: the owner's side of strict forwarding. A forwarding server ({@link StrictForwarder})
 * sends the forwarded calls of one strict sequence as the requests of one long-lived {@code ForwardAllocate}
 * stream rather than as one {@code Allocate} call each: a forwarded call then costs both servers a message each
 * way, not a call's setup, headers, interceptors and trailers. Each request is served as a forwarded
 * {@code Allocate} call would be (never forwarded again; NOT_OWNER if this server does not own the sequence) and
 * answered with one {@code ForwardedAnswer}, counted in {@code idgen_allocate_calls_total} like that call.
 *
 * <p>Threads: a stream's requests are read one at a time: the next is requested from gRPC only once the previous
 * one is answered and the stream can take more, so at most one request per stream is being served, the answers
 * go out in the order of the requests, and a peer that sends faster is held back by HTTP/2 flow control rather
 * than queued here. A request whose IDs are in memory is answered on the network thread that read it; one that
 * must wait moves to the {@link WorkerPool}, as an {@code Allocate} call does. Each stream's state is guarded by
 * its own lock, which is also held while an answer or the end is written to the call (gRPC's outbound calls
 * must not run concurrently).
 *
 * <p>At a graceful stop ({@link #drain}) every stream ends (UNAVAILABLE, SERVER_SHUTTING_DOWN) once the request
 * it is serving is answered, so that the server's wait for open calls is not spent on streams that would never
 * end. Requests a stream had not read get no answer: the forwarding server looks the owner up again for them.
 */
@ThreadSafe
@Singleton
public final class PeerService extends IdGenPeerGrpc.IdGenPeerImplBase {
  private final IdGenService idGen;
  private final Allocator allocator;
  private final IdGenMetrics metrics;
  private final WorkerPool waits;
  private final Set<Stream> open = ConcurrentHashMap.newKeySet();
  private volatile boolean draining;

  @Inject
  PeerService(IdGenService idGen, Allocator allocator, IdGenMetrics metrics, WorkerPool waits) {
    this.idGen = idGen;
    this.allocator = allocator;
    this.metrics = metrics;
    this.waits = waits;
  }

  @Override
  public StreamObserver<AllocateRequest> forwardAllocate(StreamObserver<ForwardedAnswer> responses) {
    ServerCallStreamObserver<ForwardedAnswer> call = (ServerCallStreamObserver<ForwardedAnswer>) responses;
    call.disableAutoRequest();
    Stream stream = new Stream(call);
    call.setOnCancelHandler(stream::cancelled);
    call.setOnReadyHandler(stream::ready);
    open.add(stream);
    if (draining) {
      stream.drain(); // began after this server stopped accepting calls: ends at once
    } else {
      call.request(1);
    }
    return stream;
  }

  /** A graceful stop: every stream ends once the request it serves, if any, is answered. Idempotent. */
  public void drain() {
    draining = true;
    for (Stream s : open) {
      s.drain();
    }
  }

  /** One forwarding server's stream for one strict sequence. */
  private final class Stream implements StreamObserver<AllocateRequest> {
    private final ServerCallStreamObserver<ForwardedAnswer> call;
    private final Object lock = new Object();
    /** A request is being served: its answer is not written yet. */
    @GuardedBy("lock") private boolean serving;
    /** The peer sent its last request (half-close), or the server drains: end once nothing is served. */
    @GuardedBy("lock") private boolean ending;
    @GuardedBy("lock") private boolean draining;
    /** The call is over: ended here, cancelled, or failed. */
    @GuardedBy("lock") private boolean ended;
    /** An answer was written while the call could not take more: the next request waits for onReady. */
    @GuardedBy("lock") private boolean readPending;

    Stream(ServerCallStreamObserver<ForwardedAnswer> call) {
      this.call = call;
    }

    @Override
    public void onNext(AllocateRequest request) {
      synchronized (lock) {
        if (ended) {
          return;
        }
        serving = true;
      }
      String sequence = request.getSequence();
      long count = request.getCount();
      Route route = allocator.route(sequence, count, false);
      if (route instanceof Route.Served served) {
        answer(sequence, served.ranges(), null);
        return;
      }
      long arrived = System.nanoTime();
      try {
        waits.execute(() -> {
          IdGenService.Outcome o = idGen.allocateBlocking(sequence, count,
              idGen.waitBudget(null, System.nanoTime() - arrived), null, true);
          answer(sequence, o.ranges(), o.error());
        });
      } catch (RejectedExecutionException e) {
        answer(sequence, List.of(), WorkerPool.refusal(e)); // the worker pool's bound: nothing handed out
      }
    }

    /**
     * Writes one request's answer: its ranges up to the first one at or below a floor an AdvanceSequence set
     * since they were taken (that one and the rest are a counted gap, and the answer says RANGES_WITHDRAWN, as
     * an Allocate call's stream would), then its status. Requests the next one if the call can take more.
     */
    private void answer(String sequence, List<IdRange> ranges, @Nullable StatusRuntimeException error) {
      ForwardedAnswer.Builder a = ForwardedAnswer.newBuilder();
      KnownSequence known = ranges.isEmpty() ? null : allocator.known(sequence);
      long ids = 0;
      long withdrawnIds = 0;
      String withdrawn = null;
      for (IdRange r : ranges) {
        if (withdrawn == null) {
          withdrawn = IdGenService.RangeStream.belowFloor(sequence, known, r);
        }
        if (withdrawn != null) {
          withdrawnIds += r.count();
          continue;
        }
        ids += r.count();
        a.addRanges(dev.idgen.api.v1.IdRange.newBuilder().setFirst(r.first()).setCount(r.count())
            .setStride(r.stride()));
      }
      if (withdrawn != null) {
        error = ErrorStatus.of(ErrorReason.RANGES_WITHDRAWN, withdrawn).put("sequence", sequence).exception();
      }
      if (error != null) {
        a.setStatus(statusOf(error));
      }
      boolean requestNext;
      synchronized (lock) {
        serving = false;
        if (ended) {
          metrics.abandonedInCall(ids + withdrawnIds); // cancelled while it was served: never sent
          return;
        }
        call.onNext(a.build());
        requestNext = !endIfDueLocked() && call.isReady();
        readPending = !requestNext && !ended;
      }
      metrics.forwardedAnswered(sequence, allocator.isLoaded(sequence),
          error == null ? Status.Code.OK : error.getStatus().getCode(), ids);
      if (withdrawnIds > 0) {
        metrics.abandonedInCall(withdrawnIds);
      }
      if (requestNext) {
        call.request(1);
      }
    }

    /** If the stream is to end and nothing is served, ends it; whether it has ended. */
    @GuardedBy("lock")
    private boolean endIfDueLocked() {
      if (ended || serving || !ending) {
        return ended;
      }
      ended = true;
      open.remove(this);
      if (draining) {
        call.onError(ErrorStatus.of(ErrorReason.SERVER_SHUTTING_DOWN, "the owner is shutting down; the requests"
            + " it did not answer were not served").exception());
      } else {
        call.onCompleted();
      }
      return true;
    }

    void ready() {
      synchronized (lock) {
        if (!readPending || ended) {
          return;
        }
        readPending = false;
      }
      call.request(1);
    }

    void drain() {
      synchronized (lock) {
        ending = true;
        draining = true;
        endIfDueLocked();
      }
    }

    @Override
    public void onCompleted() {
      synchronized (lock) {
        ending = true;
        endIfDueLocked();
      }
    }

    @Override
    public void onError(Throwable t) {
      cancelled(); // the peer cancelled the stream
    }

    void cancelled() {
      synchronized (lock) {
        ended = true;
        open.remove(this);
      }
    }
  }

  /** The google.rpc.Status of an error, with its details (those idgen sets are in its trailers). */
  static com.google.rpc.Status statusOf(StatusRuntimeException error) {
    com.google.rpc.Status details = StatusProto.fromThrowable(error);
    if (details != null) {
      return details;
    }
    Status s = error.getStatus();
    return com.google.rpc.Status.newBuilder().setCode(s.getCode().value())
        .setMessage(s.getDescription() == null ? "" : s.getDescription()).build();
  }

  /** For tests: the streams open now. */
  int openStreams() {
    return open.size();
  }

  @Override
  public String toString() {
    return "PeerService{open=" + open.size() + ", draining=" + draining + "}";
  }
}
