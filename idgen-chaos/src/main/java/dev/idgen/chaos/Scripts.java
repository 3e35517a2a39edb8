package dev.idgen.chaos;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the launcher's scripts (cassandra.sh, netns.sh) and other short commands, each bounded in time. */
final class Scripts {
  private Scripts() {}

  /** A finished command: its exit status and its standard output. */
  record Result(int exit, String out) {
    boolean ok() {
      return exit == 0;
    }
  }

  /**
   * Runs {@code cmd}, its standard error to ours, and returns its exit status and standard output; kills it
   * after {@code timeoutSeconds}.
   */
  static Result run(List<String> cmd, long timeoutSeconds) throws IOException, InterruptedException {
    // The output goes to a file, not a pipe: a child that outlives the command (or hangs) cannot then keep a
    // read waiting past the timeout.
    Path out = Files.createTempFile("idgen-chaos-", ".out");
    try {
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT)
          .redirectOutput(out.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        throw new IOException(String.join(" ", cmd) + " did not finish in " + timeoutSeconds + " s");
      }
      return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /** {@link #run}, and its standard output, or an exception if it failed. */
  static String check(List<String> cmd, long timeoutSeconds) throws IOException, InterruptedException {
    Result r = run(cmd, timeoutSeconds);
    if (!r.ok()) {
      throw new IOException(String.join(" ", cmd) + " failed with exit status " + r.exit());
    }
    return r.out();
  }

  /**
   * Runs {@code cmd} with its output going to ours: for commands that start processes that outlive them (the
   * launcher's nodes must not hold a pipe we wait on).
   */
  static void inherit(List<String> cmd, long timeoutSeconds) throws IOException, InterruptedException {
    inherit(cmd, Map.of(), timeoutSeconds);
  }

  /** {@link #inherit(List, long)} with {@code env} added to the command's environment. */
  static void inherit(List<String> cmd, Map<String, String> env, long timeoutSeconds)
      throws IOException, InterruptedException {
    ProcessBuilder builder = new ProcessBuilder(cmd).inheritIO();
    builder.environment().putAll(env);
    Process p = builder.start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      throw new IOException(String.join(" ", cmd) + " did not finish in " + timeoutSeconds + " s");
    }
    if (p.exitValue() != 0) {
      throw new IOException(String.join(" ", cmd) + " failed with exit status " + p.exitValue());
    }
  }
}
