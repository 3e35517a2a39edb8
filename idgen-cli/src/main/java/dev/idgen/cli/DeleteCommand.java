package dev.idgen.cli;

import dev.idgen.api.v1.DeleteSequenceRequest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code idgen delete NAME [--etag E] [--purge]}: SequenceAdmin/DeleteSequence. */
@Command(name = "delete", mixinStandardHelpOptions = true,
    description = {
        "Deletes a sequence softly: nothing is handed out of it (Allocate: NOT_FOUND, reason",
        "SEQUENCE_DELETED), every live server gives back its reserve before it returns, and",
        "'idgen undelete' restores it until its expire time (30 days by default). Its name is never",
        "used again. Prints the sequence with its delete and expire times.",
        "With --purge, a deleted sequence past its expire time is removed for good (its name stays",
        "taken). NOT_FOUND if it is deleted already; FAILED_PRECONDITION for a purge of a sequence",
        "not deleted or before its expire time; ABORTED if --etag is not the current one.",
    },
    footer = {"", "Example: idgen delete orders-2019"})
final class DeleteCommand extends RpcCommand {

  @Parameters(index = "0", paramLabel = "NAME", description = "The sequence.")
  private String name;

  @Option(names = "--etag", paramLabel = "ETAG",
      description = "Delete it only if its etag (from 'idgen get') is still this one.")
  private String etag;

  @Option(names = "--purge", description = "Remove a deleted sequence for good, after its expire time.")
  private boolean purge;

  @Override
  java.time.Duration defaultDeadline() {
    return java.time.Duration.ofSeconds(60);
  }

  @Override
  void run(Calls calls, Output out) {
    DeleteSequenceRequest.Builder request = DeleteSequenceRequest.newBuilder().setName(name).setPurge(purge);
    if (etag != null) {
      request.setEtag(etag);
    }
    out.sequence(calls.admin().deleteSequence(request.build()));
  }
}
