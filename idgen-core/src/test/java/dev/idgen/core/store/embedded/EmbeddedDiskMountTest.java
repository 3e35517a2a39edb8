package dev.idgen.core.store.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoreUnavailableException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Disk faults on real file systems, as root: a 4 MB tmpfs that fills up while sequences with small blocks
 * are reserved from, then is freed; ext4 on a loop device that the kernel turns read-only under the store,
 * then is repaired and mounted again. Skipped when not root ({@link Mounts#whyNot}); then
 * {@link EmbeddedDiskFaultTest} makes the same faults through SQLite.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class EmbeddedDiskMountTest {

  @TempDir
  Path dir;

  private Path mnt;
  private EmbeddedRangeStore store;
  private final Ledger ledger = new Ledger();

  @BeforeEach
  void root() {
    String why = Mounts.whyNot();
    assumeTrue(why == null, why);
    mnt = dir.resolve("mnt");
  }

  @AfterEach
  void unmount() throws Exception {
    if (store != null) {
      store.close();
    }
    if (mnt != null && Files.isDirectory(mnt) && Mounts.mounted(mnt)) {
      Mounts.unmount(mnt);
    }
  }

  @Test
  void should_fail_with_disk_full_on_a_full_tmpfs_and_serve_again_as_soon_as_space_is_freed() throws Exception {
    Mounts.tmpfs(mnt, "4m");
    Path data = mnt.resolve("data");
    Path file = data.resolve(EmbeddedRangeStore.FILE_NAME);
    store = EmbeddedRangeStore.open(data);
    List<SequenceDefinition> sequences = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      SequenceDefinition d = new SequenceDefinition("d" + i, 1, Long.MAX_VALUE, 2, 10, 1000);
      store.create(d);
      sequences.add(d);
      ledger.add(d.name(), store.reserve(d, 0, 10));
    }
    Path filler = mnt.resolve("filler");
    long filled = fill(filler);

    StoreUnavailableException full = null;
    int n = 0;
    for (; n < 20_000 && full == null; n++) {
      SequenceDefinition d = sequences.get(n % sequences.size());
      try {
        ledger.add(d.name(), store.reserve(d, n % 2, 10));
      } catch (StoreUnavailableException e) {
        full = e;
      }
    }
    assertThat(full).as("a reservation on a full tmpfs (filler of %d bytes, %d reservations)", filled, n)
        .isNotNull();
    assertThat(full).hasMessageContaining(file.toString()).hasMessageContaining("disk full")
        .hasMessageContaining("resumes by itself once space is freed");
    for (SequenceDefinition d : sequences) {
      assertThatThrownBy(() -> store.reserve(d, 1, 10)).isInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining("disk full");
    }

    Files.delete(filler); // space freed: the very next reservation succeeds
    for (SequenceDefinition d : sequences) {
      for (int stripe = 0; stripe < 2; stripe++) {
        IdRange r = store.reserve(d, stripe, 10);
        assertThat(r.first()).isGreaterThan(ledger.highest(d.name(), r));
        ledger.add(d.name(), r);
      }
    }
    store.close();
    store = EmbeddedRangeStore.open(data);
    for (SequenceDefinition d : sequences) {
      IdRange r = store.reserve(d, 0, 10);
      assertThat(r.first()).as("after a restart").isGreaterThan(ledger.highest(d.name(), r));
      ledger.add(d.name(), r);
    }
    ledger.assertNoIdTwice();
  }

  @Test
  void should_fail_with_read_only_when_the_kernel_turns_the_file_system_read_only_and_reissue_nothing_after()
      throws Exception {
    Path image = dir.resolve("ext4.img");
    String device = Mounts.ext4(image, mnt, 16);
    Path data = mnt.resolve("data");
    Path file = data.resolve(EmbeddedRangeStore.FILE_NAME);
    store = EmbeddedRangeStore.open(data);
    SequenceDefinition d = new SequenceDefinition("orders", 1, Long.MAX_VALUE, 1, 10, 1000);
    store.create(d);
    for (int i = 0; i < 50; i++) {
      ledger.add(d.name(), store.reserve(d, 0, 10));
    }

    Mounts.failExt4(device);

    for (int i = 0; i < 3; i++) {
      assertThatThrownBy(() -> store.reserve(d, 0, 10)).isInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining(file.toString()).hasMessageContaining("read-only")
          .hasMessageContaining("Read-only file system");
    }
    assertThatThrownBy(() -> EmbeddedRangeStore.open(data)).as("a start on the read-only file system")
        .isInstanceOf(StoreUnavailableException.class).hasMessageContaining(file.toString())
        .hasMessageContaining("read-only");

    // The disk is back: repaired and mounted again at the same place, under the running store.
    Mounts.unmount(mnt);
    Mounts.fsck(image);
    Mounts.mountExt4(image, mnt);

    IdRange after = store.reserve(d, 0, 10);
    assertThat(after.first()).as("nothing handed out twice").isGreaterThan(ledger.highest(d.name(), after));
    ledger.add(d.name(), after);
    store.close();
    store = EmbeddedRangeStore.open(data);
    IdRange restarted = store.reserve(d, 0, 10);
    assertThat(restarted.first()).isGreaterThan(ledger.highest(d.name(), restarted));
    ledger.add(d.name(), restarted);
    ledger.assertNoIdTwice();
  }

  /** Writes {@code file} until the file system has no space left; the bytes written. */
  static long fill(Path file) throws IOException {
    ByteBuffer chunk = ByteBuffer.allocate(16 * 1024);
    long written = 0;
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      for (int i = 0; i < 100_000; i++) { // bounded: 1.6 GB, far more than the small file systems here
        chunk.clear();
        try {
          while (chunk.hasRemaining()) {
            written += channel.write(chunk);
          }
        } catch (IOException e) {
          if (String.valueOf(e.getMessage()).contains("No space left")) {
            return written;
          }
          throw e;
        }
      }
    }
    throw new IOException("wrote " + written + " bytes to " + file + " and it is not full yet");
  }
}
