package dev.idgen.core.store.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.annotation.Nullable;

/**
 * Small real file systems for the disk-fault tests that run as root: a size-limited tmpfs (which fills up),
 * and ext4 on a loop device with {@code errors=remount-ro} (which the kernel turns read-only under the
 * store's open files, as after a disk error: a plain {@code mount -o remount,ro} is refused while a file is
 * open for writing). Every command is bounded in time; each mount is the test's own, under its temporary
 * directory.
 */
final class Mounts {

  private static final long TIMEOUT_SECONDS = 60;

  private Mounts() {}

  /** Why these tests cannot run here (not root), or null when they can. */
  @Nullable
  static String whyNot() {
    try {
      Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
      return Integer.valueOf(0).equals(uid) ? null
          : "not root (uid " + uid + "): cannot mount a small file system; EmbeddedDiskFaultTest covers the"
              + " same code through SQLite's page limit and query_only";
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return "no /proc/self to tell the user (" + e + "): not Linux, so no mounts";
    }
  }

  /** Mounts a tmpfs of {@code size} (as {@code mount -o size=} reads it: 4m, say) at a new directory. */
  static Path tmpfs(Path at, String size) throws IOException, InterruptedException {
    Files.createDirectories(at);
    run("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0755", "tmpfs", at.toString());
    return at;
  }

  /**
   * Makes an ext4 file system of {@code megabytes} in {@code image} and mounts it on a loop device at
   * {@code at}, remounted read-only by the kernel on an error. Returns the loop device's name (loop0, say).
   */
  static String ext4(Path image, Path at, int megabytes) throws IOException, InterruptedException {
    Files.createDirectories(at);
    run("truncate", "-s", megabytes + "M", image.toString());
    run("mkfs.ext4", "-q", "-F", image.toString());
    return mountExt4(image, at);
  }

  /** Mounts the ext4 image again (after {@link #fsck}), returning its loop device's name. */
  static String mountExt4(Path image, Path at) throws IOException, InterruptedException {
    run("mount", "-o", "loop,errors=remount-ro", image.toString(), at.toString());
    return Path.of(run("findmnt", "-n", "-o", "SOURCE", at.toString()).strip()).getFileName().toString();
  }

  /** What an ext4 error does to the file system mounted from {@code device}: it turns read-only at once. */
  static void failExt4(String device) throws IOException {
    Files.writeString(Path.of("/sys/fs/ext4", device, "trigger_fs_error"), "idgen disk-fault test\n");
  }

  /** Checks and repairs the unmounted image (replays its journal); exit codes 0 to 2 mean it is usable. */
  static void fsck(Path image) throws IOException, InterruptedException {
    Result r = exec("e2fsck", "-f", "-y", image.toString());
    if (r.exit() > 2) {
      throw new IOException("e2fsck exited with " + r.exit() + ": " + r.output());
    }
  }

  /** Unmounts {@code at}; lazily if it is busy, so that a failed test leaves no mount behind. */
  static void unmount(Path at) throws IOException, InterruptedException {
    Result r = exec("umount", at.toString());
    if (r.exit() != 0) {
      run("umount", "-l", at.toString());
    }
  }

  static boolean mounted(Path at) throws IOException, InterruptedException {
    return exec("mountpoint", "-q", at.toString()).exit() == 0;
  }

  /** Runs a command; its output, or an IOException with it when it fails. */
  static String run(String... command) throws IOException, InterruptedException {
    Result r = exec(command);
    if (r.exit() != 0) {
      throw new IOException(String.join(" ", command) + " exited with " + r.exit() + ": " + r.output());
    }
    return r.output();
  }

  record Result(int exit, String output) {}

  private static Result exec(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
    try (InputStream out = p.getInputStream()) {
      if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException(String.join(" ", command) + " did not finish in " + TIMEOUT_SECONDS + " s");
      }
      return new Result(p.exitValue(), new String(out.readAllBytes(), StandardCharsets.UTF_8));
    }
  }
}
