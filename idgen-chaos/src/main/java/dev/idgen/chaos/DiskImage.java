package dev.idgen.chaos;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

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

  /** What an operator does after {@link #fail}: unmount, check and repair (replay the journal), mount again. */
  void repair() throws IOException, InterruptedException {
    unmount();
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
    for (int i = 0; i < 2 && Scripts.run(List.of("mountpoint", "-q", mountPoint.toString()), TIMEOUT_SECONDS).ok(); i++) {
      unmount();
    }
    Files.deleteIfExists(image);
  }
}
