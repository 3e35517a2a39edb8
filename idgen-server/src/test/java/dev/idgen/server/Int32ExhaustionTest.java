package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdRange;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 32-bit sequences ({@code max = 2147483647}) allocated right up to the end through the server on the
 * embedded store: every remaining ID at most once, then OUT_OF_RANGE, never an ID above max.
 */
class Int32ExhaustionTest {
  private static final long INT32_MAX = 2_147_483_647L;

  @TempDir
  Path dir;

  @Test
  void should_hand_out_every_remaining_id_once_then_out_of_range_from_concurrent_callers() throws Exception {
    long start = INT32_MAX - 29_999;
    IssuedIds issued = new IssuedIds(start, INT32_MAX, 3);
    List<Status> endings;
    try (TestServer server = TestServer.startEmbedded(dir)) {
      server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("legacy32").setStart(start)
          .setMax(INT32_MAX).setStripes(3).setNodeBlockSize(700).build());

      endings = allocateToTheEnd(server, issued, 4, 20250610L);

      StatusRuntimeException after = TestServer.failure(() -> server.allocate("legacy32", 1));
      assertThat(after.getStatus().getCode()).isEqualTo(Status.Code.OUT_OF_RANGE);
      assertThat(after.getStatus().getDescription()).contains("legacy32").contains("2147483647");
    }

    assertThat(endings).hasSize(4).allSatisfy(s -> assertThat(s.getCode()).isEqualTo(Status.Code.OUT_OF_RANGE));
    assertThat(issued.outOfBounds()).isZero();
    assertThat(issued.duplicates()).isZero();
    assertThat(issued.distinct()).isEqualTo(issued.space()); // every ID of the space, none lost without a crash
  }

  @Test
  void should_never_pass_max_nor_repeat_an_id_across_a_restart_near_the_end() {
    long start = INT32_MAX - 9_999;
    IssuedIds issued = new IssuedIds(start, INT32_MAX, 1);
    try (TestServer server = TestServer.startEmbedded(dir)) {
      server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("legacy32").setStart(start)
          .setMax(INT32_MAX).setNodeBlockSize(1_000).build());
      issued.addAll(server.allocate("legacy32", 4_321));
    }
    try (TestServer restarted = TestServer.startEmbedded(dir)) {
      Random random = new Random(7);
      StatusRuntimeException end = null;
      for (int i = 0; i < 10_000 && end == null; i++) {
        List<IdRange> received = new ArrayList<>();
        try {
          restarted.allocate("legacy32", 1 + random.nextInt(900), received);
        } catch (StatusRuntimeException e) {
          end = e;
        }
        issued.addAll(received);
      }
      assertThat(end).isNotNull();
      assertThat(end.getStatus().getCode()).isEqualTo(Status.Code.OUT_OF_RANGE);
    }

    assertThat(issued.outOfBounds()).isZero();
    assertThat(issued.duplicates()).isZero();
    // The restart abandons at most the one block the first server held in memory: a gap, never a repeat.
    assertThat(issued.distinct()).isBetween(issued.space() - 1_000, issued.space());
  }

  @Test
  void should_refuse_a_count_larger_than_what_is_left_after_streaming_what_is_left() {
    IssuedIds issued = new IssuedIds(INT32_MAX - 99, INT32_MAX, 1);
    try (TestServer server = TestServer.startEmbedded(dir)) {
      server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("last100")
          .setStart(INT32_MAX - 99).setMax(INT32_MAX).build());
      List<IdRange> received = new ArrayList<>();

      StatusRuntimeException error = TestServer.failure(() -> server.allocate("last100", 1_000, received));

      issued.addAll(received);
      assertThat(error.getStatus().getCode()).isEqualTo(Status.Code.OUT_OF_RANGE);
      assertThat(error.getStatus().getDescription()).contains("last100").contains("100");
    }
    assertThat(issued.distinct()).isEqualTo(100);
    assertThat(issued.duplicates()).isZero();
    assertThat(issued.outOfBounds()).isZero();
  }

  /** Callers on their own threads allocate random counts until each gets an error; returns their errors. */
  static List<Status> allocateToTheEnd(TestServer server, IssuedIds issued, int callers, long seed)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    try {
      List<Future<Status>> futures = new ArrayList<>();
      for (int c = 0; c < callers; c++) {
        Random random = new Random(seed + c);
        futures.add(pool.submit(() -> {
          for (int i = 0; i < 100_000; i++) {
            List<IdRange> received = new ArrayList<>();
            try {
              server.allocate("legacy32", 1 + random.nextInt(random.nextBoolean() ? 50 : 2_000), received);
            } catch (StatusRuntimeException e) {
              issued.addAll(received);
              return e.getStatus();
            }
            issued.addAll(received);
          }
          return Status.OK;
        }));
      }
      List<Status> endings = new ArrayList<>();
      for (Future<Status> f : futures) {
        endings.add(f.get(2, TimeUnit.MINUTES));
      }
      return endings;
    } finally {
      pool.shutdownNow();
    }
  }
}
