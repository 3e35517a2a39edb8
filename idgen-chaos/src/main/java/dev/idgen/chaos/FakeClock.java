package dev.idgen.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One process's wall clock, faked with libfaketime: the process is started with {@link #environment()} (an
 * {@code LD_PRELOAD} of the library and a timestamp file of its own), and {@link #set} writes an offset from
 * the real time into that file, which the process re-reads every second. Only {@code CLOCK_REALTIME} moves
 * ({@code System.currentTimeMillis}, {@code Instant.now}); the monotonic clock ({@code System.nanoTime})
 * does not, as on a machine whose wall clock NTP or an operator steps.
 *
 * <p>What this needs, measured with Debian 12's libfaketime 0.9.10 and OpenJDK 17: the offset file is re-read
 * at most every {@code FAKETIME_CACHE_DURATION} seconds ({@code FAKETIME_NO_CACHE=1} re-reads it at every
 * clock read: 139 µs per {@code currentTimeMillis}, against 1.4 µs cached and 0.2 µs without the library);
 * {@code FAKETIME_DONT_FAKE_MONOTONIC=1} keeps {@code nanoTime} real; and {@code FAKETIME_WAIT_MS} with
 * {@code FAKETIME_FORCE_MONOTONIC_FIX=1} works around a bug of 0.9.10 (fixed upstream in 2025) that ends every
 * timed wait on a monotonic condition variable at once when the monotonic clock is not faked:
 * {@code Object.wait(200)} and {@code LockSupport.parkNanos} then return after 0 ms and the JVM spins. With the
 * workaround every timed wait lasts at most 10 ms, a spurious wake-up that the JDK's waits loop over.
 *
 * <p>Threads: {@link #set} replaces the file by a rename, so the process never reads half an offset; calls
 * from several threads are safe (the last rename wins) but the harness makes them from its fault thread.
 */
final class FakeClock {
  /** System property: the library's path (default: the first of {@link #CANDIDATES} that exists). */
  static final String LIBRARY_PROPERTY = "idgen.chaos.faketime-lib";
  /** Where Debian, Fedora and a source build put it. */
  static final List<Path> CANDIDATES = List.of(
      Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"),
      Path.of("/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"),
      Path.of("/usr/lib64/faketime/libfaketime.so.1"),
      Path.of("/usr/lib/faketime/libfaketime.so.1"),
      Path.of("/usr/local/lib/faketime/libfaketime.so.1"));
  /** How often the process re-reads its offset (seconds): a step takes effect within this. */
  static final int CACHE_SECONDS = 1;
  /** The longest a timed wait of the faked process lasts (see the class comment). */
  static final int WAIT_MS = 10;
  private static final Pattern OFFSET = Pattern.compile("([+-])(\\d+)(ms|s|m|min|h)");

  private final Path library;
  private final Path file;
  private volatile Duration offset = Duration.ZERO;

  /** A clock whose offset lives in {@code file} (created with offset 0). */
  FakeClock(Path library, Path file) throws IOException {
    this.library = library;
    this.file = file.toAbsolutePath();
    Files.createDirectories(this.file.getParent());
    set(Duration.ZERO);
  }

  /** The library, or empty if it is not installed. */
  static Optional<Path> library() {
    String configured = System.getProperty(LIBRARY_PROPERTY, "").trim();
    if (!configured.isEmpty()) {
      Path p = Path.of(configured);
      return Files.isReadable(p) ? Optional.of(p) : Optional.empty();
    }
    return CANDIDATES.stream().filter(Files::isReadable).findFirst();
  }

  /**
   * Why clocks cannot be faked here, or empty if they can: the reason a run prints when it skips the clock
   * faults, as it does for network faults without nftables.
   */
  static Optional<String> unavailable() {
    if (library().isPresent()) {
      return Optional.empty();
    }
    String configured = System.getProperty(LIBRARY_PROPERTY, "").trim();
    return Optional.of(configured.isEmpty()
        ? "libfaketime is not installed (none of " + CANDIDATES + "; Debian: apt-get install libfaketime)"
        : "-D" + LIBRARY_PROPERTY + "=" + configured + " is not a readable file");
  }

  /** The variables a process must be started with so that this clock is its wall clock. */
  Map<String, String> environment() {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("LD_PRELOAD", library.toString());
    env.put("FAKETIME_TIMESTAMP_FILE", file.toString());
    env.put("FAKETIME_CACHE_DURATION", Integer.toString(CACHE_SECONDS));
    env.put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    env.put("FAKETIME_FORCE_MONOTONIC_FIX", "1");
    env.put("FAKETIME_WAIT_MS", Integer.toString(WAIT_MS));
    return env;
  }

  Path file() {
    return file;
  }

  /** The offset last set: how far the process's wall clock is from the real one (once it re-read it). */
  Duration offset() {
    return offset;
  }

  /**
   * Sets the process's wall clock to the real one plus {@code offset} (not cumulative: {@code set(ZERO)} puts
   * it back). The process sees it within {@link #CACHE_SECONDS}.
   */
  void set(Duration offset) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(tmp, format(offset) + "\n", StandardCharsets.US_ASCII);
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    this.offset = offset;
  }

  /** libfaketime's relative offset: signed seconds with up to three decimals, e.g. {@code +600}, {@code -0.5}. */
  static String format(Duration offset) {
    long millis = offset.toMillis();
    String sign = millis < 0 ? "-" : "+";
    long abs = Math.abs(millis);
    return abs % 1000 == 0 ? sign + abs / 1000 : String.format("%s%d.%03d", sign, abs / 1000, abs % 1000);
  }

  /** Parses {@code +600s}, {@code -500ms}, {@code +10m} (minutes), {@code -1h}. */
  static Duration parse(String text) {
    Matcher m = OFFSET.matcher(text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("clock offset '" + text + "': expected a sign, a number and a unit,"
          + " e.g. +600s, -500ms, +10m");
    }
    long n = Long.parseLong(m.group(2));
    Duration d = switch (m.group(3)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m", "min" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> throw new IllegalStateException(m.group(3));
    };
    return m.group(1).equals("-") ? d.negated() : d;
  }

  @Override
  public String toString() {
    return "fake clock " + format(offset) + " s (" + file + ")";
  }
}
