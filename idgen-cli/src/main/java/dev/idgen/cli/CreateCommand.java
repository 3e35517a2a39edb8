package dev.idgen.cli;

import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.Ordering;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code idgen create NAME}: SequenceAdmin/CreateSequence. */
@Command(name = "create", mixinStandardHelpOptions = true, sortOptions = false,
    description = {
        "Creates a sequence and prints it.",
        "Unset settings take the server's defaults.",
        "Fails with ALREADY_EXISTS if the name is taken, INVALID_ARGUMENT if a setting is out of range.",
    },
    footer = {"", "Examples:", "  idgen create orders --start 42000 --max 2147483647",
        "  idgen create invoices --ordering strict --home-datacenter dc1"})
final class CreateCommand extends RpcCommand {

  @Parameters(index = "0", paramLabel = "NAME",
      description = "1 to 64 characters from [A-Za-z0-9._-], starting with a letter or digit.")
  private String name;

  @Option(names = "--start", paramLabel = "ID", description = "The first ID, >= 0. Default: 1.")
  private Long start;

  @Option(names = "--max", paramLabel = "ID",
      description = "The largest ID ever handed out, >= start (2147483647 for 32-bit columns). "
          + "Default: 9223372036854775807.")
  private Long max;

  @Option(names = "--stripes", paramLabel = "N",
      description = "Stripes, 1 to 64: stripe k hands out start + k + i*N. Default: 1 (dense IDs).")
  private Integer stripes;

  @Option(names = "--node-block-size", paramLabel = "IDS",
      description = "The largest block one server reserves per stripe; a crash loses at most this many "
          + "per stripe. Default: 10000.")
  private Long nodeBlockSize;

  @Option(names = "--dc-block-size", paramLabel = "IDS",
      description = "The largest block a datacenter reserves per stripe (Cassandra store), "
          + ">= node block size; sets how long a datacenter cut off keeps allocating. Default: 1000000.")
  private Long dcBlockSize;

  @Option(names = "--ordering", paramLabel = "ORDERING", converter = OrderingConverter.class,
      completionCandidates = OrderingConverter.class,
      description = "per-server (the default): each server hands out increasing IDs from its own blocks, "
          + "served from memory, and client stubs cache them. strict: every ID is larger than every ID "
          + "handed out before the call began, whichever server; one owner server serves the sequence "
          + "(others forward to it), so each call costs a round trip to it, stubs cache nothing, and "
          + "calls fail UNAVAILABLE for up to about 1.25 owner leases when the owner dies. "
          + "Requires stripes = 1.")
  private Ordering ordering;

  @Option(names = "--home-datacenter", paramLabel = "NAME",
      description = "strict only: the datacenter whose servers own the sequence (calls from other "
          + "datacenters are forwarded there). Default: the datacenter of the server that creates it.")
  private String homeDatacenter;

  @Override
  void checkOptions(CommandLine commandLine) {
    if (homeDatacenter != null && ordering != Ordering.ORDERING_STRICT) {
      throw new ParameterException(commandLine, "--home-datacenter needs --ordering strict"
          + " (only strict sequences have a home datacenter)");
    }
  }

  @Override
  void run(Calls calls, Output out) {
    CreateSequenceRequest.Builder request = CreateSequenceRequest.newBuilder().setName(name);
    if (start != null) {
      request.setStart(start);
    }
    if (max != null) {
      request.setMax(max);
    }
    if (stripes != null) {
      request.setStripes(stripes);
    }
    if (nodeBlockSize != null) {
      request.setNodeBlockSize(nodeBlockSize);
    }
    if (dcBlockSize != null) {
      request.setDcBlockSize(dcBlockSize);
    }
    if (ordering != null) {
      request.setOrdering(ordering);
    }
    if (homeDatacenter != null) {
      request.setHomeDatacenter(homeDatacenter);
    }
    out.sequence(calls.admin().createSequence(request.build()));
  }
}
