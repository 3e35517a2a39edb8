package dev.idgen.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Debian packages that a test fetches for itself, so that the README's test command runs on a new Debian
 * machine where they are not installed: {@code apt-get download} (no root needed: it writes into its working
 * directory) and {@code dpkg-deb -x} into a directory under {@code ~/.cache}, kept between runs. Nothing is
 * installed and no package script runs: callers point the unpacked binaries at the unpacked libraries.
 *
 * <p>Two JVMs fetching the same packages at once each unpack into a directory of their own and rename it into
 * place; the first rename wins and the other copy is deleted, so a reader sees a whole tree or none.
 */
public final class DebianPackages {
  private static final Duration FETCH_TIMEOUT = Duration.ofMinutes(3);

  private DebianPackages() {}

  /**
   * The directory {@code ~/.cache/cacheName} holding {@code packages} unpacked, fetched first unless
   * {@code marker} (a path inside it, e.g. {@code usr/sbin/mariadbd}) is there already.
   *
   * @throws IllegalStateException saying why, when apt-get or dpkg-deb is missing or a package cannot be fetched
   */
  public static Path unpacked(String cacheName, String marker, List<String> packages) {
    Path root = Path.of(System.getProperty("user.home"), ".cache", cacheName);
    if (Files.exists(root.resolve(marker))) {
      return root;
    }
    for (String tool : List.of("apt-get", "dpkg-deb")) {
      if (!onPath(tool)) {
        throw new IllegalStateException("cannot fetch Debian packages " + packages + ": no " + tool + " on the"
            + " PATH (install them yourself, e.g. apt-get install " + String.join(" ", packages) + ")");
      }
    }
    try {
      Files.createDirectories(root.getParent());
      Path scratch = Files.createTempDirectory(root.getParent(), cacheName + "-fetch-");
      try {
        Path debs = Files.createDirectories(scratch.resolve("debs"));
        List<String> command = new ArrayList<>(List.of("apt-get", "download", "-q"));
        command.addAll(packages);
        Processes.Result fetched = Processes.run(command, debs, FETCH_TIMEOUT, false);
        if (!fetched.ok()) {
          throw new IllegalStateException(String.join(" ", command) + " failed (exit status " + fetched.exitStatus()
              + "): " + fetched.output().strip());
        }
        Path tree = scratch.resolve("tree");
        try (Stream<Path> files = Files.list(debs)) {
          for (Path deb : files.filter(f -> f.toString().endsWith(".deb")).sorted().toList()) {
            Processes.run(List.of("dpkg-deb", "-x", deb.toString(), tree.toString()), FETCH_TIMEOUT, false)
                .orThrow();
          }
        }
        if (!Files.exists(tree.resolve(marker))) {
          throw new IllegalStateException("the packages " + packages + " hold no " + marker);
        }
        if (Files.exists(root) && !Files.exists(root.resolve(marker))) {
          deleteTree(root); // an unpack of other packages, or of an older layout: replaced whole
        }
        try {
          Files.move(tree, root, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException lostTheRace) {
          if (!Files.exists(root.resolve(marker))) {
            throw lostTheRace;
          }
        }
        System.out.println("[debian-packages] fetched " + String.join(" ", packages) + " into " + root);
        return root;
      } finally {
        deleteTree(scratch);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not fetch Debian packages " + packages + " into " + root, e);
    }
  }

  private static boolean onPath(String name) {
    String path = System.getenv("PATH");
    if (path == null) {
      return false;
    }
    for (String dir : path.split(java.io.File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir.isEmpty() ? "." : dir, name))) {
        return true;
      }
    }
    return false;
  }

  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
