package dev.idgen.cli;

import dev.idgen.api.v1.UndeleteSequenceRequest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code idgen undelete NAME [--etag E]}: SequenceAdmin/UndeleteSequence. */
@Command(name = "undelete", mixinStandardHelpOptions = true,
    description = {
        "Restores a deleted sequence: it serves again, above every ID it handed out before.",
        "Prints the sequence. FAILED_PRECONDITION if it is not deleted; NOT_FOUND if it was purged;",
        "ABORTED if --etag is not the current one.",
    },
    footer = {"", "Example: idgen undelete orders-2019"})
final class UndeleteCommand extends RpcCommand {

  @Parameters(index = "0", paramLabel = "NAME", description = "The sequence.")
  private String name;

  @Option(names = "--etag", paramLabel = "ETAG",
      description = "Restore it only if its etag (from 'idgen get') is still this one.")
  private String etag;

  @Override
  java.time.Duration defaultDeadline() {
    return java.time.Duration.ofSeconds(60);
  }

  @Override
  void run(Calls calls, Output out) {
    UndeleteSequenceRequest.Builder request = UndeleteSequenceRequest.newBuilder().setName(name);
    if (etag != null) {
      request.setEtag(etag);
    }
    out.sequence(calls.admin().undeleteSequence(request.build()));
  }
}
