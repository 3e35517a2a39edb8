package dev.idgen.server;

import static dev.idgen.server.TestServer.count;
import static dev.idgen.server.TestServer.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.inject.CreationException;
import com.google.inject.ProvisionException;
import com.google.inject.spi.Message;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.store.embedded.EmbeddedRangeStore;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The production store module under the in-process server: durable across a clean restart, and disk faults. */
class EmbeddedStoreServerTest {

  @TempDir
  Path dir;

  @Test
  void should_continue_above_every_id_handed_out_after_a_restart_on_the_same_directory() {
    List<Long> before;
    try (TestServer server = TestServer.startEmbedded(dir)) {
      server.create("orders");
      before = ids(server.allocate("orders", 25));
    }

    try (TestServer restarted = TestServer.startEmbedded(dir)) {
      List<Long> after = ids(restarted.allocate("orders", 25));

      assertThat(count(restarted.allocate("orders", 1))).isEqualTo(1);
      assertThat(Collections.min(after)).isGreaterThan(Collections.max(before));
      assertThat(Collections.min(after)).as("a graceful stop gave its reserve back: no gap")
          .isEqualTo(Collections.max(before) + 1);
      assertThat(restarted.admin().getSequence(GetSequenceRequest.newBuilder().setName("orders").build())
          .getName()).isEqualTo("orders");
    }
  }

  @Test
  void should_refuse_to_start_on_a_file_with_damaged_pages_naming_the_file_and_the_check() throws Exception {
    try (EmbeddedRangeStore store = EmbeddedRangeStore.open(dir)) {
      for (int i = 0; i < 200; i++) {
        store.create(new SequenceDefinition("orders-" + i, 1, Long.MAX_VALUE, 4, 100, 10_000));
      }
    }
    Path file = dir.toAbsolutePath().resolve("idgen.db");
    Random random = new Random(7);
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      byte[] garbage = new byte[512];
      for (long at = 8192; at + garbage.length <= f.length(); at += 8192) { // 512 bytes every 8 KB
        random.nextBytes(garbage);
        f.seek(at);
        f.write(garbage);
      }
    }

    assertThat(startFailure(dir)).contains(file.toString()).contains("damaged").contains("PRAGMA quick_check");
  }

  @Test
  void should_refuse_to_start_on_a_file_that_is_not_a_store_with_the_stores_message_first() throws Exception {
    Files.writeString(dir.resolve("idgen.db"), "not a database\n".repeat(500));

    assertThat(startFailure(dir)).contains(dir.toAbsolutePath().resolve("idgen.db").toString())
        .contains("not an idgen store");
  }

  /** What Main logs when the server cannot start on {@code data}: the root cause of the failed provider. */
  private static String startFailure(Path data) {
    Throwable failure = catchThrowable(() -> TestServer.startEmbedded(data).close());
    assertThat(failure).as("the start").isInstanceOfAny(ProvisionException.class, CreationException.class);
    Collection<Message> messages = failure instanceof ProvisionException p ? p.getErrorMessages()
        : ((CreationException) failure).getErrorMessages();
    Throwable cause = messages.iterator().next().getCause();
    while (cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause.getMessage();
  }

  /**
   * The data directory on a 4 MB tmpfs that fills up while 5 sequences with small blocks are allocated:
   * calls fail UNAVAILABLE saying the disk is full, and the server serves again by itself once space is freed.
   * As root only (it mounts); idgen-core's EmbeddedDiskFaultTest covers the store's side without root.
   */
  @Test
  @Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void should_fail_unavailable_saying_disk_full_and_serve_again_once_space_is_freed() throws Exception {
    Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    assumeTrue(Integer.valueOf(0).equals(uid), () -> "not root (uid " + uid + "): cannot mount a small tmpfs");
    Path mnt = Files.createDirectory(dir.resolve("mnt"));
    run("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt.toString());
    try {
      Path data = mnt.resolve("data");
      Map<String, List<Long>> handedOut = new HashMap<>();
      List<String> sequences = List.of("d1", "d2", "d3", "d4", "d5");
      try (TestServer server = TestServer.startEmbedded(data)) {
        for (String name : sequences) {
          server.admin().createSequence(CreateSequenceRequest.newBuilder().setName(name)
              .setNodeBlockSize(10).setDcBlockSize(1000).build());
          record(handedOut, name, server.allocate(name, 5));
        }
        Path filler = mnt.resolve("filler");
        fill(filler);

        StatusRuntimeException full = null;
        for (int n = 0; n < 20_000 && full == null; n++) {
          String name = sequences.get(n % sequences.size());
          List<IdRange> received = new ArrayList<>();
          try {
            server.allocate(name, 5, received);
          } catch (StatusRuntimeException e) {
            full = e;
          }
          record(handedOut, name, received);
        }

        assertThat(full).as("a call once the disk is full").isNotNull();
        assertThat(full.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(full.getStatus().getDescription()).contains("disk full")
            .contains(data.resolve("idgen.db").toString());
        assertThat(server.health("")).as("it still serves what it holds: see docs/operations.md")
            .isEqualTo(ServingStatus.SERVING);

        Files.delete(filler);
        long freed = System.nanoTime();
        int attempts = 0;
        boolean served = false;
        while (!served && attempts < 1_000 && System.nanoTime() - freed < TimeUnit.SECONDS.toNanos(10)) {
          attempts++;
          String name = sequences.get(attempts % sequences.size());
          List<IdRange> received = new ArrayList<>();
          try {
            server.allocate(name, 5, received);
            served = true;
          } catch (StatusRuntimeException e) {
            assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
          }
          record(handedOut, name, received);
        }
        assertThat(served).as("served again within 10 s of space coming back (%d attempts)", attempts).isTrue();
        for (String name : sequences) {
          record(handedOut, name, server.allocate(name, 50));
        }
      }
      try (TestServer restarted = TestServer.startEmbedded(data)) {
        for (String name : sequences) {
          record(handedOut, name, restarted.allocate(name, 50));
        }
      }
      for (String name : sequences) {
        assertThat(handedOut.get(name)).as("IDs of %s handed out", name).hasSizeGreaterThanOrEqualTo(105)
            .doesNotHaveDuplicates();
      }
    } finally {
      if (run("umount", mnt.toString()) != 0) {
        run("umount", "-l", mnt.toString());
      }
    }
  }

  private static void record(Map<String, List<Long>> handedOut, String sequence, List<IdRange> ranges) {
    handedOut.computeIfAbsent(sequence, s -> new ArrayList<>()).addAll(ids(ranges));
  }

  /** Writes {@code file} until the file system has no space left. */
  private static void fill(Path file) throws IOException {
    ByteBuffer chunk = ByteBuffer.allocate(16 * 1024);
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      for (int i = 0; i < 100_000; i++) { // bounded: far more than the 4 MB file system holds
        chunk.clear();
        try {
          while (chunk.hasRemaining()) {
            channel.write(chunk);
          }
        } catch (IOException e) {
          if (String.valueOf(e.getMessage()).contains("No space left")) {
            return;
          }
          throw e;
        }
      }
    }
    throw new IOException(file + " never filled its file system");
  }

  /** Runs a command, bounded in time; its exit code, or an exception if it did not finish. */
  private static int run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException(String.join(" ", command) + " did not finish in 60 s");
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.exitValue() != 0 && command[0].equals("mount")) {
      throw new IOException(String.join(" ", command) + " exited with " + p.exitValue() + ": " + out);
    }
    return p.exitValue();
  }
}
