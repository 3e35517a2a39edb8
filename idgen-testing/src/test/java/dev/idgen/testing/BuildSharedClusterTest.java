package dev.idgen.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One cluster per build: which JVM is the build, and the launcher's watcher that stops the build's cluster
 * when it ends (on a run directory without nodes: what it stops is the launcher's own {@code stop}).
 */
class BuildSharedClusterTest {
  private static final Path SCRIPT = LauncherScript.locate().script();

  @Test
  void should_share_with_the_maven_jvm_that_runs_these_tests_only_when_asked() {
    String before = System.getProperty(LauncherCassandra.SHARE_PROPERTY);
    try {
      System.setProperty(LauncherCassandra.SHARE_PROPERTY, "jvm");
      assertThat(LauncherCassandra.buildToShareWith()).isEmpty();

      System.setProperty(LauncherCassandra.SHARE_PROPERTY, "build");
      OptionalLong build = LauncherCassandra.buildToShareWith();
      // Surefire forks this JVM from Maven's; in an IDE there is no Maven ancestor, and nothing to share.
      if (System.getProperty("surefire.real.class.path") != null) {
        assertThat(build).isPresent();
        assertThat(ProcessHandle.of(build.getAsLong()).orElseThrow().info().arguments().map(Arrays::asList)
            .orElseThrow()).contains(LauncherCassandra.MAVEN_MAIN);
        assertThat(build.getAsLong()).isNotEqualTo(ProcessHandle.current().pid());
      } else {
        assertThat(build).isEmpty();
      }
    } finally {
      if (before == null) {
        System.clearProperty(LauncherCassandra.SHARE_PROPERTY);
      } else {
        System.setProperty(LauncherCassandra.SHARE_PROPERTY, before);
      }
    }
  }

  @Test
  void should_stop_the_builds_cluster_when_the_build_ends_and_leave_another_builds_alone(@TempDir Path base)
      throws Exception {
    Path other = Files.createDirectories(base.resolve("other"));
    Path mine = Files.createDirectories(base.resolve("mine"));
    Process build = new ProcessBuilder("sleep", "60").start();
    try {
      String token = token(build.pid());
      for (Path dir : List.of(mine, other)) {
        Files.writeString(dir.resolve("topology"), "two-dc\n");
        Files.writeString(dir.resolve("members"), "dc1\ndc2\n");
      }
      Files.writeString(mine.resolve("build"), token + "\n");
      Files.writeString(other.resolve("build"), "1:1\n"); // the cluster of some other build
      Process watchMine = watcher(token, mine);
      Process watchOther = watcher(token, other);

      assertThat(watchMine.waitFor(1500, TimeUnit.MILLISECONDS)).as("waits while the build runs").isFalse();
      build.destroy();

      assertThat(watchMine.waitFor(30, TimeUnit.SECONDS)).as("ends once the build has ended").isTrue();
      assertThat(watchOther.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(mine.resolve("build")).doesNotExist();
      assertThat(new String(watchMine.getInputStream().readAllBytes())).contains("stopped the cluster of build " + token);
      assertThat(other.resolve("build")).hasContent("1:1");
    } finally {
      build.destroyForcibly();
    }
  }

  /** The launcher's process_token: "pid:start time in clock ticks" (field 22 of /proc/PID/stat). */
  private static String token(long pid) throws Exception {
    String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    String[] fields = stat.substring(stat.lastIndexOf(") ") + 2).split(" ");
    return pid + ":" + fields[19];
  }

  private static Process watcher(String token, Path base) throws Exception {
    return new ProcessBuilder("bash", SCRIPT.toString(), "stop-after-build", token, "--base-dir", base.toString())
        .redirectErrorStream(true).start();
  }
}
