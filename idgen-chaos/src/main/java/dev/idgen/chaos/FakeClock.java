package dev.idgen.chaos;

import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
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
 * One process's wall clock, faked: the process is started with {@link #environment()} (an {@code LD_PRELOAD}
 * of idgen's wall-clock shim, {@code wallclock.c} beside this class, and an offset file of its own), and
 * {@link #set} writes an offset from the real time into that file, which the process re-reads every second.
 * Only the real-time clock moves ({@code System.currentTimeMillis}, {@code Instant.now}); the monotonic clock
 * ({@code System.nanoTime}) and every sleep and timed wait stay the kernel's, as on a machine whose wall clock
 * NTP or an operator steps.
 *
 * <p>Why a shim of our own and not libfaketime, measured with Debian 12's libfaketime 0.9.10 and OpenJDK 17:
 * 0.9.10 ends every timed wait on a monotonic condition variable at once when the monotonic clock is not
 * faked ({@code Object.wait(200)} returns after 0 ms: the JVM spins), and its workaround ({@code
 * FAKETIME_WAIT_MS}) caps every timed wait at a few milliseconds. An idle embedded server under it used 2.22 s
 * of CPU a minute against 0.27 s without it, and a faked Cassandra node far more (load averages of 70 on 2
 * cores in the membership runs). Under the shim the same server used 0.26 s: it intercepts no wait at all.
 *
 * <p>The shim is built from its source with the machine's C compiler ({@code cc}) on first use, into
 * {@code ~/.cache/idgen-wallclock} under the hash of its source; {@code -Didgen.chaos.wallclock-lib=PATH} names
 * a built one instead. Without a compiler the clock faults are skipped, saying why.
 *
 * <p>Threads: {@link #set} replaces the file by a rename, so the process never reads half an offset; calls
 * from several threads are safe (the last rename wins) but the harness makes them from its fault thread.
 * {@link #library} builds at most once per JVM (synchronized).
 */
final class FakeClock {
  /** System property: a built shim's path (default: built from {@code wallclock.c} on first use). */
  static final String LIBRARY_PROPERTY = "idgen.chaos.wallclock-lib";
  /** The variable that names the offset file to the shim. */
  static final String FILE_VARIABLE = "IDGEN_WALLCLOCK_FILE";
  /** How often the process re-reads its offset (seconds): a step takes effect within this. */
  static final int CACHE_SECONDS = 1;
  private static final String SOURCE = "wallclock.c";
  private static final long BUILD_TIMEOUT_SECONDS = 120;
  private static final Pattern OFFSET = Pattern.compile("([+-])(\\d+)(ms|s|m|min|h)");

  /** The shim built by this JVM, or why it could not be (null: not tried yet). Guarded by the class. */
  private static Optional<Path> built;
  private static String whyNotBuilt;

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

  /** The shim: the one configured, or the one built here (building it the first time); empty if neither. */
  static synchronized Optional<Path> library() {
    String configured = System.getProperty(LIBRARY_PROPERTY, "").trim();
    if (!configured.isEmpty()) {
      Path p = Path.of(configured);
      return Files.isReadable(p) ? Optional.of(p) : Optional.empty();
    }
    if (built == null) {
      try {
        built = Optional.of(build());
      } catch (IOException e) {
        whyNotBuilt = e.getMessage();
        built = Optional.empty();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return Optional.empty(); // not remembered: a later call may build it
      }
    }
    return built;
  }

  /**
   * Why clocks cannot be faked here, or empty if they can: the reason a run prints when it skips the clock
   * faults, as it does for network faults without nftables.
   */
  static synchronized Optional<String> unavailable() {
    if (library().isPresent()) {
      return Optional.empty();
    }
    String configured = System.getProperty(LIBRARY_PROPERTY, "").trim();
    return Optional.of(configured.isEmpty()
        ? "the wall-clock shim could not be built: "
            + (whyNotBuilt == null ? "its build was interrupted" : whyNotBuilt)
        : "-D" + LIBRARY_PROPERTY + "=" + configured + " is not a readable file");
  }

  /** Compiles {@code wallclock.c} into the cache, unless a build of the same source is there already. */
  private static Path build() throws IOException, InterruptedException {
    byte[] source;
    try (InputStream in = FakeClock.class.getResourceAsStream(SOURCE)) {
      if (in == null) {
        throw new IOException(SOURCE + " is missing from the classpath");
      }
      source = in.readAllBytes();
    }
    Path dir = Path.of(System.getProperty("user.home"), ".cache", "idgen-wallclock");
    Path lib = dir.resolve("wallclock-" + Fleet.sha256(new ByteArrayInputStream(source)).substring(0, 16) + ".so");
    if (Files.isReadable(lib)) {
      return lib;
    }
    Path cc = compiler().orElseThrow(() -> new IOException(
        "no C compiler (cc or gcc) on the PATH; Debian: apt-get install gcc"));
    Files.createDirectories(dir);
    Path src = Files.createTempFile(dir, "wallclock-", ".c");
    Path tmp = Files.createTempFile(dir, "wallclock-", ".so.tmp");
    try {
      Files.write(src, source);
      Scripts.Result r = Scripts.run(List.of(cc.toString(), "-shared", "-fPIC", "-O2", "-o", tmp.toString(),
          src.toString(), "-ldl"), BUILD_TIMEOUT_SECONDS);
      if (!r.ok()) {
        throw new IOException(cc + " failed on " + SOURCE + " with exit status " + r.exit()
            + " (its messages are on standard error)");
      }
      // A rename: a concurrent build (another JVM) leaves one whole library, never half of one.
      Files.move(tmp, lib, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      return lib;
    } finally {
      Files.deleteIfExists(src);
      Files.deleteIfExists(tmp);
    }
  }

  private static Optional<Path> compiler() {
    for (String name : List.of("cc", "gcc")) {
      for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
        Path p = Path.of(dir.isEmpty() ? "." : dir, name);
        if (Files.isExecutable(p)) {
          return Optional.of(p);
        }
      }
    }
    return Optional.empty();
  }

  /** The variables a process must be started with so that this clock is its wall clock. */
  Map<String, String> environment() {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("LD_PRELOAD", library.toString());
    env.put(FILE_VARIABLE, file.toString());
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

  /** The shim's offset: signed seconds with up to three decimals, e.g. {@code +600}, {@code -0.5}. */
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
