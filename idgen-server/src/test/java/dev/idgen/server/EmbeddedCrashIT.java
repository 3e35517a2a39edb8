package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.SequenceAdminGrpc;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded store's promise, end to end: the server jar, {@code kill -9}'d while several callers stream
 * IDs from it and restarted on the same directory, never hands out an ID again, nor one at or below any
 * ID it handed out before the kill. Three kill/restart cycles.
 *
 * <p>Runs in failsafe's phase, after {@code package}: the shaded jar's path comes in the
 * {@code idgenServerJar} system property (see idgen-server/pom.xml).
 */
class EmbeddedCrashIT {

  private static final String SEQUENCE = "crash";
  private static final int CYCLES = 3;
  private static final int CALLERS = 4;
  /** IDs the callers receive, at least, before the kill: enough for many store reservations. */
  private static final int IDS_BEFORE_KILL = 20_000;

  @TempDir
  Path dir;

  private ServerProcess server;
  private ManagedChannel channel;
  private final ExecutorService callers = Executors.newFixedThreadPool(CALLERS);

  @AfterEach
  void cleanUp() throws InterruptedException {
    callers.shutdownNow();
    if (server != null) {
      server.close();
    }
  }

  @Test
  void should_never_reissue_an_id_after_kill_9_mid_stream_and_restart() throws Exception {
    Path data = Files.createDirectories(dir.resolve("data"));
    Set<Long> everyId = new HashSet<>();
    long highestBeforeKill = Long.MIN_VALUE;

    for (int cycle = 1; cycle <= CYCLES + 1; cycle++) {
      start(data, cycle);
      if (cycle == 1) {
        // Small blocks: many durable reservations per cycle, so the kill is likely to hit one mid-way.
        SequenceAdminGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
            .createSequence(CreateSequenceRequest.newBuilder()
                .setName(SEQUENCE).setNodeBlockSize(500).setDcBlockSize(500).build());
      }
      if (cycle == CYCLES + 1) {
        // After the last kill: one more restart, one more allocation.
        List<Long> ids = allocate(1_000);
        assertThat(Collections.min(ids)).isGreaterThan(highestBeforeKill);
        assertThat(ids).doesNotContainAnyElementsOf(everyId);
        break;
      }

      List<Long> received = allocateUntilKilled();

      assertThat(received).as("cycle %d received IDs", cycle).hasSizeGreaterThanOrEqualTo(IDS_BEFORE_KILL);
      assertThat(new HashSet<>(received)).as("cycle %d: no duplicate", cycle).hasSize(received.size());
      assertThat(Collections.min(received))
          .as("cycle %d: every ID is above the highest one handed out before the previous kill", cycle)
          .isGreaterThan(highestBeforeKill);
      for (long id : received) {
        assertThat(everyId.add(id)).as("ID %d handed out twice", id).isTrue();
      }
      highestBeforeKill = Math.max(highestBeforeKill, Collections.max(received));
    }
  }

  /** Callers stream IDs until enough arrived, then the server is killed under them (SIGKILL). */
  private List<Long> allocateUntilKilled() throws Exception {
    ConcurrentLinkedQueue<Long> received = new ConcurrentLinkedQueue<>();
    AtomicBoolean killed = new AtomicBoolean(); // set just before the kill: errors are expected from then on
    AtomicBoolean stop = new AtomicBoolean();
    List<Future<?>> running = new ArrayList<>();
    for (int i = 0; i < CALLERS; i++) {
      running.add(callers.submit(() -> {
        IdGenGrpc.IdGenBlockingStub stub = IdGenGrpc.newBlockingStub(channel);
        while (!stop.get()) {
          long count = ThreadLocalRandom.current().nextLong(1, 200);
          try {
            Iterator<IdRange> ranges = stub.withDeadlineAfter(10, TimeUnit.SECONDS).allocate(
                AllocateRequest.newBuilder().setSequence(SEQUENCE).setCount(count).build());
            while (ranges.hasNext()) {
              IdRange range = ranges.next();
              for (long k = 0; k < range.getCount(); k++) {
                received.add(range.getFirst() + k * range.getStride()); // recorded as it arrives
              }
            }
          } catch (StatusRuntimeException e) {
            if (!killed.get()) {
              throw e; // an error before the kill is a failure of its own
            }
          }
        }
        return null;
      }));
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (received.size() < IDS_BEFORE_KILL && System.nanoTime() < deadline && allRunning(running)) {
      Thread.sleep(10);
    }
    killed.set(true);
    server.kill(); // SIGKILL on Linux: no shutdown hook, no flush, mid-stream
    stop.set(true);
    for (Future<?> caller : running) {
      caller.get(30, TimeUnit.SECONDS); // rethrows a caller's failure
    }
    channel.shutdownNow();
    return new ArrayList<>(received);
  }

  private static boolean allRunning(List<Future<?>> running) {
    return running.stream().noneMatch(Future::isDone);
  }

  private List<Long> allocate(long count) {
    List<Long> ids = new ArrayList<>();
    Iterator<IdRange> ranges = IdGenGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
        .allocate(AllocateRequest.newBuilder().setSequence(SEQUENCE).setCount(count).build());
    ranges.forEachRemaining(range -> {
      for (long k = 0; k < range.getCount(); k++) {
        ids.add(range.getFirst() + k * range.getStride());
      }
    });
    assertThat(ids).hasSize((int) count);
    return ids;
  }

  private void start(Path data, int cycle) throws Exception {
    server = ServerProcess.start(dir, "server-" + cycle, List.of("idgen.embedded.dir=" + data));
    channel = server.channel();
  }
}
