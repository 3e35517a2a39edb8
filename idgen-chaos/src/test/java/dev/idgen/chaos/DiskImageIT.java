package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The disk soak's repair when another mount namespace was made while the image was mounted, as every
 * {@code ip netns exec} of a chaos run beside the soak makes one: that namespace's copy of the mount kept the
 * failed file system, and the repaired mount came back read-only (a recorded soak stopped on it, 2026-11-27).
 * Needs root (it mounts a loop device): otherwise skipped, saying why. Tagged {@code full}, as the soak.
 */
@Tag("full")
class DiskImageIT {
  @TempDir Path dir;

  @Test
  void should_repair_to_a_writable_file_system_though_another_namespace_copied_the_mount() throws Exception {
    String why = DiskImage.whyNot();
    assumeTrue(why == null, why);
    Path mountPoint = dir.resolve("mnt");
    try (DiskImage disk = DiskImage.create(dir.resolve("disk.img"), mountPoint, 8)) {
      Files.writeString(mountPoint.resolve("before"), "x", StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.SYNC); // on the disk before the error: the repair keeps it
      // A namespace made now copies the mount, as a Cassandra node or server started under `ip netns exec`.
      Process holder = new ProcessBuilder("unshare", "--mount", "sleep", "120").start();
      try {
        assertThat(holder.waitFor(1, TimeUnit.SECONDS)).as("the namespace holder runs").isFalse();
        disk.fail();
        assertThat(writable(mountPoint)).as("read-only after the error").isFalse();

        disk.repair();

        assertThat(writable(mountPoint)).as("writable after the repair").isTrue();
        assertThat(Files.readString(mountPoint.resolve("before"))).isEqualTo("x");
      } finally {
        holder.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  private static boolean writable(Path mountPoint) {
    try {
      Path probe = mountPoint.resolve("probe");
      Files.writeString(probe, "y");
      Files.delete(probe);
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }
}
