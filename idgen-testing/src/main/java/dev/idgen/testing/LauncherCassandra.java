package dev.idgen.testing;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * {@link Backend#LAUNCHER}: {@code cassandra.sh start --topology two-dc} (Cassandra 5.0.9 from Maven Central,
 * one JVM per node, 127.0.0.1 = dc1 and 127.0.0.2 = dc2, CQL port 9042, run directory
 * {@code $IDGEN_CASSANDRA_HOME/run}, default {@code ~/.cache/idgen-cassandra/run}), {@code cassandra.sh stop}
 * at the end. Pause and resume are SIGSTOP and SIGCONT of a node's JVM.
 *
 * <p><b>One cluster per build.</b> With system property {@value #SHARE_PROPERTY} = {@code build} (the root
 * pom's failsafe configuration sets it) and a Maven JVM among this JVM's ancestors, the cluster is started
 * {@code --for-build} that JVM: the first module's integration tests start it, the next modules' reuse it
 * (each test in keyspaces of its own), and the launcher's watcher stops it when the build ends. A start
 * costs 20-40 s on 2 cores; three modules of the test command use the cluster. Closing the handle then only
 * resumes the nodes it paused. Without a Maven ancestor (an IDE) the cluster is this JVM's, as before.
 */
final class LauncherCassandra extends AbstractTestCassandra {
  /** Seconds the launcher waits for both nodes to serve CQL and see each other (its {@code --timeout}). */
  static final String TIMEOUT_PROPERTY = "idgen.it.cassandra.timeout";
  /** {@code build}: share the cluster with the rest of the Maven build; anything else: this JVM's own. */
  static final String SHARE_PROPERTY = "idgen.it.cassandra.share";
  /** The main class of a Maven JVM (plexus-classworlds' launcher, as {@code mvn} and the wrapper run it). */
  static final String MAVEN_MAIN = "org.codehaus.plexus.classworlds.launcher.Launcher";

  private final Path script;
  /** The launcher's run directory ({@code IDGEN_CASSANDRA_BASE_DIR} of {@code cassandra.sh env}). */
  private Path baseDir;
  private volatile boolean started;
  /** The Maven JVM whose build shares the cluster (it outlives this handle), or empty: the cluster is ours. */
  private final OptionalLong build;

  private LauncherCassandra(Path script, OptionalLong build) {
    this.script = script;
    this.build = build;
  }

  /**
   * The Maven JVM to share the cluster with: the nearest ancestor of this JVM that runs {@link #MAVEN_MAIN},
   * when {@value #SHARE_PROPERTY} is {@code build}.
   */
  static OptionalLong buildToShareWith() {
    if (!"build".equals(System.getProperty(SHARE_PROPERTY, ""))) {
      return OptionalLong.empty();
    }
    Optional<ProcessHandle> p = ProcessHandle.current().parent();
    for (int depth = 0; p.isPresent() && depth < 8; depth++, p = p.get().parent()) {
      ProcessHandle.Info info = p.get().info();
      if (info.arguments().map(args -> Arrays.asList(args).contains(MAVEN_MAIN)).orElse(false)) {
        return OptionalLong.of(p.get().pid());
      }
    }
    return OptionalLong.empty();
  }

  /** Starts the cluster (or reuses the build's) and waits for it; on failure, stops what it launched and throws. */
  static LauncherCassandra start(Path script) {
    LauncherCassandra c = new LauncherCassandra(script, buildToShareWith());
    long timeout = Long.getLong(TIMEOUT_PROPERTY, 180);
    List<String> cmd = c.command("start", "--topology", "two-dc", "--timeout", Long.toString(timeout));
    c.build.ifPresent(pid -> cmd.addAll(List.of("--for-build", Long.toString(pid))));
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
    return super.describe() + ", " + script
        + (build.isPresent() ? ", shared with the build (Maven pid " + build.getAsLong() + ")" : "");
  }

  /** True when the cluster belongs to the build, which stops it at its end: {@link #close} leaves it running. */
  boolean sharedWithBuild() {
    return build.isPresent();
  }

  @Override
  public synchronized void close() {
    if (!started) {
      return;
    }
    started = false;
    resumeAll();
    if (build.isPresent()) {
      return; // the build's: its next module reuses it, and the launcher's watcher stops it when the build ends
    }
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
