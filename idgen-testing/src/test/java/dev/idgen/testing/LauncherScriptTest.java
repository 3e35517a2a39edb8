package dev.idgen.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the extension finds cassandra.sh; and where an external cluster is. */
class LauncherScriptTest {
  private static final Map<String, String> NONE = Map.of();

  @Test
  void should_use_the_configured_script(@TempDir Path dir) throws Exception {
    Path script = Files.writeString(dir.resolve("cassandra.sh"), "#!/bin/bash\n");

    LauncherScript.Located l = LauncherScript.locate(Map.of(LauncherScript.PROPERTY, script.toString())::get,
        NONE::get, dir);

    assertThat(l.script()).isEqualTo(script);
    assertThat(l.how()).isEqualTo("system property idgen.it.cassandra.launcher");
  }

  @Test
  void should_fail_when_the_configured_script_is_missing(@TempDir Path dir) {
    assertThatThrownBy(() -> LauncherScript.locate(NONE::get,
        Map.of(LauncherScript.ENV, dir.resolve("nope.sh").toString())::get, dir))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("environment variable IDGEN_IT_CASSANDRA_LAUNCHER names");
  }

  @Test
  void should_find_the_checkouts_script_above_the_working_directory() {
    // Surefire runs in idgen-testing/: the checkout's copy is ../idgen-testing/cassandra/cassandra.sh.
    LauncherScript.Located l = LauncherScript.locate(NONE::get, NONE::get, Path.of("").toAbsolutePath());

    assertThat(l.script()).endsWith(Path.of("idgen-testing", "cassandra", "cassandra.sh"));
    assertThat(l.how()).isEqualTo("found above the working directory");
  }

  @Test
  void should_extract_the_packaged_copy_when_there_is_no_checkout(@TempDir Path dir) throws Exception {
    LauncherScript.Located l = LauncherScript.locate(NONE::get, NONE::get, dir);

    assertThat(l.how()).isEqualTo("extracted from idgen-testing's jar");
    assertThat(Files.readString(l.script())).startsWith("#!/usr/bin/env bash").contains("cassandra-all");
    assertThat(l.script().resolveSibling("pom.xml")).exists();
    assertThat(l.script().resolveSibling("netns.sh")).exists();
  }

  @Test
  void should_read_external_contact_points_from_properties_then_environment_then_defaults() {
    Map<String, String> props = Map.of("idgen.it.cassandra.dc1", "10.0.0.1:9042");
    Map<String, String> env = Map.of("IDGEN_IT_CASSANDRA_DC1", "10.9.9.9:9042", "IDGEN_IT_CASSANDRA_DC2", "10.0.0.2:9142");

    assertThat(ExternalCassandra.contactPointSetting(props::get, env::get, "dc1", "x")).isEqualTo("10.0.0.1:9042");
    assertThat(ExternalCassandra.contactPointSetting(props::get, env::get, "dc2", "x")).isEqualTo("10.0.0.2:9142");
    assertThat(ExternalCassandra.contactPointSetting(NONE::get, NONE::get, "dc2", "127.0.0.2:9042"))
        .isEqualTo("127.0.0.2:9042");
  }
}
