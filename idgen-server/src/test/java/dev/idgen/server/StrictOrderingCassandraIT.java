package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.ErrorReason;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Ordering;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.testing.CassandraExtension;
import dev.idgen.testing.TestCassandra;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Strict sequences on a real two-datacenter Cassandra, served by real server processes: two in dc1 (the
 * home datacenter) and one in dc2. Every call completes before the next starts, so every call's IDs must be
 * above all IDs handed out before it, whichever server it reached, through forwarding and an owner's kill.
 */
@ExtendWith(CassandraExtension.class)
class StrictOrderingCassandraIT {
  @TempDir
  Path dir;

  private final List<ServerProcess> servers = new ArrayList<>();
  private final String keyspace = "strict_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);

  @AfterEach
  void stop() throws InterruptedException {
    for (ServerProcess s : servers) {
      s.close();
    }
  }

  private ServerProcess server(String name, String dc, boolean createSchema) throws Exception {
    ServerProcess s = ServerProcess.start(dir, name, List.of(
        "idgen.store=cassandra",
        "idgen.cassandra.contact-points=" + CassandraExtension.cluster().contactPoint(
            dc.equals("dc1") ? TestCassandra.DC1 : TestCassandra.DC2),
        "idgen.cassandra.local-datacenter=" + dc,
        "idgen.cassandra.keyspace=" + keyspace,
        "idgen.cassandra.create-schema=" + createSchema,
        "idgen.cassandra.replication.dc1=1",
        "idgen.cassandra.replication.dc2=1",
        "idgen.strict.owner-lease=2s",
        "idgen.server-name=" + name));
    servers.add(s);
    return s;
  }

  @Test
  @Tag("full")
  void should_hand_out_increasing_ids_across_servers_and_datacenters_through_an_owner_kill() throws Exception {
    ServerProcess a = server("a", "dc1", true);
    ServerProcess b = server("b", "dc1", false);
    ServerProcess c = server("c", "dc2", false);
    Sequence created = SequenceAdminGrpc.newBlockingStub(a.channel()).withDeadlineAfter(60, TimeUnit.SECONDS)
        .createSequence(CreateSequenceRequest.newBuilder().setName("tickets").setOrdering(Ordering.ORDERING_STRICT)
            .build());
    assertThat(created.getOrdering()).isEqualTo(Ordering.ORDERING_STRICT);
    assertThat(created.getHomeDatacenter()).isEqualTo("dc1");

    long last = 0;
    List<ServerProcess> all = List.of(a, b, c);
    for (int i = 0; i < 300; i++) {
      List<IdRange> got = allocate(all.get(i % 3).channel(), "tickets", 1 + i % 4);
      assertThat(got).allSatisfy(r -> assertThat(r.getOrdering()).isEqualTo(Ordering.ORDERING_STRICT));
      assertThat(got.get(0).getFirst()).as("call %d", i).isGreaterThan(last);
      last = lastId(got);
    }
    Sequence seen = SequenceAdminGrpc.newBlockingStub(b.channel()).withDeadlineAfter(60, TimeUnit.SECONDS)
        .getSequence(GetSequenceRequest.newBuilder().setName("tickets").build());
    assertThat(seen.getOwner()).isEqualTo("127.0.0.1:" + a.port()); // the first server called owns it
    long epoch = seen.getOwnerEpoch();

    // The owner dies. b (home datacenter) takes over after the 2 s lease; meanwhile calls fail
    // OWNER_UNAVAILABLE; then IDs go on above everything a could have held.
    a.kill();
    long killed = System.nanoTime();
    int unavailable = 0;
    List<IdRange> after = null;
    while (after == null && System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(30)) {
      try {
        after = allocate(b.channel(), "tickets", 1);
      } catch (StatusRuntimeException e) {
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(ErrorDetails.of(e).reason()).isEqualTo(ErrorReason.OWNER_UNAVAILABLE.name());
        unavailable++;
        Thread.sleep(100);
      }
    }
    long outageMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
    assertThat(after).as("b took over within 30 s").isNotNull();
    assertThat(unavailable).isPositive();
    assertThat(outageMillis).as("about a lease and a quarter, plus a compare-and-set").isLessThan(10_000);
    assertThat(after.get(0).getFirst()).isGreaterThan(last);
    last = lastId(after);
    for (int i = 0; i < 100; i++) {
      ServerProcess s = i % 2 == 0 ? b : c;
      List<IdRange> got = allocate(s.channel(), "tickets", 1);
      assertThat(got.get(0).getFirst()).isGreaterThan(last);
      last = lastId(got);
    }
    Sequence now = SequenceAdminGrpc.newBlockingStub(c.channel()).withDeadlineAfter(60, TimeUnit.SECONDS)
        .getSequence(GetSequenceRequest.newBuilder().setName("tickets").build());
    assertThat(now.getOwner()).isEqualTo("127.0.0.1:" + b.port());
    assertThat(now.getOwnerEpoch()).isGreaterThan(epoch);
  }

  @Test
  void should_refuse_strict_ordering_with_stripes_or_an_unknown_home_datacenter() throws Exception {
    ServerProcess a = server("a", "dc1", true);
    var admin = SequenceAdminGrpc.newBlockingStub(a.channel()).withDeadlineAfter(60, TimeUnit.SECONDS);
    assertThatThrownBy(() -> admin.createSequence(CreateSequenceRequest.newBuilder().setName("striped")
        .setOrdering(Ordering.ORDERING_STRICT).setStripes(4).build()))
        .satisfies(e -> assertThat(ErrorDetails.of((StatusRuntimeException) e).reason())
            .isEqualTo(ErrorReason.INVALID_ORDERING.name()));
    assertThatThrownBy(() -> admin.createSequence(CreateSequenceRequest.newBuilder().setName("nowhere")
        .setOrdering(Ordering.ORDERING_STRICT).setHomeDatacenter("dc9").build()))
        .satisfies(e -> assertThat(ErrorDetails.of((StatusRuntimeException) e).reason())
            .isEqualTo(ErrorReason.INVALID_HOME_DATACENTER.name()));
    Sequence inDc2 = admin.createSequence(CreateSequenceRequest.newBuilder().setName("remote")
        .setOrdering(Ordering.ORDERING_STRICT).setHomeDatacenter("dc2").build());
    assertThat(inDc2.getHomeDatacenter()).isEqualTo("dc2");
    // No server of dc2 runs: a dc1 server may not own it, and says so.
    assertThatThrownBy(() -> allocate(a.channel(), "remote", 1))
        .satisfies(e -> assertThat(ErrorDetails.of((StatusRuntimeException) e).reason())
            .isEqualTo(ErrorReason.OWNER_UNAVAILABLE.name()));
    assertThat(SequenceAdminGrpc.newBlockingStub(a.channel()).withDeadlineAfter(60, TimeUnit.SECONDS)
        .getSequence(GetSequenceRequest.newBuilder().setName("remote").build()).hasOwner()).isFalse();
  }

  private static long lastId(List<IdRange> ranges) {
    IdRange r = ranges.get(ranges.size() - 1);
    return r.getFirst() + (r.getCount() - 1) * r.getStride();
  }

  private static List<IdRange> allocate(ManagedChannel channel, String sequence, long count) {
    List<IdRange> out = new ArrayList<>();
    Iterator<IdRange> ranges = IdGenGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
        .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build());
    ranges.forEachRemaining(out::add);
    long total = out.stream().mapToLong(IdRange::getCount).sum();
    assertThat(total).isEqualTo(count);
    return out;
  }
}
