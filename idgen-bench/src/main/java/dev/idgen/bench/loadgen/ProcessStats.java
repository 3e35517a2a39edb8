package dev.idgen.bench.loadgen;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the load generator reads of the machine and of processes (Linux {@code /proc}); stateless. */
final class ProcessStats {
  private ProcessStats() {}

  /** The 1, 5 and 15 minute load averages, or "n/a". */
  static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).strip().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException e) {
      return "n/a";
    }
  }

  /** CPU time of this process (every thread, JIT and GC included). */
  static long ownCpuNanos() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : 0;
  }

  /** User + system CPU time of a process from /proc (clock ticks of 10 ms), or 0 if it cannot be read. */
  static long cpuNanos(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      // After "pid (comm) ": state is f[0], so utime (field 14) is f[11] and stime f[12].
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /** VmRSS of a process in KiB, or 0 if it cannot be read. */
  static long rssKb(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException | NumberFormatException e) {
      // gone, or not Linux
    }
    return 0;
  }
}
