package dev.idgen.cli;

import dev.idgen.api.v1.ReserveRangeRequest;
import dev.idgen.api.v1.ReserveRangeResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.UUID;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code idgen reserve NAME COUNT}: SequenceAdmin/ReserveRange. */
@Command(name = "reserve", mixinStandardHelpOptions = true,
    description = {
        "Reserves COUNT consecutive IDs of a sequence for you (a bulk import, a migration): one range",
        "above everything any server holds, never handed out by allocate. Prints the range and its record.",
        "Every run sends a request id (a new UUID unless --request-id is given): after a failure, run it",
        "again with the request id the error names, and you get the same range instead of another one.",
        "INVALID_ARGUMENT if COUNT is above the server's idgen.admin.max-reserve-count; OUT_OF_RANGE if",
        "fewer are left below max; FAILED_PRECONDITION for a striped sequence, or a request id that",
        "reserved another count.",
    },
    footer = {"", "Example: idgen reserve orders 10000000 --request-id import-2026-11"})
final class ReserveCommand extends RpcCommand {

  @Parameters(index = "0", paramLabel = "NAME", description = "The sequence.")
  private String name;

  @Parameters(index = "1", paramLabel = "COUNT", description = "How many consecutive IDs.")
  private long count;

  @Option(names = "--request-id", paramLabel = "ID",
      description = "Makes a retry return the same range: 1 to 64 characters of [A-Za-z0-9._:-]."
          + " Default: a new UUID.")
  private String requestId;

  @Override
  void run(Calls calls, Output out) {
    String id = requestId != null ? requestId : UUID.randomUUID().toString();
    ReserveRangeResponse response;
    try {
      response = calls.admin().reserveRange(ReserveRangeRequest.newBuilder().setName(name).setCount(count)
          .setRequestId(id).build());
    } catch (StatusRuntimeException e) {
      Status.Code code = e.getStatus().getCode();
      if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED) {
        // The range may have been recorded: the same request id gets it back, a new one reserves another.
        throw e.getStatus().augmentDescription("to retry without reserving another range: idgen reserve " + name
            + " " + count + " --request-id " + id).asRuntimeException(e.getTrailers());
      }
      throw e;
    }
    out.reservation(response.getReservation(), response.getReplayed());
  }
}
