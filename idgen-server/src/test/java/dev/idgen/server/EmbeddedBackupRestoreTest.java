package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.core.store.embedded.EmbeddedRangeStore;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded store's backup, restore and guard, on real SQLite files: a backup taken while a server allocates,
 * restored into a new directory, guarded with {@code restore-guard}, then served again. Without the guard the
 * restored store hands out IDs again (the hazard the guard is for); with it, none of the IDs handed out before.
 */
class EmbeddedBackupRestoreTest {
  private static final String SEQUENCE = "orders";
  private static final String OTHER = "invoices";
  /** Where OTHER starts: the two ID spaces never meet, so one set of IDs holds both. */
  private static final long OTHER_START = 1_000_000_000_000L;

  @TempDir
  Path dir;

  private final StoreCommandLine cli = new StoreCommandLine();
  private final StringWriter out = cli.out;
  private final StringWriter err = cli.err;

  @Test
  void should_hand_out_nothing_twice_after_a_restore_of_a_backup_taken_while_allocating_and_the_guard()
      throws Exception {
    Path live = dir.resolve("live");
    Path backup = dir.resolve("backups").resolve("idgen.db");
    Files.createDirectories(backup.getParent());
    Set<Long> before = new HashSet<>();
    Set<Long> beforeBackup = new HashSet<>();
    try (EmbeddedRangeStore store = EmbeddedRangeStore.open(live)) {
      try (EmbeddedDaemon daemon = EmbeddedDaemon.onLoopback(store, Map.of())) {
        ManagedChannel channel = channel(daemon);
        try {
          create(channel, SEQUENCE);
          create(channel, OTHER);
          // Small node blocks: the server reserves from the store every few calls, also during the backup.
          AtomicBoolean stop = new AtomicBoolean();
          CompletableFuture<List<Long>> allocating = CompletableFuture.supplyAsync(() -> {
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 2_000 && !stop.get(); i++) {
              ids.addAll(allocate(channel, i % 2 == 0 ? SEQUENCE : OTHER, 7));
            }
            return ids;
          });
          before.addAll(allocate(channel, SEQUENCE, 50));
          beforeBackup.addAll(before);
          long bytes = store.backupTo(backup);
          assertThat(bytes).isPositive();
          for (int i = 0; i < 20; i++) {
            before.addAll(allocate(channel, SEQUENCE, 50));
            before.addAll(allocate(channel, OTHER, 50));
          }
          stop.set(true);
          before.addAll(allocating.get(60, TimeUnit.SECONDS));
        } finally {
          channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
      }
    }
    long highest = before.stream().mapToLong(Long::longValue).filter(id -> id < OTHER_START).max().orElseThrow();
    long highestOther = before.stream().mapToLong(Long::longValue).max().orElseThrow();

    // The hazard: the backup alone hands out again IDs reserved after it was taken.
    Path unguarded = restore(backup, "unguarded");
    Set<Long> again = serveAndAllocate(unguarded, 200);
    assertThat(again).as("a restore without the guard re-issues IDs").containsAnyElementsOf(before);

    // The guard: every sequence advanced past the highest ID its consumers hold.
    Path restored = restore(backup, "restored");
    Path floors = dir.resolve("floors.txt");
    Files.writeString(floors, "# from SELECT max(id) of each table\n" + SEQUENCE + " " + highest + "\n" + OTHER + " "
        + highestOther + "\n");
    assertThat(run("restore-guard", "--config", config(restored).toString(), "--floors", floors.toString()))
        .as(err.toString()).isZero();
    assertThat(out.toString()).contains(SEQUENCE + ": advanced past " + highest)
        .contains(OTHER + ": advanced past " + highestOther);

    Set<Long> after = serveAndAllocate(restored, 200);
    assertThat(after).hasSize(400).doesNotContainAnyElementsOf(before);
    assertThat(after).allMatch(id -> id < OTHER_START ? id > highest : id > highestOther);
    assertThat(beforeBackup).isNotEmpty();
  }

  @Test
  void should_back_up_a_stopped_store_with_the_command_and_refuse_a_target_that_exists() throws Exception {
    Path live = dir.resolve("live");
    Set<Long> ids = serveAndAllocate(live, 10);
    Path backup = dir.resolve("idgen-backup.db");

    assertThat(run("backup", "--config", config(live).toString(), "--to", backup.toString())).as(err.toString())
        .isZero();
    assertThat(out.toString()).contains("backed up").contains(backup.toAbsolutePath().toString());
    assertThat(run("backup", "--config", config(live).toString(), "--to", backup.toString()))
        .isEqualTo(StoreCommands.EXIT_USAGE);
    assertThat(err.toString()).contains("already exists: name a new file");

    // The copy is a store as it is: it opens and knows the sequence.
    Path restored = restore(backup, "restored");
    try (EmbeddedRangeStore store = EmbeddedRangeStore.open(restored)) {
      assertThat(store.find(SEQUENCE)).isPresent();
    }
    assertThat(ids).hasSize(20);
  }

  @Test
  void should_guard_a_restored_backup_with_an_export_taken_after_it() throws Exception {
    Path live = dir.resolve("live");
    Set<Long> handedOut = new HashSet<>(serveAndAllocate(live, 10));
    Path backup = dir.resolve("idgen-backup.db");
    assertThat(run("backup", "--config", config(live).toString(), "--to", backup.toString())).as(err.toString())
        .isZero();
    handedOut.addAll(serveAndAllocate(live, 300)); // past the backup: node blocks of 20, reserved again and again

    Path floors = dir.resolve("floors.txt");
    assertThat(run("export", "--config", config(live).toString(), "--to", floors.toString())).as(err.toString())
        .isZero();
    assertThat(out.toString()).contains("exported 2 sequences");
    assertThat(Files.readAllLines(floors)).anyMatch(l -> l.startsWith(SEQUENCE + " "))
        .anyMatch(l -> l.startsWith(OTHER + " ")).anyMatch(l -> l.startsWith("# SequenceDefinition[name=" + SEQUENCE));
    assertThat(run("export", "--config", config(live).toString(), "--to", floors.toString()))
        .isEqualTo(StoreCommands.EXIT_USAGE);
    assertThat(err.toString()).contains("exists; export never overwrites");

    Path restored = restore(backup, "restored");
    assertThat(run("restore-guard", "--config", config(restored).toString(), "--floors", floors.toString()))
        .as(err.toString()).isZero();
    Set<Long> after = serveAndAllocate(restored, 50);
    assertThat(after).hasSize(100).doesNotContainAnyElementsOf(handedOut);
  }

  @Test
  void should_refuse_a_missing_store_and_a_floors_file_that_leaves_a_sequence_out() throws Exception {
    Path missing = dir.resolve("nothing-here");
    assertThat(run("backup", "--config", config(missing).toString(), "--to", dir.resolve("b.db").toString()))
        .isEqualTo(StoreCommands.EXIT_USAGE);
    assertThat(err.toString()).contains("there is no embedded store at " + missing.resolve("idgen.db"));
    assertThat(Files.exists(missing)).as("no empty store created").isFalse();

    Path live = dir.resolve("live");
    serveAndAllocate(live, 1);
    Path floors = dir.resolve("floors.txt");
    Files.writeString(floors, SEQUENCE + " 1000\nghost 5\n");
    assertThat(run("restore-guard", "--config", config(live).toString(), "--floors", floors.toString()))
        .isEqualTo(StoreCommands.EXIT_REFUSED);
    assertThat(err.toString()).contains("nothing was written").contains("Name these sequences with a floor")
        .contains(OTHER).contains("not in the restored store").contains("ghost");
    try (EmbeddedRangeStore store = EmbeddedRangeStore.open(live)) {
      assertThat(store.floor(store.find(SEQUENCE).orElseThrow())).as("nothing advanced").isLessThan(1000);
    }

    Files.writeString(floors, SEQUENCE + " many\n");
    assertThat(run("restore-guard", "--config", config(live).toString(), "--floors", floors.toString()))
        .isEqualTo(StoreCommands.EXIT_USAGE);
    assertThat(err.toString()).contains("line 1: floor 'many' is not an integer");
  }

  /** Starts a server on {@code dataDir} (creating both sequences if new), allocates {@code count} of each. */
  private Set<Long> serveAndAllocate(Path dataDir, int count) throws InterruptedException {
    boolean fresh = !Files.exists(dataDir.resolve("idgen.db"));
    Set<Long> ids = new HashSet<>();
    try (EmbeddedDaemon daemon = EmbeddedDaemon.onLoopback(dataDir, 0)) {
      ManagedChannel channel = channel(daemon);
      try {
        if (fresh) {
          create(channel, SEQUENCE);
          create(channel, OTHER);
        }
        for (int i = 0; i < count; i++) {
          ids.addAll(allocate(channel, SEQUENCE, 1));
          ids.addAll(allocate(channel, OTHER, 1));
        }
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
    return ids;
  }

  /** A restore as an operator makes it: the backup copied into the store directory as idgen.db. */
  private Path restore(Path backup, String name) throws Exception {
    Path restored = dir.resolve(name);
    Files.createDirectories(restored);
    Files.copy(backup, restored.resolve("idgen.db"));
    return restored;
  }

  private Path config(Path dataDir) throws Exception {
    Path file = dir.resolve("idgen-" + dataDir.getFileName() + ".conf");
    Files.writeString(file, "idgen.embedded.dir = \"" + dataDir + "\"\n");
    return file;
  }

  private int run(String... args) {
    return cli.run(args);
  }

  private static ManagedChannel channel(EmbeddedDaemon daemon) {
    return ManagedChannelBuilder.forAddress("127.0.0.1", daemon.port()).usePlaintext().build();
  }

  private static void create(ManagedChannel channel, String name) {
    SequenceAdminGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
        .createSequence(CreateSequenceRequest.newBuilder().setName(name).setNodeBlockSize(20)
            .setStart(name.equals(OTHER) ? OTHER_START : 1).build());
  }

  private static List<Long> allocate(ManagedChannel channel, String sequence, int count) {
    List<IdRange> ranges = new ArrayList<>();
    IdGenGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
        .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build())
        .forEachRemaining(ranges::add);
    return TestServer.ids(ranges);
  }
}
