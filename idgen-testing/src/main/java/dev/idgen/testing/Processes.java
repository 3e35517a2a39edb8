package dev.idgen.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs short commands (bash, kill) and collects their output. */
final class Processes {
  private Processes() {}

  /** The outcome of a finished command: exit status and output (stdout and stderr together). */
  record Result(List<String> command, int exitStatus, String output) {
    boolean ok() {
      return exitStatus == 0;
    }

    /** Throws, with the output, unless the command succeeded. */
    Result orThrow() {
      if (!ok()) {
        throw new IllegalStateException(String.join(" ", command) + " failed with exit status " + exitStatus
            + (output.isBlank() ? "" : ":\n" + output.strip()));
      }
      return this;
    }
  }

  /**
   * Runs {@code command} and waits up to {@code timeout}. With {@code echo}, every output line is also
   * printed to System.out as it comes (the launcher's progress while it fetches and starts). Processes
   * that it starts and that outlive it must not keep its output open (the launcher's nodes do not).
   */
  static Result run(List<String> command, Duration timeout, boolean echo) {
    return run(command, null, timeout, echo);
  }

  /** {@link #run(List, Duration, boolean)} in directory {@code dir} (null: the working directory). */
  static Result run(List<String> command, java.nio.file.Path dir, Duration timeout, boolean echo) {
    Process p;
    try {
      p = new ProcessBuilder(command).directory(dir == null ? null : dir.toFile()).redirectErrorStream(true)
          .redirectInput(ProcessBuilder.Redirect.PIPE).start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not run " + String.join(" ", command), e);
    }
    try {
      p.getOutputStream().close();
    } catch (IOException ignored) {
      // nothing to tell it anyway
    }
    StringBuilder out = new StringBuilder();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          synchronized (out) {
            out.append(line).append('\n');
          }
          if (echo) {
            System.out.println(line);
          }
        }
      } catch (IOException e) {
        synchronized (out) {
          out.append("(output unreadable: ").append(e).append(")\n");
        }
      }
    }, "idgen-testing-output");
    reader.setDaemon(true);
    reader.start();
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        reader.join(2_000);
        throw new IllegalStateException(String.join(" ", command) + " did not finish within " + timeout.toSeconds()
            + " s; output so far:\n" + snapshot(out));
      }
      reader.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
      throw new IllegalStateException(String.join(" ", command) + " interrupted", e);
    }
    return new Result(List.copyOf(command), p.exitValue(), snapshot(out));
  }

  static Result run(Duration timeout, String... command) {
    return run(new ArrayList<>(List.of(command)), timeout, false);
  }

  private static String snapshot(StringBuilder out) {
    synchronized (out) {
      return out.toString();
    }
  }
}
