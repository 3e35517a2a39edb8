package dev.idgen.chaos;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The disk under the disk soak's embedded store: an ext4 file system in an image file, on a loop device,
 * mounted with {@code errors=remount-ro}. Real faults of a real file system, made the way they happen:
 * filled up by another file ({@link #fill}), turned read-only by the kernel after an error ({@link #fail}:
 * a plain {@code mount -o remount,ro} is refused while a file is open for writing), repaired by an
 * operator ({@link #repair}: unmount, {@code e2fsck}, mount). Needs root. Every command is bounded in time.
 * Not thread-safe: the soak's fault thread alone uses it.
 */
final class DiskImage implements AutoCloseable {
  private static final long TIMEOUT_SECONDS = 60;
  /** What {@link #fill} writes at a time: small enough that the last write leaves nothing worth a page. */
  private static final int CHUNK = 64 << 10;

  private final Path image;
  private final Path mountPoint;
  private String device;

  private DiskImage(Path image, Path mountPoint) {
    this.image = image;
    this.mountPoint = mountPoint;
  }

  /** Makes an ext4 file system of {@code megabytes} in {@code image} and mounts it at {@code mountPoint}. */
  static DiskImage create(Path image, Path mountPoint, int megabytes) throws IOException, InterruptedException {
    Files.createDirectories(mountPoint);
    Files.deleteIfExists(image);
    Scripts.check(List.of("truncate", "-s", megabytes + "M", image.toString()), TIMEOUT_SECONDS);
    Scripts.check(List.of("mkfs.ext4", "-q", "-F", image.toString()), TIMEOUT_SECONDS);
    // The mount point made a private mount of its own first: a mount made under a shared one propagates to
    // every mount namespace of the machine (those of `ip netns exec`, say), where it outlives our unmount and
    // keeps the file system, read-only after an error, alive under the next mount of the same image.
    Scripts.check(List.of("mount", "--bind", mountPoint.toString(), mountPoint.toString()), TIMEOUT_SECONDS);
    Scripts.check(List.of("mount", "--make-private", mountPoint.toString()), TIMEOUT_SECONDS);
    DiskImage disk = new DiskImage(image, mountPoint);
    try {
      disk.mount();
    } catch (IOException | RuntimeException e) {
      disk.unmount(); // the private mount
      throw e;
    }
    return disk;
  }

  /** Why the soak cannot run here, or null: it mounts file systems. */
  static String whyNot() {
    if (!"root".equals(System.getProperty("user.name"))) {
      return "the disk soak mounts a file system on a loop device: run it as root";
    }
    for (String tool : List.of("mkfs.ext4", "e2fsck", "mount", "umount", "findmnt")) {
      if (List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin").stream().noneMatch(d -> Files.isExecutable(Path.of(d, tool)))) {
        return tool + " is not installed (Debian: e2fsprogs, mount, util-linux)";
      }
    }
    return null;
  }

  Path mountPoint() {
    return mountPoint;
  }

  /**
   * Writes {@code ballast} until the file system is full (the write that finds no space ends it); returns
   * the bytes written. Bounded by the image's size.
   */
  long fill(Path ballast) throws IOException {
    byte[] chunk = new byte[CHUNK];
    long written = 0;
    try (OutputStream out = Files.newOutputStream(ballast)) {
      while (true) {
        out.write(chunk);
        written += chunk.length;
      }
    } catch (IOException full) {
      if (!String.valueOf(full.getMessage()).contains("No space left")) {
        throw full;
      }
      return written;
    }
  }

  /** The kernel's reaction to an ext4 error: the file system turns read-only under every open file. */
  void fail() throws IOException {
    Files.writeString(Path.of("/sys/fs/ext4", device, "trigger_fs_error"), "idgen disk soak\n");
  }

  /**
   * What an operator does after {@link #fail}: unmount, check and repair (replay the journal), mount again;
   * then a file written proves the file system writable.
   */
  void repair() throws IOException, InterruptedException {
    String failed = device;
    unmount();
    unmountCopies(failed);
    Scripts.Result r = Scripts.run(List.of("e2fsck", "-f", "-y", image.toString()), TIMEOUT_SECONDS);
    if (r.exit() > 2) { // 1 and 2: errors corrected
      throw new IOException("e2fsck " + image + " exited with " + r.exit() + ": " + r.out());
    }
    mount();
    String options = Scripts.check(List.of("findmnt", "-n", "-o", "OPTIONS", mountPoint.toString()), TIMEOUT_SECONDS);
    String[] lines = options.strip().split("\n");
    if (!lines[lines.length - 1].startsWith("rw")) {
      throw new IOException(image + " is still mounted read-only after e2fsck: " + options.strip());
    }
    // The options say rw even when the kernel kept the failed file system (emergency_ro) under the new mount.
    Path probe = mountPoint.resolve(".repaired");
    try {
      Files.writeString(probe, "ok");
      Files.delete(probe);
    } catch (IOException e) {
      throw new IOException(image + " cannot be written after e2fsck and a new mount (" + e.getMessage()
          + "); is it still mounted in another mount namespace?", e);
    }
  }

  /**
   * Unmounts {@code loop} at the mount point in every other mount namespace. A namespace made while the image
   * was mounted (every {@code ip netns exec}: a Cassandra node or a server of a chaos run beside the soak)
   * holds a copy of the mount, private or not, and that copy keeps the failed file system alive: the next
   * mount of the same image gets it back, read-only. Called once ours is unmounted, so no namespace made
   * from now on copies it. Returns how many copies it removed.
   */
  int unmountCopies(String loop) throws IOException, InterruptedException {
    String ours = namespaceOf("self");
    Set<String> seen = new HashSet<>();
    int removed = 0;
    try (var procs = Files.list(Path.of("/proc"))) {
      for (Path proc : procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
        String pid = proc.getFileName().toString();
        String ns = namespaceOf(pid);
        if (ns == null || ns.equals(ours) || !seen.add(ns)) {
          continue;
        }
        long copies;
        try {
          copies = Files.readAllLines(proc.resolve("mountinfo")).stream().filter(l -> isCopy(l, loop)).count();
        } catch (IOException gone) {
          continue; // the process ended
        }
        for (long i = 0; i < copies; i++) {
          if (Scripts.run(List.of("nsenter", "-t", pid, "-m", "umount", "-l", mountPoint.toString()),
              TIMEOUT_SECONDS).ok()) {
            removed++;
          }
        }
      }
    }
    return removed;
  }

  /** Whether a line of {@code /proc/PID/mountinfo} is {@code /dev/<loop>} mounted at the mount point. */
  private boolean isCopy(String mountinfo, String loop) {
    String[] fields = mountinfo.split(" ");
    int dash = mountinfo.indexOf(" - ");
    if (fields.length < 5 || dash < 0) {
      return false;
    }
    String[] after = mountinfo.substring(dash + 3).split(" ");
    return fields[4].equals(mountPoint.toString()) && after.length > 1 && after[1].equals("/dev/" + loop);
  }

  private static String namespaceOf(String pid) {
    try {
      return Files.readSymbolicLink(Path.of("/proc", pid, "ns", "mnt")).toString();
    } catch (IOException e) {
      return null; // ended, or not ours to read
    }
  }

  private void mount() throws IOException, InterruptedException {
    Scripts.check(List.of("mount", "-o", "loop,errors=remount-ro", image.toString(), mountPoint.toString()),
        TIMEOUT_SECONDS);
    String[] sources = Scripts.check(List.of("findmnt", "-n", "-o", "SOURCE", mountPoint.toString()), TIMEOUT_SECONDS)
        .strip().split("\n");
    device = Path.of(sources[sources.length - 1].strip()).getFileName().toString(); // the top mount: the image
    if (!device.startsWith("loop")) {
      throw new IOException("the image " + image + " is not the top mount of " + mountPoint + ": " + device);
    }
  }

  private void unmount() throws IOException, InterruptedException {
    if (!Scripts.run(List.of("umount", mountPoint.toString()), TIMEOUT_SECONDS).ok()) {
      Scripts.check(List.of("umount", "-l", mountPoint.toString()), TIMEOUT_SECONDS);
    }
  }

  /** Unmounts the image and the private mount under it (lazily if something still holds a file there), deletes the image. */
  @Override
  public void close() throws IOException, InterruptedException {
    String loop = device;
    for (int i = 0; i < 2 && Scripts.run(List.of("mountpoint", "-q", mountPoint.toString()), TIMEOUT_SECONDS).ok(); i++) {
      unmount();
    }
    if (loop != null) {
      unmountCopies(loop); // else the loop device outlives the run, attached to a deleted image
    }
    Files.deleteIfExists(image);
  }
}
