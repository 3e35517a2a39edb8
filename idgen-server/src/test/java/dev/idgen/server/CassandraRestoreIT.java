package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.store.cassandra.CassandraRangeStore;
import dev.idgen.core.store.cassandra.CassandraSettings;
import dev.idgen.testing.CassandraExtension;
import dev.idgen.testing.TestCassandra;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restore of idgen's Cassandra keyspace from a snapshot, done as docs/operations.md says ("Back up and restore
 * the Cassandra keyspace"): allocate, {@code nodetool snapshot}, allocate more and create a sequence, stop the
 * servers, {@code export}, restore the snapshot (TRUNCATE, then {@code nodetool import} of the snapshot's
 * SSTables), create again what the restore dropped, {@code restore-guard}, serve again: no ID is handed out
 * twice. Tagged full: about a minute (a keyspace, a nodetool JVM per table).
 */
@ExtendWith(CassandraExtension.class)
@Tag("full")
class CassandraRestoreIT {
  private static final String SNAPSHOT = "before-restore";

  @TempDir
  Path dir;

  private final StoreCommandLine cli = new StoreCommandLine();
  private final StringWriter out = cli.out;
  private final StringWriter err = cli.err;

  @Test
  void should_hand_out_no_id_twice_after_a_snapshot_is_restored_and_guarded() throws Exception {
    TestCassandra cluster = CassandraExtension.cluster();
    String keyspace = "restore_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);
    Path config = write("idgen.conf", String.join("\n",
        "idgen.store = cassandra",
        "idgen.cassandra.contact-points = [\"" + cluster.contactPoint(TestCassandra.DC1) + "\"]",
        "idgen.cassandra.local-datacenter = dc1",
        "idgen.cassandra.keyspace = " + keyspace,
        "idgen.cassandra.create-schema = true",
        "idgen.cassandra.replication.dc1 = 1",
        ""));
    SequenceDefinition orders = new SequenceDefinition("orders", 1, 2_147_483_647L, 1, 10, 30);
    SequenceDefinition striped = new SequenceDefinition("striped", 1_000_000_000L, Long.MAX_VALUE, 4, 10, 30);
    SequenceDefinition late = new SequenceDefinition("late", 5_000_000_000L, Long.MAX_VALUE, 1, 10, 30);

    Set<Long> handedOut = new HashSet<>();
    try (CassandraRangeStore store = CassandraRangeStore.connect(settings(keyspace))) {
      store.create(orders);
      store.create(striped);
      handedOut.addAll(serve(store, 40, "orders", "striped"));
    }

    // 1. The backup: a snapshot of the keyspace (nodetool flushes first).
    cluster.nodetool(TestCassandra.DC1, "snapshot", "-t", SNAPSHOT, keyspace);

    // Life goes on after the snapshot: more IDs, a new sequence. The restore will lose all of it.
    long cursorAfter;
    try (CassandraRangeStore store = CassandraRangeStore.connect(settings(keyspace))) {
      store.create(late);
      handedOut.addAll(serve(store, 40, "orders", "striped", "late"));
      cursorAfter = store.state(store.find("orders").orElseThrow()).stripes().get(0).reserved();
    }

    // 2. The servers are stopped (serve() closed its server); the export, while the keyspace is still readable.
    Path floors = dir.resolve("floors.txt");
    assertThat(run("export", "--config", config.toString(), "--to", floors.toString())).as(err.toString()).isZero();
    assertThat(out.toString()).contains("exported 3 sequences");
    assertThat(Files.readString(floors)).contains("\nlate ").contains("\norders ").contains("# SequenceDefinition[name=late");
    assertThat(run("export", "--config", config.toString(), "--to", floors.toString()))
        .as("never overwrites").isEqualTo(StoreCommands.EXIT_USAGE);
    assertThat(err.toString()).contains("exists");

    // 3. The restore: every table emptied, then the snapshot's SSTables imported.
    restore(cluster, keyspace);
    try (CassandraRangeStore store = CassandraRangeStore.connect(settings(keyspace))) {
      assertThat(store.find("late")).as("created after the snapshot: gone").isEmpty();
      assertThat(store.state(store.find("orders").orElseThrow()).stripes().get(0).reserved())
          .as("the cursor went back: without the guard, IDs would be handed out again").isLessThan(cursorAfter);
    }

    // 4. The guard refuses while a sequence of the export is missing; created again, it passes.
    assertThat(run("restore-guard", "--config", config.toString(), "--floors", floors.toString()))
        .isEqualTo(StoreCommands.EXIT_REFUSED);
    assertThat(err.toString()).contains("late").contains("nothing was written");
    try (CassandraRangeStore store = CassandraRangeStore.connect(settings(keyspace))) {
      store.create(late);
    }
    assertThat(run("restore-guard", "--config", config.toString(), "--floors", floors.toString()))
        .as(err.toString()).isZero();
    assertThat(out.toString()).contains("orders: advanced past").contains("late: advanced past");

    // 5. Serving again: nothing handed out before, and everything above what was.
    Set<Long> after;
    try (CassandraRangeStore store = CassandraRangeStore.connect(settings(keyspace))) {
      after = new HashSet<>(serve(store, 40, "orders", "striped", "late"));
    }
    assertThat(after).hasSize(40 * 3 * 3).doesNotContainAnyElementsOf(handedOut);
    long highestOrder = handedOut.stream().filter(id -> id < 1_000_000_000L).mapToLong(Long::longValue).max().orElseThrow();
    assertThat(after).filteredOn(id -> id < 1_000_000_000L).allMatch(id -> id > highestOrder);
  }

  /** The documented restore on the one node that holds the keyspace: TRUNCATE, then nodetool import. */
  private static void restore(TestCassandra cluster, String keyspace) throws Exception {
    Path keyspaceDir = cluster.dataDirectory(TestCassandra.DC1).resolve(keyspace);
    List<Path> tables;
    try (Stream<Path> s = Files.list(keyspaceDir)) {
      tables = s.filter(Files::isDirectory).sorted().toList();
    }
    assertThat(tables).isNotEmpty();
    int imported = 0;
    try (CqlSession cql = CqlSession.builder().addContactPoint(cluster.address(TestCassandra.DC1))
        .withLocalDatacenter(TestCassandra.DC1).build()) {
      for (Path tableDir : tables) {
        String dirName = tableDir.getFileName().toString();
        String table = dirName.substring(0, dirName.lastIndexOf('-'));
        cql.execute(SimpleStatement.newInstance("TRUNCATE " + keyspace + "." + table)
            .setTimeout(Duration.ofSeconds(60)));
        Path snapshot = tableDir.resolve("snapshots").resolve(SNAPSHOT);
        boolean hasData;
        try (Stream<Path> files = Files.exists(snapshot) ? Files.list(snapshot) : Stream.empty()) {
          hasData = files.anyMatch(f -> f.getFileName().toString().endsWith("-Data.db"));
        }
        if (hasData) {
          cluster.nodetool(TestCassandra.DC1, "import", "--copy-data", keyspace, table, snapshot.toString());
          imported++;
        }
      }
    }
    assertThat(imported).as("tables restored from the snapshot").isGreaterThanOrEqualTo(2);
  }

  /** A server on the keyspace for {@code calls} rounds of 3-ID calls to each sequence; stopped at the end. */
  private static List<Long> serve(CassandraRangeStore store, int calls, String... sequences) throws Exception {
    List<Long> ids = new ArrayList<>();
    try (EmbeddedDaemon daemon = EmbeddedDaemon.onLoopback(store, Map.of())) {
      ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", daemon.port()).usePlaintext().build();
      try {
        for (int i = 0; i < calls; i++) {
          for (String sequence : sequences) {
            List<IdRange> ranges = new ArrayList<>();
            IdGenGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(3).build())
                .forEachRemaining(ranges::add);
            ids.addAll(TestServer.ids(ranges));
          }
        }
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
    return ids;
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
}
