package dev.idgen.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The project's local two-datacenter Cassandra, through {@code deploy/cassandra/cassandra.sh}: started and
 * stopped by the harness (or used as it runs), and its nodes paused with SIGSTOP and resumed with SIGCONT.
 * Every paused node is remembered until resumed, so that {@link #resumeAll()} (called in a {@code finally}
 * and in a shutdown hook) never leaves one frozen.
 */
final class CassandraCluster {
  private final Path script;
  private final Set<Long> paused = ConcurrentHashMap.newKeySet();

  CassandraCluster(Path repoRoot) {
    this.script = repoRoot.resolve("deploy/cassandra/cassandra.sh");
  }

  void start() throws IOException, InterruptedException {
    runInherited(List.of("start", "--topology", "two-dc"), 600);
  }

  void stop() throws IOException, InterruptedException {
    runInherited(List.of("stop"), 120);
  }

  long pid(String node) throws IOException, InterruptedException {
    return Long.parseLong(run(List.of("pid", node), 30).trim());
  }

  /** SIGSTOP: the node freezes (sockets open, no answers), as in a long GC pause or a hung VM. */
  void pause(long pid) throws IOException, InterruptedException {
    paused.add(pid);
    signal("-STOP", pid);
  }

  void resume(long pid) throws IOException, InterruptedException {
    signal("-CONT", pid);
    paused.remove(pid);
  }

  /** SIGCONT to every node this harness paused; safe to call any number of times. */
  void resumeAll() {
    for (Long pid : List.copyOf(paused)) {
      try {
        resume(pid);
      } catch (IOException | InterruptedException e) {
        System.err.println("chaos: could not SIGCONT cassandra pid " + pid + ": " + e);
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
