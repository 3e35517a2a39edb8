package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FakeClockTest {
  @Test
  void should_write_offsets_as_the_shim_reads_them() {
    assertThat(FakeClock.format(Duration.ZERO)).isEqualTo("+0");
    assertThat(FakeClock.format(Duration.ofMinutes(10))).isEqualTo("+600");
    assertThat(FakeClock.format(Duration.ofMinutes(-10))).isEqualTo("-600");
    assertThat(FakeClock.format(Duration.ofMillis(500))).isEqualTo("+0.500");
    assertThat(FakeClock.format(Duration.ofMillis(-1500))).isEqualTo("-1.500");
  }

  @Test
  void should_parse_a_signed_offset_with_its_unit_and_reject_one_without() {
    assertThat(FakeClock.parse("+600s")).isEqualTo(Duration.ofMinutes(10));
    assertThat(FakeClock.parse("-500ms")).isEqualTo(Duration.ofMillis(-500));
    assertThat(FakeClock.parse("+10m")).isEqualTo(Duration.ofMinutes(10));
    assertThat(FakeClock.parse("-1h")).isEqualTo(Duration.ofHours(-1));
    assertThatThrownBy(() -> FakeClock.parse("600")).hasMessageContaining("expected a sign, a number and a unit");
  }

  @Test
  void should_replace_the_offset_file_whole_and_name_it_in_the_environment(@TempDir Path dir) throws Exception {
    FakeClock clock = new FakeClock(Path.of("/lib/wallclock.so"), dir.resolve("c/s1"));
    assertThat(Files.readString(dir.resolve("c/s1"))).isEqualTo("+0\n");
    new ClockFault("server s1", clock, Duration.ofMillis(-500)).inject();
    assertThat(Files.readString(dir.resolve("c/s1"))).isEqualTo("-0.500\n");
    assertThat(clock.offset()).isEqualTo(Duration.ofMillis(-500));
    new ClockFault("server s1", clock, Duration.ofMillis(-500)).heal();
    assertThat(Files.readString(dir.resolve("c/s1"))).isEqualTo("+0\n");
    assertThat(clock.environment()).containsOnly(Map.entry("LD_PRELOAD", "/lib/wallclock.so"),
        Map.entry(FakeClock.FILE_VARIABLE, dir.resolve("c/s1").toAbsolutePath().toString()));
  }
}
