package dev.idgen.server;

import com.google.common.base.CharMatcher;
import com.google.common.base.Splitter;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import dev.idgen.core.IdGenException;
import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.StoredSequence;
import dev.idgen.core.store.cassandra.CassandraRangeStore;
import dev.idgen.core.store.embedded.EmbeddedRangeStore;
import dev.idgen.server.config.ConfigLoader;
import dev.idgen.server.config.ServerSettings;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The server jar's store commands: {@code backup}, {@code export}, {@code restore-guard} and {@code move-store}. Each
 * opens the store that a configuration file names (the same file the server reads), does its work and closes it.
 * They run with no server on the store: the embedded store locks its file for one process, so a command started
 * while a server holds it waits 10 s and stops with exit code 1, saying so.
 *
 * <p>Exit codes: 0 done; 1 a store could not be used (held by a server, unreachable, a disk fault); 2 bad input (a
 * missing file, a configuration of the wrong store, a malformed floors file); 3 refused (a conflicting target, a
 * guard that does not cover every sequence): nothing was written.
 *
 * <p>Not thread-safe: picocli runs each once, on the main thread.
 */
final class StoreCommands {
  static final int EXIT_OK = 0;
  static final int EXIT_STORE = 1;
  static final int EXIT_USAGE = 2;
  static final int EXIT_REFUSED = 3;
  /** How long a command waits for Cassandra to answer before giving up. */
  private static final long CASSANDRA_WAIT_SECONDS = 60;

  private StoreCommands() {}

  /** A bad command line or input file: exit code 2 with this message. */
  static final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }

  /** What every store command shares: its output, and the exit code of a failure. */
  abstract static class StoreCommand implements java.util.concurrent.Callable<Integer> {
    @Spec
    CommandSpec spec;

    abstract int run(PrintWriter out) throws UsageException, IOException;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      PrintWriter err = spec.commandLine().getErr();
      String name = "idgen-server " + spec.name();
      try {
        return run(out);
      } catch (UsageException | ConfigException e) {
        err.println(name + ": " + e.getMessage());
        return EXIT_USAGE;
      } catch (InvalidRequestException e) {
        err.println(name + ": refused: " + e.getMessage());
        return EXIT_REFUSED;
      } catch (StoreUnavailableException e) {
        err.println(name + ": " + e.getMessage());
        return EXIT_STORE;
      } catch (IOException | IdGenException e) {
        err.println(name + ": failed: " + e.getMessage());
        return EXIT_STORE;
      } finally {
        out.flush();
        err.flush();
      }
    }
  }

  /** The embedded store {@code config} names; the file must exist (never a new, empty store). */
  static EmbeddedRangeStore openEmbedded(Path configFile, String option) throws UsageException {
    ServerSettings settings = settings(configFile, option);
    if (settings.store() != ServerSettings.StoreKind.EMBEDDED) {
      throw new UsageException(option + " " + configFile + ": it configures the " + settings.store().name().toLowerCase(java.util.Locale.ROOT)
          + " store (idgen.store); this command needs the embedded one");
    }
    Path db = settings.embeddedDir().resolve("idgen.db");
    if (!Files.isRegularFile(db)) {
      throw new UsageException(option + " " + configFile + ": there is no embedded store at " + db.toAbsolutePath()
          + " (idgen.embedded.dir = " + settings.embeddedDir() + ")");
    }
    return EmbeddedRangeStore.open(settings.embeddedDir());
  }

  /**
   * The store {@code config} names, embedded or Cassandra. The embedded one must exist (never a new, empty
   * store); a Cassandra keyspace must answer within {@value #CASSANDRA_WAIT_SECONDS} s.
   */
  static RangeStore openStore(Path configFile, String option) throws UsageException {
    Config config = config(configFile, option);
    if (ServerSettings.from(config).store() == ServerSettings.StoreKind.CASSANDRA) {
      return connect(config);
    }
    return openEmbedded(configFile, option);
  }

  private static ServerSettings settings(Path configFile, String option) throws UsageException {
    return ServerSettings.from(config(configFile, option));
  }

  private static Config config(Path configFile, String option) throws UsageException {
    if (!Files.isRegularFile(configFile)) {
      throw new UsageException(option + ": the configuration file " + configFile.toAbsolutePath()
          + " does not exist");
    }
    return ConfigLoader.load(Optional.of(configFile));
  }

  /** {@code backup}: a consistent copy of the embedded store, into a new file. */
  @Command(name = "backup", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
      description = {"Copies the embedded store into a new file, consistently (SQLite's VACUUM INTO).",
          "Run it with the server stopped: the server holds the store's file for itself.",
          "Exit codes: 0 done, 1 store unusable (held by a server), 2 bad input."})
  static final class Backup extends StoreCommand {
    @Option(names = "--config", required = true, paramLabel = "FILE", description = "The server's configuration")
    Path configFile;

    @Option(names = "--to", required = true, paramLabel = "FILE", description = "The backup file; must not exist")
    Path to;

    @Override
    int run(PrintWriter out) throws UsageException {
      try (EmbeddedRangeStore store = openEmbedded(configFile, "--config")) {
        long bytes;
        try {
          bytes = store.backupTo(to);
        } catch (InvalidRequestException e) {
          throw new UsageException("--to: " + e.getMessage());
        }
        out.println("backed up " + store + " to " + to.toAbsolutePath() + " (" + bytes + " bytes)");
      }
      return EXIT_OK;
    }
  }

  /**
   * {@code restore-guard}: after a restore, advances every sequence past the highest ID it may have handed out
   * since the backup, as the operator's floors file says, before any server starts on the restored file.
   */
  @Command(name = "restore-guard", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
      description = {"After restoring a store (an embedded backup, a Cassandra snapshot), advances every sequence",
          "to its floor from --floors (lines 'SEQUENCE FLOOR': at or above the highest ID handed out for it, as",
          "'export' writes them or your systems hold them). Run it before any server serves the restored store.",
          "Refuses, writing nothing, unless the file names every sequence that can still hand out IDs.",
          "Exit codes: 0 done, 1 store unusable, 2 bad input, 3 refused."})
  static final class RestoreGuard extends StoreCommand {
    @Option(names = "--config", required = true, paramLabel = "FILE", description = "The server's configuration")
    Path configFile;

    @Option(names = "--floors", required = true, paramLabel = "FILE",
        description = "Lines 'SEQUENCE FLOOR'; # starts a comment")
    Path floorsFile;

    @Option(names = "--dry-run", description = "Print what it would do; write nothing")
    boolean dryRun;

    @Override
    int run(PrintWriter out) throws UsageException, IOException {
      Map<String, Long> floors = readFloors(floorsFile);
      try (RangeStore store = openStore(configFile, "--config")) {
        List<String> lines = RestoreGuardPlan.apply(store, floors, dryRun);
        lines.forEach(out::println);
      }
      return EXIT_OK;
    }
  }

  /**
   * {@code export}: the floors file {@code restore-guard} reads, one line per sequence that can hand out IDs: the
   * highest ID any tier may have handed out so far. Taken after a snapshot and before its restore, it covers every
   * ID handed out in between; each sequence's definition goes along as a comment, to create again a sequence the
   * restore drops.
   */
  @Command(name = "export", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
      description = {"Writes every sequence's high-water mark (the highest ID any tier may have handed out) as",
          "a floors file for restore-guard: lines 'SEQUENCE FLOOR', each definition in a comment.",
          "Cassandra: run it with the servers stopped, so that nothing is handed out after it.",
          "The embedded store: run it with its server stopped (the server holds the file).",
          "Exit codes: 0 done, 1 store unusable, 2 bad input."})
  static final class Export extends StoreCommand {
    @Option(names = "--config", required = true, paramLabel = "FILE", description = "The server's configuration")
    Path configFile;

    @Option(names = "--to", required = true, paramLabel = "FILE", description = "The floors file; must not exist")
    Path to;

    @Override
    int run(PrintWriter out) throws UsageException, IOException {
      if (Files.exists(to)) {
        throw new UsageException("--to: " + to.toAbsolutePath() + " exists; export never overwrites a floors file");
      }
      Path dirOf = to.toAbsolutePath().getParent();
      if (dirOf != null && !Files.isDirectory(dirOf)) {
        throw new UsageException("--to: the directory " + dirOf + " does not exist");
      }
      List<String> lines = new ArrayList<>();
      int sequences = 0;
      try (RangeStore store = openStore(configFile, "--config")) {
        lines.add("# idgen export of the store of " + configFile + " at " + java.time.Instant.now()
            + ": SEQUENCE FLOOR, the highest ID any tier may have handed out; read by restore-guard");
        for (StoredSequence s : StoreMove.allStored(store)) {
          if (s.purged()) {
            continue;
          }
          SequenceDefinition d = s.definition();
          lines.add("# " + d + (s.deleted() ? " (deleted)" : ""));
          lines.add(d.name() + " " + StoreMove.highestHandedOut(store, d));
          sequences++;
        }
      }
      // Complete or absent: a half-written floors file would let the guard refuse, or worse, pass too low.
      Path partial = to.resolveSibling(to.getFileName() + ".partial");
      Files.write(partial, lines);
      try (java.nio.channels.FileChannel c = java.nio.channels.FileChannel.open(partial,
          java.nio.file.StandardOpenOption.WRITE)) {
        c.force(true);
      }
      Files.move(partial, to, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      out.println("exported " + sequences + " sequences to " + to.toAbsolutePath());
      return EXIT_OK;
    }
  }

  /** {@code move-store}: every sequence of the embedded store into the Cassandra keyspace of another config. */
  @Command(name = "move-store", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
      description = {"Moves every sequence of an embedded store into a Cassandra keyspace: definitions, deleted",
          "states, reservations, each advanced past every ID the embedded store may have handed out.",
          "Stop the embedded server first, and start the Cassandra servers after.",
          "Exit codes: 0 done, 1 store unusable, 2 bad input, 3 refused (a conflicting sequence: nothing written)."})
  static final class MoveStore extends StoreCommand {
    @Option(names = "--from-config", required = true, paramLabel = "FILE",
        description = "The embedded server's configuration")
    Path fromConfig;

    @Option(names = "--to-config", required = true, paramLabel = "FILE",
        description = "The Cassandra servers' configuration (idgen.store = cassandra)")
    Path toConfig;

    @Option(names = "--dry-run", description = "Print what it would do; write nothing")
    boolean dryRun;

    @Override
    int run(PrintWriter out) throws UsageException {
      Config target = config(toConfig, "--to-config");
      ServerSettings targetSettings = ServerSettings.from(target);
      if (targetSettings.store() != ServerSettings.StoreKind.CASSANDRA) {
        throw new UsageException("--to-config " + toConfig + ": it configures the "
            + targetSettings.store().name().toLowerCase(java.util.Locale.ROOT) + " store (idgen.store); the target must be cassandra");
      }
      try (EmbeddedRangeStore from = openEmbedded(fromConfig, "--from-config");
          CassandraRangeStore to = connect(target)) {
        StoreMove move = new StoreMove(from, to);
        List<StoreMove.Step> steps = move.plan();
        if (dryRun) {
          steps.forEach(s -> out.println(s.line(false)));
          out.println("dry run: " + steps.size() + " sequences would be moved; nothing was written");
        } else {
          move.apply(steps, out::println);
          out.println("moved " + steps.size() + " sequences into keyspace "
              + CassandraStoreModule.settings(target).keyspace());
        }
      }
      return EXIT_OK;
    }
  }

  private static CassandraRangeStore connect(Config config) {
    CassandraRangeStore store = CassandraRangeStore.open(CassandraStoreModule.settings(config), null);
    try {
      store.ready().toCompletableFuture().get(CASSANDRA_WAIT_SECONDS, TimeUnit.SECONDS);
      return store;
    } catch (TimeoutException e) {
      store.close();
      throw new StoreUnavailableException("Cassandra did not answer within " + CASSANDRA_WAIT_SECONDS + " s ("
          + CassandraStoreModule.settings(config).contactPoints() + ")", e);
    } catch (ExecutionException e) {
      store.close();
      throw e.getCause() instanceof StoreUnavailableException u ? u
          : new StoreUnavailableException("cannot connect to Cassandra: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      store.close();
      throw new StoreUnavailableException("interrupted while connecting to Cassandra", e);
    }
  }

  /** Reads lines "SEQUENCE FLOOR"; blank lines and {@code #} comments are skipped. */
  static Map<String, Long> readFloors(Path file) throws UsageException, IOException {
    List<String> lines;
    try {
      lines = Files.readAllLines(file);
    } catch (NoSuchFileException e) {
      throw new UsageException("--floors: the file " + file.toAbsolutePath() + " does not exist");
    }
    Map<String, Long> floors = new LinkedHashMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).replaceFirst("#.*", "").trim();
      if (line.isEmpty()) {
        continue;
      }
      List<String> parts = Splitter.on(CharMatcher.whitespace()).omitEmptyStrings().splitToList(line);
      String where = "--floors " + file + " line " + (i + 1) + ": ";
      if (parts.size() != 2) {
        throw new UsageException(where + "'" + lines.get(i) + "' (expected: SEQUENCE FLOOR, e.g. 'orders 1200000')");
      }
      long floor;
      try {
        floor = Long.parseLong(parts.get(1));
      } catch (NumberFormatException e) {
        throw new UsageException(where + "floor '" + parts.get(1) + "' is not an integer");
      }
      if (floors.put(parts.get(0), floor) != null) {
        throw new UsageException(where + "sequence '" + parts.get(0) + "' is named twice");
      }
    }
    return floors;
  }

  /** The guard's plan and its application, apart from picocli for tests. */
  static final class RestoreGuardPlan {
    private RestoreGuardPlan() {}

    /**
     * Advances each sequence of {@code store} to its floor in {@code floors}, after checking that every
     * sequence that can hand out IDs again (all but purged ones) is named and that every name is a sequence;
     * returns one line per sequence.
     *
     * @throws InvalidRequestException naming what is missing or unknown, before anything is written
     */
    static List<String> apply(RangeStore store, Map<String, Long> floors, boolean dryRun) {
      List<StoredSequence> all = StoreMove.allStored(store);
      List<String> missing = new ArrayList<>();
      Map<String, StoredSequence> byName = new LinkedHashMap<>();
      for (StoredSequence s : all) {
        byName.put(s.definition().name(), s);
        if (!s.purged() && !floors.containsKey(s.definition().name())) {
          missing.add(s.definition().name());
        }
      }
      for (StoredSequence s : all) {
        Long floor = floors.get(s.definition().name());
        if (floor != null && floor > s.definition().max()) {
          throw new InvalidRequestException("sequence '" + s.definition().name() + "': floor " + floor
              + " is above its max " + s.definition().max() + "; nothing was written");
        }
      }
      List<String> unknown = floors.keySet().stream().filter(n -> !byName.containsKey(n)).toList();
      if (!missing.isEmpty() || !unknown.isEmpty()) {
        throw new InvalidRequestException("the floors file does not match the restored store; nothing was written."
            + (missing.isEmpty() ? "" : " Name these sequences with a floor (they would hand out again every ID"
                + " reserved since the backup): " + String.join(", ", missing) + ".")
            + (unknown.isEmpty() ? "" : " These names are not in the restored store (created after the backup?"
                + " create them again with the same definition, then run the guard again): "
                + String.join(", ", unknown) + "."));
      }
      List<String> lines = new ArrayList<>();
      for (StoredSequence s : all) {
        SequenceDefinition d = s.definition();
        Long floor = floors.get(d.name());
        if (floor == null) {
          lines.add(d.name() + ": purged, left as it is");
          continue;
        }
        if (!dryRun) {
          store.advance(d, floor);
        }
        lines.add(d.name() + ": " + (dryRun ? "would be advanced" : "advanced") + " past " + floor);
      }
      return lines;
    }
  }
}
