package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.api.v1.ForwardedAnswer;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdGenPeerGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import dev.idgen.api.v1.Sequence;
import dev.idgen.core.store.embedded.EmbeddedRangeStore;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Forwarding of strict sequences between two daemons that share one embedded store (two servers of one
 * datacenter, as they share a Cassandra keyspace): the first server called owns the sequence, the other
 * forwards, many concurrent 1-ID calls are coalesced without losing order or uniqueness, and a graceful
 * stop of the owner hands the sequence over at once.
 */
class StrictForwardingTest {
  @TempDir
  Path dir;

  private final List<NettyServer> servers = new ArrayList<>();
  private EmbeddedRangeStore store;

  @AfterEach
  void closeAll() {
    servers.forEach(NettyServer::close);
    if (store != null) {
      store.close();
    }
  }

  private NettyServer server() {
    if (store == null) {
      store = EmbeddedRangeStore.open(dir);
    }
    NettyServer s = NettyServer.startOn(store);
    servers.add(s);
    return s;
  }

  private static long first(List<IdRange> ranges) {
    return ranges.get(0).getFirst();
  }

  private static long last(List<IdRange> ranges) {
    IdRange r = ranges.get(ranges.size() - 1);
    return r.getFirst() + r.getCount() - 1;
  }

  @Test
  void should_forward_to_the_owner_and_keep_every_call_above_the_calls_completed_before_it() throws Exception {
    NettyServer a = server();
    NettyServer b = server();
    Sequence created = a.admin().createSequence(CreateSequenceRequest.newBuilder().setName("orders")
        .setOrdering(Ordering.ORDERING_STRICT).build());
    assertThat(created.getHomeDatacenter()).isEqualTo("local");
    List<IdRange> fromA = a.allocate("orders", 3);
    assertThat(fromA).allSatisfy(r -> assertThat(r.getOrdering()).isEqualTo(Ordering.ORDERING_STRICT));
    long last = last(fromA);
    for (int i = 0; i < 200; i++) {
      List<IdRange> got = (i % 2 == 0 ? b : a).allocate("orders", 1 + i % 3);
      assertThat(first(got)).isGreaterThan(last);
      assertThat(got).allSatisfy(r -> assertThat(r.getOrdering()).isEqualTo(Ordering.ORDERING_STRICT));
      last = last(got);
    }
    Sequence seen = b.admin().getSequence(GetSequenceRequest.newBuilder().setName("orders")
        .build());
    assertThat(seen.getOwner()).isEqualTo("127.0.0.1:" + a.daemon.port());
    assertThat(seen.getOwnerEpoch()).isEqualTo(1);

    // Many callers at once through the forwarding server: each sequential caller's IDs increase, and no
    // ID is handed out twice, whether calls were coalesced or not.
    ExecutorService callers = Executors.newFixedThreadPool(16);
    Set<Long> all = Collections.synchronizedSet(new HashSet<>());
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < 16; t++) {
      done.add(callers.submit(() -> {
        long mine = 0;
        for (int i = 0; i < 300; i++) {
          List<IdRange> got = b.allocate("orders", 1);
          assertThat(first(got)).isGreaterThan(mine);
          mine = last(got);
          assertThat(all.add(mine)).isTrue();
        }
        return null;
      }));
    }
    for (Future<?> f : done) {
      f.get(2, TimeUnit.MINUTES);
    }
    callers.shutdown();
    assertThat(all).hasSize(16 * 300);
    assertThat(a.allocate("orders", 1).get(0).getFirst()).isGreaterThan(Collections.max(all));
  }

  @Test
  void should_answer_not_owner_to_a_forwarded_call_it_cannot_serve_and_hand_over_at_a_graceful_stop() {
    NettyServer a = server();
    NettyServer b = server();
    a.admin().createSequence(CreateSequenceRequest.newBuilder().setName("orders")
        .setOrdering(Ordering.ORDERING_STRICT).build());
    long last = last(a.allocate("orders", 5));
    assertThat(last(b.allocate("orders", 1))).isGreaterThan(last); // b knows a owns it now

    Metadata forwarded = new Metadata();
    forwarded.put(Metadata.Key.of("idgen-forwarded-by", Metadata.ASCII_STRING_MARSHALLER), "test");
    assertThatThrownBy(() -> IdGenGrpc.newBlockingStub(b.channel)
        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(forwarded))
        .withDeadlineAfter(10, TimeUnit.SECONDS)
        .allocate(AllocateRequest.newBuilder().setSequence("orders").setCount(1).build()).next())
        .isInstanceOf(StatusRuntimeException.class)
        .satisfies(e -> assertThat(ErrorDetails.of(e).reason()).isEqualTo(ErrorReason.NOT_OWNER.name()));

    last = last(b.allocate("orders", 1));
    a.close();
    servers.remove(a);
    // a released the sequence when it stopped: b takes it at once, above everything a held.
    List<IdRange> fromB = b.allocate("orders", 1);
    assertThat(first(fromB)).isGreaterThan(last);
    assertThat(b.admin().getSequence(GetSequenceRequest.newBuilder().setName("orders").build()).getOwner())
        .isEqualTo("127.0.0.1:" + b.daemon.port());
  }

  /** A ForwardAllocate stream opened the way a forwarding server opens it, with what it received. */
  private static final class PeerStream implements io.grpc.stub.StreamObserver<ForwardedAnswer> {
    final java.util.concurrent.BlockingQueue<Object> received = new java.util.concurrent.LinkedBlockingQueue<>();
    final io.grpc.stub.StreamObserver<AllocateRequest> requests;

    PeerStream(NettyServer to) {
      Metadata forwarded = new Metadata();
      forwarded.put(Metadata.Key.of("idgen-forwarded-by", Metadata.ASCII_STRING_MARSHALLER), "test");
      requests = IdGenPeerGrpc.newStub(to.channel)
          .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(forwarded)).forwardAllocate(this);
    }

    ForwardedAnswer ask(long count) throws InterruptedException {
      requests.onNext(AllocateRequest.newBuilder().setSequence("orders").setCount(count).build());
      Object o = received.poll(30, TimeUnit.SECONDS);
      assertThat(o).isInstanceOf(ForwardedAnswer.class);
      return (ForwardedAnswer) o;
    }

    @Override
    public void onNext(ForwardedAnswer a) {
      received.add(a);
    }

    @Override
    public void onError(Throwable t) {
      received.add(t);
    }

    @Override
    public void onCompleted() {
      received.add("completed");
    }
  }

  private static String reason(com.google.rpc.Status status) {
    return ErrorDetails.of(io.grpc.protobuf.StatusProto.toStatusRuntimeException(status)).reason();
  }

  @Test
  void should_answer_each_request_of_a_forwarding_stream_in_order_with_its_own_status() throws Exception {
    NettyServer a = server();
    NettyServer b = server();
    a.admin().createSequence(CreateSequenceRequest.newBuilder().setName("orders")
        .setOrdering(Ordering.ORDERING_STRICT).build());
    long last = last(a.allocate("orders", 5)); // a owns it

    PeerStream toOwner = new PeerStream(a);
    ForwardedAnswer two = toOwner.ask(2);
    assertThat(two.hasStatus()).isFalse();
    assertThat(two.getRangesList()).extracting(IdRange::getCount).containsExactly(2L);
    assertThat(first(two.getRangesList())).isGreaterThan(last);
    // A bad request fails its own answer, not the stream.
    ForwardedAnswer none = toOwner.ask(0);
    assertThat(none.getRangesList()).isEmpty();
    assertThat(reason(none.getStatus())).isEqualTo(ErrorReason.INVALID_COUNT.name());
    ForwardedAnswer one = toOwner.ask(1);
    assertThat(one.hasStatus()).isFalse();
    assertThat(first(one.getRangesList())).isGreaterThan(last(two.getRangesList()));
    assertThat(first(a.allocate("orders", 1))).isGreaterThan(last(one.getRangesList()));

    // A server that does not own the sequence says so in the answer.
    PeerStream toOther = new PeerStream(b);
    ForwardedAnswer notMine = toOther.ask(1);
    assertThat(notMine.getRangesList()).isEmpty();
    assertThat(reason(notMine.getStatus())).isEqualTo(ErrorReason.NOT_OWNER.name());
    toOther.requests.onCompleted();
    assertThat(toOther.received.poll(30, TimeUnit.SECONDS)).isEqualTo("completed");

    // A graceful stop ends the owner's stream at once, so that it does not hold the stop up.
    Thread stop = new Thread(a.daemon::close); // the daemon only: the stream's channel stays open
    stop.start();
    Object end = toOwner.received.poll(30, TimeUnit.SECONDS);
    assertThat(end).isInstanceOf(StatusRuntimeException.class);
    assertThat(ErrorDetails.of((StatusRuntimeException) end).reason())
        .isEqualTo(ErrorReason.SERVER_SHUTTING_DOWN.name());
    stop.join(60_000);
    a.close();
    servers.remove(a);
  }
}
