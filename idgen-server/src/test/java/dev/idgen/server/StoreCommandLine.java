package dev.idgen.server;

import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/**
 * The server jar's command line as the store commands' tests run it: {@link Main}'s picocli commands in this JVM,
 * their output and errors kept for the assertions (cleared at every {@link #run}). Not thread-safe: one per test.
 */
final class StoreCommandLine {
  final StringWriter out = new StringWriter();
  final StringWriter err = new StringWriter();

  /** Runs {@code java -jar idgen-server-all.jar ARGS} and returns its exit code. */
  int run(String... args) {
    out.getBuffer().setLength(0);
    err.getBuffer().setLength(0);
    return new CommandLine(new Main())
        .setOut(new PrintWriter(out, true))
        .setErr(new PrintWriter(err, true))
        .execute(args);
  }
}
