package dev.idgen.testing;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link Backend#LAUNCHER}: {@code cassandra.sh start --topology two-dc} (Cassandra 5.0.9 from Maven Central,
 * one JVM per node, 127.0.0.1 = dc1 and 127.0.0.2 = dc2, CQL port 9042, run directory
 * {@code $IDGEN_CASSANDRA_HOME/run}, default {@code ~/.cache/idgen-cassandra/run}), {@code cassandra.sh stop}
 * at the end. Pause and resume are SIGSTOP and SIGCONT of a node's JVM.
 */
final class LauncherCassandra extends AbstractTestCassandra {
  /** Seconds the launcher waits for both nodes to serve CQL and see each other (its {@code --timeout}). */
  static final String TIMEOUT_PROPERTY = "idgen.it.cassandra.timeout";

  private final Path script;
  /** The launcher's run directory ({@code IDGEN_CASSANDRA_BASE_DIR} of {@code cassandra.sh env}). */
  private Path baseDir;
  private volatile boolean started;

  private LauncherCassandra(Path script) {
    this.script = script;
  }

  /** Starts the cluster and waits for it; on failure, stops whatever it launched and throws. */
  static LauncherCassandra start(Path script) {
    LauncherCassandra c = new LauncherCassandra(script);
    long timeout = Long.getLong(TIMEOUT_PROPERTY, 180);
    List<String> cmd = c.command("start", "--topology", "two-dc", "--timeout", Long.toString(timeout));
    // The first run also fetches cassandra-all (about a minute): allow for it on top of the start.
    Processes.Result r = Processes.run(cmd, Duration.ofSeconds(timeout + 600), true);
    if (!r.ok()) {
      throw new IllegalStateException(String.join(" ", cmd) + " failed with exit status " + r.exitStatus()
          + " (its output is above)" + lastLines(r.output(), 6));
    }
    c.started = true;
    try {
      String points = null;
      for (String line : Processes.run(c.command("env"), Duration.ofSeconds(30), false).orThrow().output().split("\n")) {
        if (line.startsWith("IDGEN_CASSANDRA_CONTACT_POINTS=")) {
          points = line.substring(line.indexOf('=') + 1).trim();
        } else if (line.startsWith("IDGEN_CASSANDRA_BASE_DIR=")) {
          c.baseDir = Path.of(line.substring(line.indexOf('=') + 1).trim());
        }
      }
      String[] each = points == null ? new String[0] : points.split(",");
      if (each.length != 2) {
        throw new IllegalStateException(script + " env: expected two contact points, got " + points);
      }
      c.contactPoints(each[0], each[1]);
      for (String dc : c.datacenters()) {
        c.pid(dc, pidOf(script, dc));
      }
      return c;
    } catch (RuntimeException e) {
      c.close();
      throw e;
    }
  }

  /** The pid that {@code cassandra.sh pid dc} prints (the launcher's default run directory). */
  static long pidOf(Path script, String dc) {
    String out = Processes.run(List.of("bash", script.toString(), "pid", dc), Duration.ofSeconds(30), false)
        .orThrow().output().strip();
    String[] lines = out.split("\n");
    return Long.parseLong(lines[lines.length - 1].strip());
  }

  static void signal(String signal, long pid) {
    Processes.run(Duration.ofSeconds(10), "kill", signal, Long.toString(pid)).orThrow();
  }

  @Override
  public Backend backend() {
    return Backend.LAUNCHER;
  }

  @Override
  protected void doPause(String dc) {
    signal("-STOP", requirePid(dc));
  }

  @Override
  protected void doResume(String dc) {
    signal("-CONT", requirePid(dc));
  }

  private long requirePid(String dc) {
    return pid(dc).orElseThrow(() -> new IllegalStateException("no pid for " + dc + ": Cassandra is not started"));
  }

  @Override
  public String nodetool(String dc, String... args) {
    List<String> cmd = command("nodetool", dc);
    cmd.addAll(List.of(args));
    Processes.Result r = Processes.run(cmd, Duration.ofMinutes(3), false);
    if (!r.ok()) {
      throw new IllegalStateException(String.join(" ", cmd) + " failed with exit status " + r.exitStatus() + ":\n"
          + r.output());
    }
    return r.output();
  }

  @Override
  public Path dataDirectory(String dc) {
    if (baseDir == null) {
      throw new IllegalStateException(script + " env printed no IDGEN_CASSANDRA_BASE_DIR");
    }
    // cassandra.sh writes data_file_directories: $base/$node/data/data; a node is named after its datacenter.
    return baseDir.resolve(dc).resolve("data").resolve("data");
  }

  @Override
  public String describe() {
    return super.describe() + ", " + script;
  }

  @Override
  public synchronized void close() {
    if (!started) {
      return;
    }
    started = false;
    resumeAll();
    // stop sends SIGCONT then SIGKILL to both nodes, and waits until their ports are free.
    Processes.Result r = Processes.run(command("stop"), Duration.ofMinutes(2), false);
    if (!r.ok()) {
      System.err.println("[idgen-testing] " + script + " stop failed (exit " + r.exitStatus() + "):\n" + r.output());
    }
  }

  private List<String> command(String... args) {
    List<String> cmd = new ArrayList<>(List.of("bash", script.toString()));
    cmd.addAll(List.of(args));
    return cmd;
  }

  private static String lastLines(String output, int n) {
    String[] lines = output.strip().split("\n");
    if (lines.length == 0 || output.isBlank()) {
      return "";
    }
    StringBuilder sb = new StringBuilder(":");
    for (int i = Math.max(0, lines.length - n); i < lines.length; i++) {
      sb.append("\n  ").append(lines[i]);
    }
    return sb.toString();
  }
}
