package dev.idgen.cli;

import com.google.protobuf.FieldMask;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.UpdateSequenceRequest;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code idgen update NAME [--max N] [--node-block-size N] [--dc-block-size N] [--etag E]}: UpdateSequence. */
@Command(name = "update", mixinStandardHelpOptions = true,
    description = {
        "Changes a sequence's max (only upwards) and the caps of its reserves. It returns once every",
        "live server applied the change: a sequence that had reached its max serves again on every",
        "server, without a restart. Prints the sequence (its etag changed).",
        "FAILED_PRECONDITION for a lower max (MAX_DECREASE); ABORTED if --etag is not the current one",
        "(someone changed it since: get it again); NOT_FOUND for a deleted sequence; UNAVAILABLE naming",
        "the servers that did not apply it in time (it is in force in the store: run it again).",
        "Start, stripes and ordering never change: create a new sequence instead.",
    },
    footer = {"", "Example: idgen update orders --max 9223372036854775807"})
final class UpdateCommand extends RpcCommand {

  @Parameters(index = "0", paramLabel = "NAME", description = "The sequence.")
  private String name;

  @Option(names = "--max", paramLabel = "ID", description = "The new max, at or above the current one.")
  private Long max;

  @Option(names = "--node-block-size", paramLabel = "N",
      description = "The new cap of one server's reserve per stripe.")
  private Long nodeBlockSize;

  @Option(names = "--dc-block-size", paramLabel = "N",
      description = "The new cap of one datacenter's pool per stripe (Cassandra store).")
  private Long dcBlockSize;

  @Option(names = "--etag", paramLabel = "ETAG",
      description = "Change it only if its etag (from 'idgen get') is still this one.")
  private String etag;

  @Override
  java.time.Duration defaultDeadline() {
    return java.time.Duration.ofSeconds(60); // it waits for every live server, as an advance does
  }

  @Override
  void checkOptions(CommandLine commandLine) {
    if (max == null && nodeBlockSize == null && dcBlockSize == null) {
      throw new ParameterException(commandLine,
          "nothing to change: give --max, --node-block-size or --dc-block-size");
    }
  }

  @Override
  void run(Calls calls, Output out) {
    Sequence.Builder sequence = Sequence.newBuilder().setName(name);
    FieldMask.Builder mask = FieldMask.newBuilder();
    if (max != null) {
      sequence.setMax(max);
      mask.addPaths("max");
    }
    if (nodeBlockSize != null) {
      sequence.setNodeBlockSize(nodeBlockSize);
      mask.addPaths("node_block_size");
    }
    if (dcBlockSize != null) {
      sequence.setDcBlockSize(dcBlockSize);
      mask.addPaths("dc_block_size");
    }
    if (etag != null) {
      sequence.setEtag(etag);
    }
    out.sequence(calls.admin().updateSequence(UpdateSequenceRequest.newBuilder().setSequence(sequence)
        .setUpdateMask(mask).build()));
  }
}
