package dev.idgen.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The project's local two-datacenter Cassandra, through the launcher
 * {@code idgen-testing/cassandra/cassandra.sh} of the checkout: started and stopped by the harness (or used
 * as it runs), its nodes at 127.0.0.1 (dc1) and 127.0.0.2 (dc2), paused with SIGSTOP and resumed with
 * SIGCONT. Every paused node is remembered until resumed, so that {@link #resumeAll()} (called in a
 * {@code finally} and in a shutdown hook) never leaves one frozen.
 */
final class CassandraCluster implements ChaosCassandra {
  static final String SCRIPT = "idgen-testing/cassandra/cassandra.sh";

  private final Path script;
  private final Map<String, Long> paused = new ConcurrentHashMap<>();

  CassandraCluster(Path repoRoot) {
    this.script = repoRoot.resolve(SCRIPT);
  }

  void start() throws IOException, InterruptedException {
    runInherited(List.of("start", "--topology", "two-dc"), 600);
  }

  void stop() throws IOException, InterruptedException {
    runInherited(List.of("stop"), 120);
  }

  @Override
  public String contactPoint(String dc) {
    return switch (dc) {
      case "dc1" -> "127.0.0.1:9042";
      case "dc2" -> "127.0.0.2:9042";
      default -> throw new IllegalArgumentException("unknown datacenter " + dc);
    };
  }

  long pid(String node) throws IOException, InterruptedException {
    return Long.parseLong(run(List.of("pid", node), 30).trim());
  }

  @Override
  public String describe(String dc) throws IOException, InterruptedException {
    return "pid=" + pid(dc);
  }

  /** SIGSTOP: the node freezes (sockets open, no answers), as in a long GC pause or a hung VM. */
  @Override
  public void pause(String dc) throws IOException, InterruptedException {
    long pid = pid(dc);
    paused.put(dc, pid);
    signal("-STOP", pid);
  }

  @Override
  public void resume(String dc) throws IOException, InterruptedException {
    Long pid = paused.get(dc);
    if (pid != null) {
      signal("-CONT", pid);
      paused.remove(dc);
    }
  }

  /** SIGCONT to every node this harness paused; safe to call any number of times. */
  @Override
  public void resumeAll() {
    for (String dc : List.copyOf(paused.keySet())) {
      try {
        resume(dc);
      } catch (IOException | InterruptedException e) {
        System.err.println("chaos: could not SIGCONT cassandra " + dc + ": " + e);
      }
    }
  }

  private static void signal(String signal, long pid) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("kill", signal, Long.toString(pid)).inheritIO().start();
    if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException("kill " + signal + " " + pid + " failed");
    }
  }

  /** Output to ours: the nodes that {@code start} launches must not hold a pipe we wait on. */
  private void runInherited(List<String> args, long timeoutSeconds) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("bash", script.toString()));
    cmd.addAll(args);
    Process p = new ProcessBuilder(cmd).inheritIO().start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("cassandra.sh " + args + " did not finish in " + timeoutSeconds + " s");
    }
    if (p.exitValue() != 0) {
      throw new IOException("cassandra.sh " + args + " failed with exit status " + p.exitValue());
    }
  }

  private String run(List<String> args, long timeoutSeconds) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("bash", script.toString()));
    cmd.addAll(args);
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("cassandra.sh " + args + " did not finish in " + timeoutSeconds + " s");
    }
    if (p.exitValue() != 0) {
      throw new IOException("cassandra.sh " + args + " failed with exit status " + p.exitValue());
    }
    return new String(out, StandardCharsets.UTF_8);
  }
}
