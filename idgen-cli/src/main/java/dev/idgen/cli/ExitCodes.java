package dev.idgen.cli;

import io.grpc.Status;

/**
 * The exit codes of {@code idgen}: 0 on success, 1 for an unexpected failure, 2 for a usage error, and
 * {@code 10 + n} for a call that failed with the gRPC status code {@code n} (so 15 is NOT_FOUND, 24 is
 * UNAVAILABLE): one distinct code per failure class, which scripts can test without parsing stderr.
 */
public final class ExitCodes {

  /** Success. */
  public static final int OK = 0;

  /** A failure that is not a gRPC status (a local I/O error, a bug); stderr says what. */
  public static final int FAILED = 1;

  /** The command line was wrong (unknown option, missing argument, unreadable certificate file). */
  public static final int USAGE = 2;

  /** Added to the gRPC status code's number. */
  public static final int STATUS_BASE = 10;

  public static final int CANCELLED = of(Status.Code.CANCELLED);
  public static final int UNKNOWN = of(Status.Code.UNKNOWN);
  public static final int INVALID_ARGUMENT = of(Status.Code.INVALID_ARGUMENT);
  public static final int DEADLINE_EXCEEDED = of(Status.Code.DEADLINE_EXCEEDED);
  public static final int NOT_FOUND = of(Status.Code.NOT_FOUND);
  public static final int ALREADY_EXISTS = of(Status.Code.ALREADY_EXISTS);
  public static final int PERMISSION_DENIED = of(Status.Code.PERMISSION_DENIED);
  public static final int RESOURCE_EXHAUSTED = of(Status.Code.RESOURCE_EXHAUSTED);
  public static final int FAILED_PRECONDITION = of(Status.Code.FAILED_PRECONDITION);
  public static final int ABORTED = of(Status.Code.ABORTED);
  public static final int OUT_OF_RANGE = of(Status.Code.OUT_OF_RANGE);
  public static final int UNIMPLEMENTED = of(Status.Code.UNIMPLEMENTED);
  public static final int INTERNAL = of(Status.Code.INTERNAL);
  public static final int UNAVAILABLE = of(Status.Code.UNAVAILABLE);
  public static final int DATA_LOSS = of(Status.Code.DATA_LOSS);
  public static final int UNAUTHENTICATED = of(Status.Code.UNAUTHENTICATED);

  private ExitCodes() {}

  /** The exit code of a call that failed with {@code code}; {@link #OK} for {@code OK}. */
  public static int of(Status.Code code) {
    return code == Status.Code.OK ? OK : STATUS_BASE + code.value();
  }

  /** The lines of {@code --help}'s "Exit codes" section. */
  static String[] helpList() {
    return new String[] {
        OK + ":success",
        FAILED + ":an unexpected local failure",
        USAGE + ":a usage error (bad option or argument, unreadable certificate file)",
        INVALID_ARGUMENT + ":INVALID_ARGUMENT (bad name, count or setting)",
        DEADLINE_EXCEEDED + ":DEADLINE_EXCEEDED (see --deadline)",
        NOT_FOUND + ":NOT_FOUND (no such sequence, or a deleted one)",
        ALREADY_EXISTS + ":ALREADY_EXISTS (the name is taken)",
        PERMISSION_DENIED + ":PERMISSION_DENIED",
        FAILED_PRECONDITION + ":FAILED_PRECONDITION (advance to a floor at or above the max; reserve from a striped"
            + " sequence; a lower max, a field that cannot change, undelete of a live sequence)",
        ABORTED + ":ABORTED (--etag is not the current one: someone changed the sequence)",
        OUT_OF_RANGE + ":OUT_OF_RANGE (the sequence reached its max, or has fewer left than reserve asks for)",
        UNAVAILABLE + ":UNAVAILABLE (server or store unreachable)",
        UNAUTHENTICATED + ":UNAUTHENTICATED (see --token, --client-cert)",
        "10+n:any other gRPC status code n",
    };
  }
}
