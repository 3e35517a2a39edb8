package dev.idgen.cli;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdRange;
import java.util.Iterator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code idgen allocate NAME}: IdGen/Allocate. */
@Command(name = "allocate", mixinStandardHelpOptions = true,
    description = {
        "Allocates new IDs and prints them, one per line.",
        "With --ranges it prints the ranges instead; with --output json one IdRange object per line.",
        "The IDs are yours: no one else ever gets them.",
        "If the sequence runs out part-way, the IDs received are printed, then OUT_OF_RANGE.",
    },
    footer = {"", "Example: idgen allocate orders --count 10 --ranges"})
final class AllocateCommand extends RpcCommand {

  @Parameters(index = "0", paramLabel = "NAME", description = "The sequence.")
  private String name;

  @Option(names = {"-n", "--count"}, paramLabel = "N", defaultValue = "1",
      description = "How many IDs, 1 up to the server's per-call limit. Default: ${DEFAULT-VALUE}.")
  private long count;

  @Option(names = "--ranges",
      description = "Print ranges (first..last count=N stride=S) instead of every ID.")
  private boolean ranges;

  @Override
  void run(Calls calls, Output out) {
    Iterator<IdRange> stream = calls.idGen().allocate(
        AllocateRequest.newBuilder().setSequence(name).setCount(count).build());
    // hasNext() throws the call's status once the ranges before it are read: those are printed first.
    while (stream.hasNext()) {
      out.range(stream.next(), ranges);
      out.flush();
    }
  }
}
