package dev.idgen.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real MariaDB server for a test, the source database of {@code idgen import}: Debian's
 * {@code mariadb-server-core} package ({@link DebianPackages}, about 7 MB, into ~/.cache/idgen-mariadb), a data
 * directory of the caller's, loopback only, on a free port. It runs without grant tables
 * ({@code --skip-grant-tables}: any user name connects without a password), which is fine for a throwaway
 * server that listens on 127.0.0.1 only. Starting it takes about 3 s.
 *
 * <p>One test class owns one instance; {@link #close} stops it (SIGTERM, then SIGKILL after 20 s) and is safe to
 * call twice. A shutdown hook kills it if the JVM exits first; a JVM killed by SIGKILL leaves it running, so
 * its command line is printed for a person to find it. amd64 only (the library directory is named here).
 */
public final class MariaDb implements AutoCloseable {
  /** Debian 12's package, and the two libraries it needs that a minimal system lacks. */
  private static final List<String> PACKAGES = List.of("mariadb-server-core", "libaio1", "liburing2");
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private final Path dir;
  private final int port;
  private final Process process;

  private MariaDb(Path dir, int port, Process process) {
    this.dir = dir;
    this.port = port;
    this.process = process;
  }

  /**
   * Fetches MariaDB if needed, makes its system tables in {@code dir/data} and starts it; fails (never skips)
   * when any step fails, with the server's log.
   */
  public static MariaDb start(Path dir) {
    Path home = DebianPackages.unpacked("idgen-mariadb", "usr/sbin/mariadbd", PACKAGES);
    try {
      Path data = Files.createDirectories(dir.resolve("data"));
      List<String> base = new ArrayList<>(List.of(home.resolve("usr/sbin/mariadbd").toString(), "--no-defaults",
          "--basedir=" + home.resolve("usr"), "--lc-messages-dir=" + home.resolve("usr/share/mysql"),
          "--datadir=" + data, "--user=" + System.getProperty("user.name"), "--innodb-buffer-pool-size=32M"));
      bootstrap(home, dir, base);
      int port = freePort();
      List<String> command = new ArrayList<>(base);
      command.addAll(List.of("--skip-grant-tables", "--bind-address=127.0.0.1", "--port=" + port,
          "--socket=" + dir.resolve("mariadb.sock"), "--pid-file=" + dir.resolve("mariadb.pid"),
          "--log-error=" + dir.resolve("mariadb.log")));
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(dir.resolve("mariadb.out").toFile());
      builder.environment().put("LD_LIBRARY_PATH", libraries(home));
      System.out.println("[mariadb] " + String.join(" ", command));
      Process process = builder.start();
      Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly, "mariadb-stop"));
      MariaDb server = new MariaDb(dir, port, process);
      server.awaitReady();
      return server;
    } catch (IOException e) {
      throw new UncheckedIOException("could not start MariaDB in " + dir, e);
    }
  }

  /** {@code jdbc:mariadb://127.0.0.1:PORT/database} (user root, no password). */
  public String jdbcUrl(String database) {
    return "jdbc:mariadb://127.0.0.1:" + port + "/" + database + "?user=root";
  }

  public int port() {
    return port;
  }

  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }

  /** The system tables (what mariadb-install-db makes), by the server's bootstrap mode. */
  private static void bootstrap(Path home, Path dir, List<String> base) throws IOException {
    Path share = home.resolve("usr/share/mysql");
    StringBuilder sql = new StringBuilder("CREATE DATABASE IF NOT EXISTS mysql;\nuse mysql;\n");
    for (String file : List.of("mysql_system_tables.sql", "mysql_system_tables_data.sql")) {
      sql.append(Files.readString(share.resolve(file), StandardCharsets.UTF_8)).append('\n');
    }
    Path script = Files.writeString(dir.resolve("bootstrap.sql"), sql);
    List<String> command = new ArrayList<>(base);
    command.add("--bootstrap");
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectInput(script.toFile()).redirectOutput(dir.resolve("bootstrap.log").toFile());
    builder.environment().put("LD_LIBRARY_PATH", libraries(home));
    Process p = builder.start();
    try {
      if (!p.waitFor(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("MariaDB's bootstrap did not finish within " + START_TIMEOUT.toSeconds()
            + " s:\n" + tail(dir.resolve("bootstrap.log")));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
      throw new IllegalStateException("interrupted during MariaDB's bootstrap", e);
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException("MariaDB's bootstrap failed (exit status " + p.exitValue() + "):\n"
          + tail(dir.resolve("bootstrap.log")));
    }
  }

  private void awaitReady() {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("MariaDB exited with status " + process.exitValue() + " during its start:\n"
            + tail(dir.resolve("mariadb.log")) + tail(dir.resolve("mariadb.out")));
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 500);
        return;
      } catch (IOException notYet) {
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          close();
          throw new IllegalStateException("interrupted while MariaDB started", e);
        }
      }
    }
    close();
    throw new IllegalStateException("MariaDB did not listen on 127.0.0.1:" + port + " within "
        + START_TIMEOUT.toSeconds() + " s:\n" + tail(dir.resolve("mariadb.log")));
  }

  private static String libraries(Path home) {
    return home.resolve("usr/lib/x86_64-linux-gnu") + ":" + home.resolve("lib/x86_64-linux-gnu");
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size())) + "\n";
    } catch (IOException e) {
      return "(" + log + " unreadable: " + e + ")\n";
    }
  }
}
