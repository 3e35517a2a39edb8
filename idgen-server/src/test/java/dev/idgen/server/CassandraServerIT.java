package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.DatacenterReserve;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdSource;
import dev.idgen.testing.CassandraExtension;
import dev.idgen.testing.TestCassandra;
import io.grpc.ManagedChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server jar with {@code idgen.store = cassandra}, one process in each datacenter of the local
 * two-datacenter cluster that the build starts (idgen-testing's {@code CassandraExtension}), driven through
 * gRPC exactly as grpcurl or the client would.
 */
@ExtendWith(CassandraExtension.class)
class CassandraServerIT {
  @TempDir
  Path dir;

  private final List<ServerProcess> servers = new ArrayList<>();
  private final String keyspace = "srv_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);

  @AfterEach
  void stop() throws InterruptedException {
    for (ServerProcess s : servers) {
      s.close();
    }
  }

  private ServerProcess server(String dc, String contactPoint, boolean createSchema, String... extra)
      throws Exception {
    List<String> settings = new ArrayList<>(List.of(
        "idgen.store=cassandra",
        "idgen.cassandra.contact-points=" + contactPoint,
        "idgen.cassandra.local-datacenter=" + dc,
        "idgen.cassandra.keyspace=" + keyspace,
        "idgen.cassandra.create-schema=" + createSchema,
        "idgen.cassandra.replication.dc1=1",
        "idgen.cassandra.replication.dc2=1",
        "idgen.cassandra.floor-refresh=500ms",
        // The sequence gauges appear at the first refresh after a sequence is loaded: well before the end.
        "idgen.metrics.refresh-interval=200ms"));
    settings.addAll(List.of(extra));
    ServerProcess s = ServerProcess.start(dir, "server-" + dc, settings);
    servers.add(s);
    return s;
  }

  @Test
  @Tag("full")
  void should_honour_a_floor_set_on_another_server_at_a_read_cost_independent_of_the_sequences_loaded()
      throws Exception {
    // Two reads of a sequence's state per monitor refresh at most; the floor log is polled every 500 ms.
    ServerProcess dc1 = server("dc1", CassandraExtension.cluster().contactPoint(TestCassandra.DC1), true,
        "idgen.metrics.store-reads-per-refresh=2");
    ServerProcess dc2 = server("dc2", CassandraExtension.cluster().contactPoint(TestCassandra.DC2), false,
        "idgen.metrics.store-reads-per-refresh=2");
    int sequences = 200;
    ExecutorService workers = Executors.newFixedThreadPool(4);
    List<Future<?>> work = new ArrayList<>();
    for (int i = 0; i < sequences; i++) {
      String name = "many-" + i;
      work.add(workers.submit(() -> {
        SequenceAdminGrpc.newBlockingStub(dc1.channel()).withDeadlineAfter(60, TimeUnit.SECONDS)
            .createSequence(CreateSequenceRequest.newBuilder().setName(name).build());
        for (ServerProcess s : List.of(dc1, dc2)) { // loaded on both servers
          assertThat(allocate(s.channel(), name, 1, 1)).hasSize(1);
        }
        return null;
      }));
    }
    for (Future<?> f : work) {
      f.get(5, TimeUnit.MINUTES);
    }
    workers.shutdown();

    double readsBefore = dc2.scrapeSum("idgen_store_reads_total");
    long start = System.nanoTime();
    // Set on dc1; once it returns, dc2 has confirmed it: dc2 hands out nothing at or below it, cached or not.
    long floor = 1_000_000_000L;
    SequenceAdminGrpc.newBlockingStub(dc1.channel()).withDeadlineAfter(60, TimeUnit.SECONDS)
        .advanceSequence(AdvanceSequenceRequest.newBuilder().setName("many-17").setFloor(floor).build());
    assertThat(allocate(dc2.channel(), "many-17", 10, 1)).allSatisfy(id -> assertThat(id).isGreaterThan(floor));
    Thread.sleep(5_000); // idle: what the background costs now
    double reads = dc2.scrapeSum("idgen_store_reads_total") - readsBefore;
    double elapsedMillis = (System.nanoTime() - start) / 1e6;

    // Upper bound from the intervals (a slow machine runs fewer cycles, never more): per floor-sync cycle a
    // read of the floor log, per monitor refresh 2 sequences of a few rows each, plus the advance itself.
    // Reading every loaded sequence per refresh would cost over 400 per refresh.
    double floorCycles = elapsedMillis / 500 + 2;
    double refreshes = elapsedMillis / 200 + 2;
    assertThat(reads).as("dc2's store reads in %.0f ms with %d sequences loaded", elapsedMillis, sequences)
        .isLessThanOrEqualTo(4 * floorCycles + 8 * refreshes + 50);
    assertThat(dc2.scrape()).contains("idgen_store_reads_total{consistency=\"plain\"}");
  }

  @Test
  @Tag("full")
  void should_serve_unique_ids_from_servers_in_both_datacenters_and_honour_an_advance() throws Exception {
    ServerProcess dc1 = server("dc1", CassandraExtension.cluster().contactPoint(TestCassandra.DC1), true);
    ServerProcess dc2 = server("dc2", CassandraExtension.cluster().contactPoint(TestCassandra.DC2), false);
    SequenceAdminGrpc.newBlockingStub(dc1.channel()).withDeadlineAfter(30, TimeUnit.SECONDS)
        .createSequence(CreateSequenceRequest.newBuilder().setName("orders").setStart(1000)
            .setStripes(2).setNodeBlockSize(300).setDcBlockSize(3_000).build());

    Set<Long> seen = ConcurrentHashMap.newKeySet();
    AtomicLong duplicates = new AtomicLong();
    ExecutorService callers = Executors.newFixedThreadPool(6);
    List<Future<?>> running = new ArrayList<>();
    for (int t = 0; t < 6; t++) {
      ManagedChannel channel = (t % 2 == 0 ? dc1 : dc2).channel();
      int seed = t;
      running.add(callers.submit(() -> {
        Random random = new Random(seed);
        for (int i = 0; i < 300; i++) {
          long count = 1 + random.nextInt(50);
          List<Long> ids = allocate(channel, count);
          assertThat(ids).hasSize((int) count);
          for (long id : ids) {
            assertThat(id).isGreaterThanOrEqualTo(1000);
            if (!seen.add(id)) {
              duplicates.incrementAndGet();
            }
          }
        }
        return null;
      }));
    }
    for (Future<?> f : running) {
      f.get(5, TimeUnit.MINUTES);
    }
    callers.shutdown();
    assertThat(duplicates.get()).isZero();

    Sequence seen2 = SequenceAdminGrpc.newBlockingStub(dc2.channel()).withDeadlineAfter(30, TimeUnit.SECONDS)
        .getSequence(GetSequenceRequest.newBuilder().setName("orders").build());
    assertThat(seen2.getStripes()).isEqualTo(2);
    assertThat(seen2.getDatacenterReservesList()).extracting(DatacenterReserve::getDatacenter)
        .contains("dc1", "dc2");

    // An advance made through dc2's server binds dc1's server too, cached IDs included.
    long floor = 10_000_000;
    SequenceAdminGrpc.newBlockingStub(dc2.channel()).withDeadlineAfter(60, TimeUnit.SECONDS)
        .advanceSequence(AdvanceSequenceRequest.newBuilder().setName("orders").setFloor(floor).build());
    for (ServerProcess s : List.of(dc1, dc2)) {
      for (int i = 0; i < 20; i++) {
        assertThat(allocate(s.channel(), 7)).allSatisfy(id -> assertThat(id).isGreaterThan(floor));
      }
    }

    // And the client stub, over TCP to both servers, as a service would use it.
    try (IdGenClient client = IdGenClient.builder().usePlaintext()
        .target("127.0.0.1:" + dc1.port()).target("127.0.0.1:" + dc2.port()).build()) {
      IdSource orders = client.sequence("orders");
      for (int i = 0; i < 5_000; i++) {
        long id = orders.next();
        assertThat(id).isGreaterThan(floor);
        assertThat(seen.add(id)).as("ID %d handed out twice", id).isTrue();
      }
    }

    // Both servers export the store's compare-and-set outcomes and the driver's own metrics.
    for (ServerProcess s : List.of(dc1, dc2)) {
      String scrape = s.scrape();
      assertThat(TestServer.sample(scrape, "idgen_store_cas_total{outcome=\"applied\",tier=\"dc\"}"))
          .isPositive();
      assertThat(scrape).contains("idgen_store_cas_total{outcome=\"unknown\",tier=\"global\"}")
          .contains("idgen_ids_allocated_total{sequence=\"orders\"}")
          .contains("idgen_runway_seconds{sequence=\"orders\",tier=\"dc\"}")
          .contains("cassandra_session_cql_requests");
    }
  }

  private static List<Long> allocate(ManagedChannel channel, long count) {
    return allocate(channel, "orders", count, 2);
  }

  private static List<Long> allocate(ManagedChannel channel, String sequence, long count, int stripes) {
    List<Long> ids = new ArrayList<>();
    Iterator<IdRange> ranges = IdGenGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
        .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build());
    ranges.forEachRemaining(r -> {
      assertThat(r.getStride()).isEqualTo(stripes);
      for (long k = 0; k < r.getCount(); k++) {
        ids.add(r.getFirst() + k * r.getStride());
      }
    });
    return ids;
  }
}
