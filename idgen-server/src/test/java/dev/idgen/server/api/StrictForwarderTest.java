package dev.idgen.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.api.v1.ForwardedAnswer;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdGenPeerGrpc;
import dev.idgen.core.Allocator;
import dev.idgen.core.IdRange;
import dev.idgen.server.InMemoryRangeStore;
import dev.idgen.server.status.ErrorStatus;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.netty.channel.DefaultEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.EventLoop;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.annotation.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The forwarding side of strict sequences against scripted owners on loopback: batches go as the requests of one
 * {@code IdGenPeer.ForwardAllocate} stream and each answer is cut among its batch's callers in order; an answer's
 * NOT_OWNER and a stream the owner ends while stopping send the callers to look the owner up again; an owner
 * without {@code IdGenPeer} (an older version) gets one unary {@code Allocate} call per batch.
 */
class StrictForwarderTest {
  private Allocator allocator;
  private StrictForwarder forwarder;
  private Server owner;

  @BeforeEach
  void setUp() {
    allocator = Allocator.builder(new InMemoryRangeStore()).minNodeBlock(100).build();
    forwarder = new StrictForwarder(allocator, "forwarder", 1_000_000, 2, InsecureChannelCredentials.create(),
        callers -> {});
    forwarder.start();
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    forwarder.close();
    if (owner != null) {
      owner.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
    allocator.close();
  }

  private String serve(io.grpc.BindableService... services) throws IOException {
    io.grpc.ServerBuilder<?> b = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create());
    for (io.grpc.BindableService s : services) {
      b.addService(ServerInterceptors.intercept(s, headerCheck));
    }
    owner = b.build().start();
    return "127.0.0.1:" + owner.getPort();
  }

  /** The forwarding header every call to the owner must carry. */
  private final Set<String> forwardedBy = ConcurrentHashMap.newKeySet();
  private final io.grpc.ServerInterceptor headerCheck = new io.grpc.ServerInterceptor() {
    @Override
    public <Q, A> io.grpc.ServerCall.Listener<Q> interceptCall(io.grpc.ServerCall<Q, A> call, Metadata headers,
        io.grpc.ServerCallHandler<Q, A> next) {
      forwardedBy.add(String.valueOf(headers.get(StrictForwarder.FORWARDED_BY)));
      return next.startCall(call, headers);
    }
  };

  /** One forwarded caller's outcome. */
  private static final class Caller {
    final CountDownLatch done = new CountDownLatch(1);
    final AtomicInteger rerouted = new AtomicInteger();
    volatile List<IdRange> ranges;
    volatile StatusRuntimeException error;

    void forward(StrictForwarder f, String target, long count) {
      f.forward(target, "orders", count, null, null, (r, e) -> {
        ranges = r;
        error = e;
        done.countDown();
      }, () -> {
        rerouted.incrementAndGet();
        done.countDown();
      });
    }

    Caller await() throws InterruptedException {
      assertThat(done.await(20, TimeUnit.SECONDS)).as("answered").isTrue();
      return this;
    }
  }

  /** An owner serving IdGenPeer: answers each request with the next IDs, or as {@code script} says. */
  private static class Peer extends IdGenPeerGrpc.IdGenPeerImplBase {
    final AtomicInteger streams = new AtomicInteger();
    final AtomicLong next = new AtomicLong(1);
    final List<Long> requests = new ArrayList<>();

    /** The answer to the {@code n}th request (0-based): null for IDs. */
    @Nullable
    StatusRuntimeException script(int n) {
      return null;
    }

    @Override
    public StreamObserver<AllocateRequest> forwardAllocate(StreamObserver<ForwardedAnswer> responses) {
      streams.incrementAndGet();
      return new StreamObserver<>() {
        @Override
        public void onNext(AllocateRequest r) {
          int n;
          synchronized (requests) {
            n = requests.size();
            requests.add(r.getCount());
          }
          StatusRuntimeException e = script(n);
          ForwardedAnswer.Builder a = ForwardedAnswer.newBuilder();
          if (e != null) {
            a.setStatus(PeerService.statusOf(e));
          } else {
            a.addRanges(dev.idgen.api.v1.IdRange.newBuilder().setFirst(next.getAndAdd(r.getCount()))
                .setCount(r.getCount()).setStride(1));
          }
          synchronized (this) {
            responses.onNext(a.build());
          }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          responses.onCompleted();
        }
      };
    }
  }

  @Test
  void should_send_every_batch_on_one_stream_and_cut_each_answer_among_its_callers_in_order() throws Exception {
    Peer peer = new Peer();
    String target = serve(peer);
    List<Caller> callers = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      Caller c = new Caller();
      callers.add(c);
      c.forward(forwarder, target, 1 + i % 3);
    }
    Set<Long> ids = new java.util.HashSet<>();
    long total = 0;
    for (int i = 0; i < callers.size(); i++) {
      Caller c = callers.get(i).await();
      assertThat(c.error).isNull();
      long got = c.ranges.stream().mapToLong(IdRange::count).sum();
      assertThat(got).isEqualTo(1 + i % 3);
      for (IdRange r : c.ranges) {
        for (long k = 0; k < r.count(); k++) {
          assertThat(ids.add(r.first() + k)).isTrue();
        }
      }
      total += got;
    }
    assertThat(ids).hasSize((int) total);
    assertThat(peer.streams.get()).isEqualTo(1);
    synchronized (peer.requests) {
      assertThat(peer.requests.stream().mapToLong(Long::longValue).sum()).isEqualTo(total);
      assertThat(peer.requests.size()).isLessThanOrEqualTo(callers.size()); // coalesced, or not
    }
    assertThat(forwardedBy).containsExactly("forwarder");
  }

  @Test
  void should_answer_each_caller_on_the_network_thread_it_called_on() throws Exception {
    String target = serve(new Peer());
    DefaultEventLoopGroup loops = new DefaultEventLoopGroup(2);
    try {
      List<EventLoop> both = List.of(loops.next(), loops.next());
      List<Thread> loopThreads = new ArrayList<>();
      for (EventLoop l : both) {
        loopThreads.add(l.submit(Thread::currentThread).get(10, TimeUnit.SECONDS));
      }
      assertThat(loopThreads.get(0)).isNotSameAs(loopThreads.get(1));
      int callers = 40;
      CountDownLatch done = new CountDownLatch(callers);
      List<String> wrong = Collections.synchronizedList(new ArrayList<>());
      for (int i = 0; i < callers; i++) {
        int k = i;
        both.get(k % 2).execute(() -> forwarder.forward(target, "orders", 1, null, null, (r, e) -> {
          if (e != null || r.isEmpty()) {
            wrong.add("caller " + k + " got " + r + ", " + e);
          } else if (Thread.currentThread() != loopThreads.get(k % 2)) {
            wrong.add("caller " + k + " answered on " + Thread.currentThread().getName());
          }
          done.countDown();
        }, null));
      }
      assertThat(done.await(20, TimeUnit.SECONDS)).as("answered").isTrue();
      // Batches mix the callers of both threads; each caller still gets its answer on its own.
      assertThat(wrong).isEmpty();
    } finally {
      loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void should_send_callers_to_look_again_when_an_answer_says_not_owner_and_keep_the_stream() throws Exception {
    Peer peer = new Peer() {
      @Override
      StatusRuntimeException script(int n) {
        return n == 0 ? ErrorStatus.of(ErrorReason.NOT_OWNER, "not mine").exception() : null;
      }
    };
    String target = serve(peer);
    Caller first = new Caller();
    first.forward(forwarder, target, 1);
    assertThat(first.await().rerouted.get()).isEqualTo(1);
    assertThat(first.ranges).isNull();

    Caller second = new Caller();
    second.forward(forwarder, target, 2);
    assertThat(second.await().error).isNull();
    assertThat(second.ranges).extracting(IdRange::count).containsExactly(2L);
    assertThat(peer.streams.get()).isEqualTo(1);
  }

  @Test
  void should_pass_an_owners_error_answer_on_to_the_callers() throws Exception {
    Peer peer = new Peer() {
      @Override
      StatusRuntimeException script(int n) {
        return ErrorStatus.of(ErrorReason.SEQUENCE_EXHAUSTED, "no more").exception();
      }
    };
    String target = serve(peer);
    Caller c = new Caller();
    c.forward(forwarder, target, 1);
    assertThat(c.await().rerouted.get()).isZero();
    assertThat(c.error.getStatus().getCode()).isEqualTo(ErrorStatus.codeOf(ErrorReason.SEQUENCE_EXHAUSTED));
    assertThat(c.ranges).isEmpty();
  }

  @Test
  void should_send_unanswered_callers_to_look_again_when_the_owner_ends_the_stream_while_stopping()
      throws Exception {
    CountDownLatch asked = new CountDownLatch(1);
    IdGenPeerGrpc.IdGenPeerImplBase stopping = new IdGenPeerGrpc.IdGenPeerImplBase() {
      @Override
      public StreamObserver<AllocateRequest> forwardAllocate(StreamObserver<ForwardedAnswer> responses) {
        return new StreamObserver<>() {
          @Override
          public void onNext(AllocateRequest r) {
            asked.countDown();
            responses.onError(ErrorStatus.of(ErrorReason.SERVER_SHUTTING_DOWN, "stopping").exception());
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        };
      }
    };
    String target = serve(stopping);
    Caller c = new Caller();
    c.forward(forwarder, target, 1);
    assertThat(c.await().rerouted.get()).isEqualTo(1);
    assertThat(asked.getCount()).isZero();
  }

  @Test
  void should_fail_the_callers_with_the_owners_refusal_of_the_stream() throws Exception {
    IdGenPeerGrpc.IdGenPeerImplBase denying = new IdGenPeerGrpc.IdGenPeerImplBase() {
      @Override
      public StreamObserver<AllocateRequest> forwardAllocate(StreamObserver<ForwardedAnswer> responses) {
        responses.onError(ErrorStatus.of(ErrorReason.PERMISSION_DENIED, "identity 'x' may not allocate from"
            + " sequence 'orders'").exception());
        return new StreamObserver<>() {
          @Override
          public void onNext(AllocateRequest r) {}

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        };
      }
    };
    String target = serve(denying);
    Caller c = new Caller();
    c.forward(forwarder, target, 1);
    assertThat(c.await().rerouted.get()).isZero();
    assertThat(c.error.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
  }

  @Test
  void should_forward_one_unary_call_per_batch_to_an_owner_without_the_peer_service() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    IdGenGrpc.IdGenImplBase older = new IdGenGrpc.IdGenImplBase() {
      final AtomicLong next = new AtomicLong(1);

      @Override
      public void allocate(AllocateRequest r, StreamObserver<dev.idgen.api.v1.IdRange> responses) {
        calls.incrementAndGet();
        responses.onNext(dev.idgen.api.v1.IdRange.newBuilder().setFirst(next.getAndAdd(r.getCount()))
            .setCount(r.getCount()).setStride(1).build());
        responses.onCompleted();
      }
    };
    String target = serve(older);
    for (int i = 1; i <= 3; i++) {
      Caller c = new Caller();
      c.forward(forwarder, target, i);
      assertThat(c.await().error).isNull();
      assertThat(c.ranges).extracting(IdRange::count).containsExactly((long) i);
    }
    assertThat(calls.get()).isEqualTo(3);
    assertThat(forwardedBy).containsExactly("forwarder");
  }
}
