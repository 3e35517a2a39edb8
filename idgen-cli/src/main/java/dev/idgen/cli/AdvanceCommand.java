package dev.idgen.cli;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.ListSequencesRequest;
import dev.idgen.api.v1.ListSequencesResponse;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceView;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code idgen advance NAME --floor N}: SequenceAdmin/AdvanceSequence. In bulk, {@code --file} (lines
 * {@code name floor}) or {@code --prefix P --floor N} advance many sequences one after the other, each
 * reported ({@link Floors}).
 */
@Command(name = "advance", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
        "Moves a sequence past IDs assigned elsewhere.",
        "Once it returns, no server and no client stub hands out an ID at or below the floor: it waits",
        "until every live server confirmed, then for client leases to expire (10 s by default).",
        "Advancing backwards changes nothing. Prints the sequence.",
        "FAILED_PRECONDITION if the floor is at or above the sequence's max; UNAVAILABLE naming the",
        "servers that did not confirm in time (the floor is in force in the store: run it again).",
        "In bulk (--file, or --prefix with --floor) it prints one row per sequence: advanced, or failed",
        "with the reason; it goes on after a failure and exits with the first failure's code.",
    },
    footer = {"", "Examples:", "  idgen advance orders --floor 50000",
        "  idgen advance --file floors.txt --dry-run", "  idgen advance --prefix orders- --floor 50000"})
final class AdvanceCommand extends RpcCommand {

  @Parameters(index = "0", arity = "0..1", paramLabel = "NAME", description = "The sequence.")
  private String name;

  @Option(names = "--floor", paramLabel = "ID",
      description = "No ID at or below this one is handed out afterwards.")
  private Long floor;

  @Option(names = "--file", paramLabel = "FILE",
      description = "Bulk: a file of lines 'NAME FLOOR' (blank lines and # comments are skipped).")
  private Path file;

  @Option(names = "--prefix", paramLabel = "PREFIX",
      description = "Bulk: every live sequence whose name starts with PREFIX, to --floor.")
  private String prefix;

  @Option(names = "--dry-run", description = "Bulk: print what would be advanced, change nothing.")
  private boolean dryRun;

  private List<Floors.Row> fileRows;

  @Override
  java.time.Duration defaultDeadline() {
    return java.time.Duration.ofSeconds(60);
  }

  @Override
  void checkOptions(CommandLine commandLine) {
    int forms = (name != null ? 1 : 0) + (file != null ? 1 : 0) + (prefix != null ? 1 : 0);
    if (forms != 1) {
      throw new ParameterException(commandLine, forms == 0
          ? "Missing required parameter: 'NAME' (or --file FILE, or --prefix PREFIX with --floor)"
          : "give one of NAME, --file or --prefix");
    }
    if (file == null && floor == null) {
      throw new ParameterException(commandLine, "Missing required option: '--floor=ID'");
    }
    if (file != null && floor != null) {
      throw new ParameterException(commandLine, "--file gives each sequence's floor: drop --floor");
    }
    if (dryRun && name != null) {
      throw new ParameterException(commandLine, "--dry-run is for --file and --prefix (for one sequence,"
          + " 'idgen get NAME' shows it)");
    }
    if (prefix != null && prefix.isEmpty()) {
      throw new ParameterException(commandLine, "--prefix: empty (it would advance every sequence; list"
          + " them in a --file instead)");
    }
    if (file != null) {
      fileRows = readFile(commandLine, file);
    }
  }

  /** Parses the whole file before any call, so that a typo on line 90 does not leave 89 rows applied. */
  static List<Floors.Row> readFile(CommandLine commandLine, Path file) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ParameterException(commandLine, "--file: cannot read " + file + ": " + e.getMessage());
    }
    List<Floors.Row> rows = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      int hash = line.indexOf('#');
      String content = (hash >= 0 ? line.substring(0, hash) : line).strip();
      if (content.isEmpty()) {
        continue;
      }
      String where = file.getFileName() + ":" + (i + 1);
      String[] fields = content.split("\\s+");
      if (fields.length != 2) {
        problems.add(where + ": expected 'NAME FLOOR', got '" + content + "'");
        continue;
      }
      String problem = Floors.nameProblem(fields[0]);
      if (problem != null) {
        problems.add(where + ": " + problem);
        continue;
      }
      try {
        rows.add(new Floors.Row(fields[0], Long.parseLong(fields[1]), where));
      } catch (NumberFormatException e) {
        problems.add(where + ": floor '" + fields[1] + "' is not an integer");
      }
    }
    if (!problems.isEmpty()) {
      throw new ParameterException(commandLine, "--file " + file + ": nothing applied, fix these lines first:"
          + System.lineSeparator() + "  " + String.join(System.lineSeparator() + "  ", problems));
    }
    if (rows.isEmpty()) {
      throw new ParameterException(commandLine, "--file " + file + ": no 'NAME FLOOR' line in it");
    }
    return rows;
  }

  @Override
  void run(Calls calls, Output out) {
    out.sequence(calls.admin().advanceSequence(
        AdvanceSequenceRequest.newBuilder().setName(name).setFloor(floor).build()));
  }

  @Override
  int execute(Calls calls, Output out) {
    if (name != null) {
      return super.execute(calls, out);
    }
    List<Floors.Row> rows = fileRows != null ? fileRows : prefixRows(calls);
    List<Floors.Result> results = Floors.apply(calls, rows, false, dryRun);
    out.floorResults(results);
    return Floors.exitCode(results);
  }

  private List<Floors.Row> prefixRows(Calls calls) {
    List<Sequence> all = Pages.all(token -> calls.admin().listSequences(ListSequencesRequest.newBuilder()
            .setPageSize(1000)
            .setPageToken(token)
            .setView(SequenceView.SEQUENCE_VIEW_BASIC)
            .build()),
        ListSequencesResponse::getSequencesList, ListSequencesResponse::getNextPageToken);
    List<Floors.Row> rows = new ArrayList<>();
    for (Sequence s : all) {
      if (s.getName().startsWith(prefix)) {
        rows.add(new Floors.Row(s.getName(), floor, "--prefix " + prefix));
      }
    }
    if (rows.isEmpty()) {
      throw new io.grpc.StatusRuntimeException(io.grpc.Status.NOT_FOUND.withDescription(
          "no sequence's name starts with '" + prefix + "' (idgen list shows them)"));
    }
    return rows;
  }
}
