package dev.idgen.cli;

import dev.idgen.api.v1.GetSequenceRequest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code idgen get NAME}: SequenceAdmin/GetSequence. */
@Command(name = "get", mixinStandardHelpOptions = true,
    description = {
        "Prints a sequence's definition and live state.",
        "Definition: start, max, stripes, block sizes and ordering (strict: also its home datacenter).",
        "Live state: remaining IDs, headroom, the next unreserved ID per stripe, the reserves per",
        "datacenter and in the answering server, and for a strict sequence its owner and owner epoch",
        "once a server claimed it. NOT_FOUND if the sequence does not exist.",
    })
final class GetCommand extends RpcCommand {

  @Parameters(index = "0", paramLabel = "NAME", description = "The sequence.")
  private String name;

  @Override
  void run(Calls calls, Output out) {
    out.sequence(calls.admin().getSequence(GetSequenceRequest.newBuilder().setName(name).build()));
  }
}
