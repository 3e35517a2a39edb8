package dev.idgen.bench.scaling;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Percentiles from h2load's per-request logs: files merged, the warm-up left out. */
class H2loadPercentilesTest {

  @TempDir
  Path dir;

  @Test
  void should_merge_the_files_and_leave_out_requests_started_before_the_window() throws Exception {
    // start (µs since the epoch), HTTP status, duration (µs); durations below 2,048 µs are exact in the histogram
    Files.writeString(dir.resolve("a.log"), "1000000000\t200\t900000\n2000000000\t200\t1000\n");
    Files.writeString(dir.resolve("b.log"), "2000000100\t200\t1800\n2000000200\t503\t1200\n");

    StringWriter out = new StringWriter();
    int code = new CommandLine(new H2loadPercentiles()).setOut(new PrintWriter(out)).execute(
        "--from-epoch-ms", "1500000", dir.resolve("a.log").toString(), dir.resolve("b.log").toString());

    assertThat(code).isZero();
    assertThat(out.toString().strip())
        .isEqualTo("count=3 p50_ms=1.200 p99_ms=1.800 p999_ms=1.800 max_ms=1.800 non200=1");
  }
}
