package dev.idgen.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.testing.DebianPackages;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * deploy/monitoring's alerting rules through Prometheus' own tool: {@code promtool check rules} (syntax, PromQL,
 * templates) and {@code promtool test rules} (the unit tests in deploy/monitoring/tests: each alert fires past
 * its threshold and stays silent inside it). promtool comes with Debian's {@code prometheus} package. Where it is
 * not installed, the test fetches that package itself ({@code apt-get download prometheus}, which needs no root,
 * then {@code dpkg-deb -x}) into ~/.cache/idgen-promtool, so that the README's test command runs promtool on a
 * new Debian machine too. Only a machine without apt, or whose apt cannot fetch the package, skips these two
 * tests, saying why; MonitoringNamesTest still checks every name against a live server there.
 */
class PromtoolTest {
  private static Path promtool;
  private static String fetchFailure = "";

  @BeforeAll
  static void findPromtool() {
    promtool = onPath("promtool").or(PromtoolTest::fromDebianPackage).orElse(null);
    if (promtool == null) {
      // Printed as well as reported as the skip reason: surefire's summary shows only a count of skipped tests.
      System.out.println("PromtoolTest: promtool is neither installed nor fetchable (" + fetchFailure + "):"
          + " promtool check rules and promtool test rules of deploy/monitoring are SKIPPED."
          + " Install it with: apt-get install prometheus");
    }
  }

  @Test
  void should_pass_promtool_check_rules() throws Exception {
    String out = promtool("check", "rules", MonitoringNamesTest.RULES.toString());

    assertThat(out).contains("SUCCESS");
  }

  @Test
  void should_pass_the_alerts_unit_tests_of_promtool_test_rules() throws Exception {
    List<String> args = new ArrayList<>(List.of("test", "rules"));
    try (Stream<Path> files = Files.list(MonitoringNamesTest.MONITORING.resolve("tests"))) {
      files.filter(p -> p.toString().endsWith(".yml")).sorted().map(Path::toString).forEach(args::add);
    }
    assertThat(args).hasSizeGreaterThan(2);

    String out = promtool(args.toArray(String[]::new));

    assertThat(out).contains("SUCCESS").doesNotContain("FAILED");
  }

  /** Runs promtool (at most a minute) and returns its output; fails the test unless it exits 0. */
  private static String promtool(String... args) throws IOException, InterruptedException {
    Assumptions.assumeTrue(promtool != null, "promtool is neither installed nor fetchable (" + fetchFailure
        + "): apt-get install prometheus (Debian) to check deploy/monitoring's rules");
    List<String> command = new ArrayList<>();
    command.add(promtool.toString());
    command.addAll(List.of(args));
    Result result = run(command, null);
    assertThat(result.exitCode()).as(String.join(" ", command) + " said:\n" + result.output()).isZero();
    return result.output();
  }

  /**
   * Debian's prometheus package, downloaded and unpacked into ~/.cache/idgen-promtool (about 20 MB, a few
   * seconds; {@link DebianPackages}), or empty with {@link #fetchFailure} saying why.
   */
  private static Optional<Path> fromDebianPackage() {
    try {
      Path unpacked = DebianPackages.unpacked("idgen-promtool", "usr/bin/promtool", List.of("prometheus"))
          .resolve("usr/bin/promtool");
      System.out.println("PromtoolTest: promtool is not installed; using " + unpacked + " from Debian's"
          + " prometheus package");
      return Optional.of(unpacked);
    } catch (RuntimeException e) {
      fetchFailure = e.getMessage();
      return Optional.empty();
    }
  }

  private record Result(int exitCode, String output) {}

  /** Runs a command for at most a minute in {@code dir} (null: the working directory), output and errors joined. */
  private static Result run(List<String> command, File dir) throws IOException, InterruptedException {
    Path log = Files.createTempFile("promtool", ".log");
    try {
      Process p = new ProcessBuilder(command).directory(dir).redirectErrorStream(true)
          .redirectOutput(log.toFile()).start();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(String.join(" ", command) + " did not finish within 60 s");
      }
      return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(log);
    }
  }

  private static Optional<Path> onPath(String name) {
    String path = System.getenv("PATH");
    if (path == null) {
      return Optional.empty();
    }
    for (String dir : path.split(File.pathSeparator)) {
      Path candidate = Path.of(dir.isEmpty() ? "." : dir, name);
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }
}
