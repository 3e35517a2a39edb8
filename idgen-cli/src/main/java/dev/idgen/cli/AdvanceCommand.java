package dev.idgen.cli;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code idgen advance NAME --floor N}: SequenceAdmin/AdvanceSequence. */
@Command(name = "advance", mixinStandardHelpOptions = true,
    description = {
        "Moves a sequence past IDs assigned elsewhere.",
        "Once it returns, no server and no client stub hands out an ID at or below the floor: it waits",
        "until every live server confirmed, then for client leases to expire (10 s by default).",
        "Advancing backwards changes nothing. Prints the sequence.",
        "FAILED_PRECONDITION if the floor is at or above the sequence's max; UNAVAILABLE naming the",
        "servers that did not confirm in time (the floor is in force in the store: run it again).",
    },
    footer = {"", "Example: idgen advance orders --floor 50000"})
final class AdvanceCommand extends RpcCommand {

  @Parameters(index = "0", paramLabel = "NAME", description = "The sequence.")
  private String name;

  @Option(names = "--floor", paramLabel = "ID", required = true,
      description = "No ID at or below this one is handed out afterwards.")
  private long floor;

  @Override
  java.time.Duration defaultDeadline() {
    return java.time.Duration.ofSeconds(60);
  }

  @Override
  void run(Calls calls, Output out) {
    out.sequence(calls.admin().advanceSequence(
        AdvanceSequenceRequest.newBuilder().setName(name).setFloor(floor).build()));
  }
}
