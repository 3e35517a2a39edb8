package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.core.Reservation;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoredSequence;
import dev.idgen.core.store.cassandra.CassandraRangeStore;
import dev.idgen.core.store.cassandra.CassandraSettings;
import dev.idgen.core.store.embedded.EmbeddedRangeStore;
import dev.idgen.testing.CassandraExtension;
import dev.idgen.testing.TestCassandra;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code move-store} from an embedded store into the tests' real Cassandra: IDs handed out on the embedded server,
 * then, after the move, on a server of the keyspace, never meet; definitions, floors, reservations and deleted
 * states come along; a conflicting target is refused before anything is written. The refusals (about 12 s)
 * run in the default set, the whole move only with {@code -Didgen.tests=full}.
 */
@ExtendWith(CassandraExtension.class)
class MoveStoreCassandraIT {
  private static final long STRIPED_START = 1_000_000_000L;
  /** Between orders' IDs and striped's: every sequence's IDs in one set, none shared. */
  private static final long RANKED_START = 500_000_000L;

  @TempDir
  Path dir;

  private final StoreCommandLine cli = new StoreCommandLine();
  private final StringWriter out = cli.out;
  private final StringWriter err = cli.err;

  /** Tagged "full": about 30 s (a keyspace created twice, two servers) on a shared 2-core machine. */
  @Test
  @Tag("full")
  void should_move_every_sequence_so_that_the_ids_before_and_after_are_disjoint() throws Exception {
    Path data = dir.resolve("data");
    Set<Long> before = new HashSet<>();
    try (EmbeddedDaemon daemon = EmbeddedDaemon.onLoopback(data, 0)) {
      ManagedChannel channel = channel(daemon.port());
      try {
        admin(channel).createSequence(CreateSequenceRequest.newBuilder().setName("orders").setNodeBlockSize(30)
            .setMax(2_147_483_647L).build());
        admin(channel).createSequence(CreateSequenceRequest.newBuilder().setName("striped").setStripes(4)
            .setStart(STRIPED_START).setNodeBlockSize(30).build());
        admin(channel).createSequence(CreateSequenceRequest.newBuilder().setName("gone").build());
        for (int i = 0; i < 50; i++) {
          before.addAll(allocate(channel, "orders", 3));
          before.addAll(allocate(channel, "striped", 3));
        }
        before.addAll(allocate(channel, "gone", 5));
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
    Reservation reserved;
    try (EmbeddedRangeStore embedded = EmbeddedRangeStore.open(data)) {
      SequenceDefinition orders = embedded.find("orders").orElseThrow();
      reserved = embedded.reserveRange(orders, 100, "import-2026-12", "batch job");
      embedded.advance(orders, reserved.last() + 1_000); // a floor above every reservation
      StoredSequence gone = embedded.findStored("gone").orElseThrow();
      embedded.redefine(gone, gone.deletedAt(Instant.now(), Instant.now().plus(Duration.ofDays(30))));
      // A strict sequence of the embedded store's one datacenter, and a purged one.
      SequenceDefinition ranked = new SequenceDefinition("ranked", RANKED_START, Long.MAX_VALUE, 1, 30, 1_000)
          .withStrictOrdering("local");
      embedded.create(ranked);
      before.addAll(TestServer.ids(List.of(proto(embedded.reserveStrict(ranked, 1, 10)))));
      embedded.create(new SequenceDefinition("tomb", 1, Long.MAX_VALUE, 1, 30, 1_000));
      embedded.reserve(embedded.find("tomb").orElseThrow(), 0, 10);
      StoredSequence tomb = embedded.findStored("tomb").orElseThrow();
      StoredSequence deleted = tomb.deletedAt(Instant.now(), Instant.now().plus(Duration.ofDays(30)));
      embedded.redefine(tomb, deleted);
      embedded.redefine(deleted, deleted.purgedNow());
    }
    long ordersFloor = reserved.last() + 1_000;

    String keyspace = "move_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);
    Path from = write("embedded.conf", "idgen.embedded.dir = \"" + data + "\"\n");
    Path to = cassandraConfig(keyspace);

    assertThat(run("move-store", "--from-config", from.toString(), "--to-config", to.toString(), "--dry-run"))
        .as(err.toString()).isZero();
    assertThat(out.toString()).contains("orders: would be created, floor " + ordersFloor + ", 1 reservation")
        .contains("ranked: would be created, floor " + (RANKED_START + 9) + ", 0 reservations, strict in dc1")
        .contains("dry run: 5 sequences would be moved; nothing was written");

    assertThat(run("move-store", "--from-config", from.toString(), "--to-config", to.toString()))
        .as(err.toString()).isZero();
    assertThat(out.toString()).contains("orders: created, floor " + ordersFloor)
        .contains("gone: created").contains("deleted").contains("tomb: created, floor 10, 0 reservations, purged")
        .contains("moved 5 sequences into keyspace " + keyspace);
    // Run again (say, after it stopped half-way): harmless.
    assertThat(run("move-store", "--from-config", from.toString(), "--to-config", to.toString()))
        .as(err.toString()).isZero();
    assertThat(out.toString()).contains("orders: already in the target, advanced again");

    Set<Long> after = new HashSet<>();
    try (CassandraRangeStore cassandra = CassandraRangeStore.connect(settings(keyspace))) {
      SequenceDefinition orders = cassandra.find("orders").orElseThrow();
      assertThat(orders.max()).isEqualTo(2_147_483_647L);
      assertThat(orders.nodeBlockSize()).isEqualTo(30);
      assertThat(cassandra.find("striped").orElseThrow().stripes()).isEqualTo(4);
      assertThat(cassandra.findStored("gone").orElseThrow().deleted()).isTrue();
      assertThat(cassandra.findStored("tomb").orElseThrow().purged()).isTrue();
      SequenceDefinition ranked = cassandra.find("ranked").orElseThrow();
      assertThat(ranked.strict()).isTrue();
      assertThat(ranked.homeDatacenter()).isEqualTo(TestCassandra.DC1);
      assertThat(cassandra.floor(orders)).isGreaterThanOrEqualTo(ordersFloor);
      assertThat(cassandra.reservations(orders, Long.MIN_VALUE, 10)).singleElement()
          .satisfies(r -> assertThat(List.of(r.first(), r.last(), r.requestId()))
              .containsExactly(reserved.first(), reserved.last(), "import-2026-12"));

      try (EmbeddedDaemon daemon = EmbeddedDaemon.onLoopback(cassandra, Map.of())) {
        ManagedChannel channel = channel(daemon.port());
        try {
          for (int i = 0; i < 50; i++) {
            after.addAll(allocate(channel, "orders", 3));
            after.addAll(allocate(channel, "striped", 3));
          }
          after.addAll(allocate(channel, "ranked", 5));
        } finally {
          channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
      }
    }
    assertThat(after).hasSize(305).doesNotContainAnyElementsOf(before);
    assertThat(after).filteredOn(id -> id < STRIPED_START).allMatch(id -> id > ordersFloor);
    long highestStriped = before.stream().mapToLong(Long::longValue).max().orElseThrow();
    assertThat(after).filteredOn(id -> id >= STRIPED_START).allMatch(id -> id > highestStriped);
  }

  @Test
  void should_refuse_a_conflicting_target_and_a_missing_store_writing_nothing() throws Exception {
    Path data = dir.resolve("data");
    try (EmbeddedRangeStore embedded = EmbeddedRangeStore.open(data)) {
      embedded.create(new SequenceDefinition("orders", 1, Long.MAX_VALUE, 1, 1_000, 10_000));
      embedded.create(new SequenceDefinition("users", 1, Long.MAX_VALUE, 1, 1_000, 10_000));
      embedded.reserve(embedded.find("orders").orElseThrow(), 0, 10);
    }
    String keyspace = "move_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);
    try (CassandraRangeStore cassandra = CassandraRangeStore.connect(settings(keyspace))) {
      cassandra.create(new SequenceDefinition("orders", 500, Long.MAX_VALUE, 1, 1_000, 10_000));
    }
    Path from = write("embedded.conf", "idgen.embedded.dir = \"" + data + "\"\n");
    Path to = cassandraConfig(keyspace);

    assertThat(run("move-store", "--from-config", from.toString(), "--to-config", to.toString()))
        .isEqualTo(StoreCommands.EXIT_REFUSED);
    assertThat(err.toString()).contains("nothing was written")
        .contains("sequence 'orders': the target holds start 500").contains("the embedded store start 1");
    try (CassandraRangeStore cassandra = CassandraRangeStore.connect(settings(keyspace))) {
      assertThat(cassandra.find("users")).as("not moved after the refusal").isEmpty();
    }

    Path nowhere = write("nowhere.conf", "idgen.embedded.dir = \"" + dir.resolve("no-such-dir") + "\"\n");
    assertThat(run("move-store", "--from-config", nowhere.toString(), "--to-config", to.toString()))
        .isEqualTo(StoreCommands.EXIT_USAGE);
    assertThat(err.toString()).contains("there is no embedded store at");
    assertThat(run("move-store", "--from-config", dir.resolve("missing.conf").toString(), "--to-config",
        to.toString())).isEqualTo(StoreCommands.EXIT_USAGE);
    assertThat(err.toString()).contains("the configuration file").contains("does not exist");
    assertThat(run("move-store", "--from-config", from.toString(), "--to-config", from.toString()))
        .isEqualTo(StoreCommands.EXIT_USAGE);
    assertThat(err.toString()).contains("the target must be cassandra");
  }

  private Path cassandraConfig(String keyspace) throws Exception {
    return write(keyspace + ".conf", String.join("\n",
        "idgen.store = cassandra",
        "idgen.cassandra.contact-points = [\"" + CassandraExtension.cluster().contactPoint(TestCassandra.DC1) + "\"]",
        "idgen.cassandra.local-datacenter = dc1",
        "idgen.cassandra.keyspace = " + keyspace,
        "idgen.cassandra.create-schema = true",
        "idgen.cassandra.replication.dc1 = 1",
        ""));
  }

  private static CassandraSettings settings(String keyspace) {
    return CassandraSettings.local(List.of(CassandraExtension.cluster().contactPoint(TestCassandra.DC1)),
        TestCassandra.DC1, keyspace, Map.of(TestCassandra.DC1, 1));
  }

  private Path write(String name, String content) throws Exception {
    Path file = dir.resolve(name);
    Files.writeString(file, content);
    return file;
  }

  private int run(String... args) {
    return cli.run(args);
  }

  private static IdRange proto(dev.idgen.core.IdRange r) {
    return IdRange.newBuilder().setFirst(r.first()).setCount(r.count()).setStride(r.stride()).build();
  }

  private static ManagedChannel channel(int port) {
    return ManagedChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
  }

  private static SequenceAdminGrpc.SequenceAdminBlockingStub admin(ManagedChannel channel) {
    return SequenceAdminGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
  }

  private static List<Long> allocate(ManagedChannel channel, String sequence, int count) {
    List<IdRange> ranges = new ArrayList<>();
    IdGenGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
        .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build())
        .forEachRemaining(ranges::add);
    return TestServer.ids(ranges);
  }
}
