package dev.idgen.cli;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import javax.annotation.Nullable;

/**
 * Moves many sequences past the IDs used elsewhere, one after the other on the caller's thread, and reports
 * every row: a failed row is reported and the next one is still tried, so that nothing is half-applied
 * silently. Used by {@code idgen advance --file/--prefix} and {@code idgen import}.
 */
final class Floors {
  private Floors() {}

  /** The server's sequence name rule (SequenceDefinition): checked here so that a bad row fails before any call. */
  static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

  /**
   * One sequence to move.
   *
   * @param name the idgen sequence
   * @param floor no ID at or below it is handed out afterwards; a created sequence starts at floor + 1
   * @param source where the row came from (file:line, a table row), for the report
   */
  record Row(String name, long floor, String source) {}

  /** What happened to one row. */
  enum Outcome { created, advanced, would_create, would_advance, failed }

  /**
   * The report of one row.
   *
   * @param code the status of a failed call; null for a row refused before any call, or one that succeeded
   */
  record Result(Row row, Outcome outcome, String detail, @Nullable Status.Code code) {}

  /** Why {@code name} cannot be a sequence name; null if it can. */
  @Nullable
  static String nameProblem(String name) {
    if (NAME.matcher(name).matches()) {
      return null;
    }
    return "'" + name + "' is not a valid sequence name (expected: 1 to 64 characters from [A-Za-z0-9._-],"
        + " starting with a letter or digit; see --name-prefix or --map)";
  }

  /**
   * Applies every row in order. A sequence that exists is advanced to the row's floor (advancing backwards
   * changes nothing); a missing one is created starting at floor + 1 if {@code createMissing}, else fails.
   * With {@code dryRun} only GetSequence is called.
   */
  static List<Result> apply(RpcCommand.Calls calls, List<Row> rows, boolean createMissing, boolean dryRun) {
    List<Result> results = new ArrayList<>(rows.size());
    for (Row row : rows) {
      results.add(applyOne(calls, row, createMissing, dryRun));
    }
    return results;
  }

  private static Result applyOne(RpcCommand.Calls calls, Row row, boolean createMissing, boolean dryRun) {
    String problem = nameProblem(row.name());
    if (problem != null) {
      return new Result(row, Outcome.failed, problem, null);
    }
    if (row.floor() < 0 || row.floor() == Long.MAX_VALUE) {
      return new Result(row, Outcome.failed, "floor " + row.floor() + " is out of range (expected: 0 to "
          + (Long.MAX_VALUE - 1) + ")", null);
    }
    try {
      boolean exists = exists(calls, row.name());
      if (!exists && !createMissing) {
        return new Result(row, Outcome.failed, "no such sequence (advance moves existing ones only)",
            Status.Code.NOT_FOUND);
      }
      if (dryRun) {
        return exists
            ? new Result(row, Outcome.would_advance, "would advance to floor " + row.floor(), null)
            : new Result(row, Outcome.would_create, "would create starting at " + (row.floor() + 1), null);
      }
      if (exists) {
        calls.admin().advanceSequence(AdvanceSequenceRequest.newBuilder().setName(row.name())
            .setFloor(row.floor()).build());
        return new Result(row, Outcome.advanced, "no ID at or below " + row.floor() + " follows", null);
      }
      calls.admin().createSequence(CreateSequenceRequest.newBuilder().setName(row.name())
          .setStart(row.floor() + 1).build());
      return new Result(row, Outcome.created, "starts at " + (row.floor() + 1), null);
    } catch (StatusRuntimeException e) {
      String description = e.getStatus().getDescription();
      return new Result(row, Outcome.failed, e.getStatus().getCode()
          + (description == null || description.isEmpty() ? "" : ": " + description), e.getStatus().getCode());
    }
  }

  private static boolean exists(RpcCommand.Calls calls, String name) {
    try {
      calls.admin().getSequence(GetSequenceRequest.newBuilder().setName(name).build());
      return true;
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
        return false;
      }
      throw e;
    }
  }

  /** The exit code of a run: OK if no row failed, else that of the first failed row (USAGE if it made no call). */
  static int exitCode(List<Result> results) {
    for (Result r : results) {
      if (r.outcome() == Outcome.failed) {
        return r.code() == null ? ExitCodes.USAGE : ExitCodes.of(r.code());
      }
    }
    return ExitCodes.OK;
  }
}
