package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the clock faults rest on, checked on this machine with a child JVM under a {@link FakeClock}: its
 * {@code System.currentTimeMillis} follows the offset file (+10 min, -10 min, -500 ms, back) while its
 * {@code System.nanoTime} keeps the real pace, and its timed waits neither spin nor hang (a 200 ms {@code
 * Object.wait} loop takes 200 ms in one or a few wake-ups, not 0 ms, not 10 min, and not the hundreds of early
 * returns of libfaketime 0.9.10 or the 20 of its workaround). The shim is built here first (a C compiler);
 * skipped, saying why, where it cannot be. No Cassandra: a few seconds.
 */
class FakeClockIT {
  /**
   * The child: every 200 ms for 2 minutes at most, prints its wall clock minus its monotonic clock (ms), how
   * long a 200 ms wait loop took (ms), and how many times the wait returned in it.
   */
  private static final String CHILD = """
      public class Child {
        public static void main(String[] a) throws Exception {
          long n0 = System.nanoTime(), w0 = System.currentTimeMillis();
          Object o = new Object();
          for (int i = 0; i < 600; i++) {
            long t = System.nanoTime(), end = t + 200_000_000L;
            int wakeups = 0;
            synchronized (o) { for (long left; (left = end - System.nanoTime()) > 0; wakeups++) o.wait(Math.max(1, left / 1_000_000)); }
            long n = System.nanoTime();
            System.out.println(((System.currentTimeMillis() - w0) - (n - n0) / 1_000_000) + " " + (n - t) / 1_000_000 + " " + wakeups);
          }
        }
      }
      """;

  @Test
  void should_step_a_child_jvms_wall_clock_and_leave_its_monotonic_clock_and_waits_alone(@TempDir Path dir)
      throws Exception {
    assumeTrue(FakeClock.unavailable().isEmpty(), () -> "clock faults not injected: " + FakeClock.unavailable().get());
    Files.writeString(dir.resolve("Child.java"), CHILD);
    FakeClock clock = new FakeClock(FakeClock.library().orElseThrow(), dir.resolve("child.clock"));
    ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx64m", "-XX:TieredStopAtLevel=1", dir.resolve("Child.java").toString()).redirectErrorStream(true);
    pb.environment().putAll(clock.environment());
    Process child = pb.start();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      // Its first line: it took its reference readings on the real clock (it starts in a few seconds).
      String first = out.readLine();
      assertThat(first).as("the child's first line").isNotNull().matches("-?\\d+ \\d+ \\d+");
      assertThat(Math.abs(Long.parseLong(first.split(" ")[0]))).as("the child's first offset").isLessThanOrEqualTo(50);
      for (Duration offset : List.of(Duration.ofMinutes(10), Duration.ofMinutes(-10), Duration.ofMillis(-500),
          Duration.ZERO)) {
        clock.set(offset);
        // Read until the child's wall clock shows the offset (within 50 ms), at most 40 lines (8 s).
        long seen = Long.MAX_VALUE / 2;
        for (int i = 0; i < 40 && Math.abs(seen - offset.toMillis()) > 50; i++) {
          String line = out.readLine();
          assertThat(line).as("the child's output").isNotNull().matches("-?\\d+ \\d+ \\d+");
          String[] f = line.split(" ");
          seen = Long.parseLong(f[0]);
          // Its waits: 200 ms of monotonic time each, whatever the wall clock does.
          assertThat(Long.parseLong(f[1])).as("a 200 ms wait loop at offset %s", offset).isBetween(195L, 1_500L);
          // ... in one wake-up and at most a few spurious ones: nothing cuts the wait short.
          assertThat(Long.parseLong(f[2])).as("wake-ups of a 200 ms wait loop at offset %s", offset)
              .isBetween(1L, 5L);
        }
        assertThat(seen).as("the child's wall clock minus its monotonic clock after a step to %s", offset)
            .isBetween(offset.toMillis() - 50, offset.toMillis() + 50);
      }
    } finally {
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
    }
  }
}
