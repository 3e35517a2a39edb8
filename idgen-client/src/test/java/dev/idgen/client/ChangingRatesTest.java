package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One source driven across many leases at a rate that changes every 200 ms of ticker time (0 to 500 IDs
 * per ms, drawn from a seeded random), once per way of taking IDs: {@code tryNext()} alone, bulk
 * {@code fill}/{@code next(n)}, and {@code nextAsync()}. The server stamps its ranges {@code valid_for}
 * 500 ms, so leases are sized to that and expire when the rate drops to nothing. The executor is a
 * {@link ManualScheduler} and the server in-process and direct, so every request the source sends is
 * answered before the call that sent it returns: a source that keeps refilling never leaves a caller
 * empty-handed twice in a row, and a source that decided a request and never sent it stays empty.
 *
 * <p>Checked: the source never stays empty; every ID is handed out once and was leased by the server;
 * none is handed out at or after its lease's expiry ({@code valid_for} after the call that leased it,
 * by the ticker); and every ID leased is accounted for as served, expired or held.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ChangingRatesTest extends OneServerFixture<ManualScheduler> {
  private static final Duration VALID_FOR = Duration.ofMillis(500);
  /** IDs per ms; one is drawn for each period. */
  private static final int[] RATES = {0, 1, 3, 10, 50, 200, 500};
  private static final Duration PERIOD = Duration.ofMillis(200);
  private static final int PERIODS = 100; // 20 s of ticker time
  private static final int MAX_BULK = 64;

  ChangingRatesTest() {
    super(ManualScheduler::new);
  }

  enum Way { TRY_NEXT, FILL_AND_NEXT_N, NEXT_ASYNC }

  /** The IDs handed out, and the ranges they came from. */
  private final class HandedOut {
    long[] ids = new long[1 << 16];
    int count;
    final Set<Long> ranges = new HashSet<>();

    void add(long id) {
      Map.Entry<Long, Long> leased = server.service().leasedAt.floorEntry(id);
      assertThat(leased).as("ID %s was leased", id).isNotNull();
      long expiresAt = leased.getValue() + VALID_FOR.toNanos();
      if (ticker.nanos() - expiresAt >= 0) {
        throw new AssertionError("ID " + id + " handed out " + (ticker.nanos() - expiresAt)
            + " ns after its lease expired");
      }
      ranges.add(leased.getKey());
      if (count == ids.length) {
        ids = Arrays.copyOf(ids, count * 2);
      }
      ids[count++] = id;
    }
  }

  @ParameterizedTest
  @EnumSource(Way.class)
  void should_keep_refilling_across_many_leases_at_changing_rates_handing_out_each_id_once_before_it_expires(
      Way way) {
    server.service().validFor(VALID_FOR).clock(ticker);
    client = builder().minLeaseSize(10).maxLeaseSize(100_000).waitDeadline(Duration.ofSeconds(5)).build();
    IdSource orders = client.sequence("orders");
    Random random = new Random(20_240_611L + way.ordinal());
    HandedOut out = new HandedOut();
    long[] buffer = new long[MAX_BULK];
    int emptyInARow = 0;
    int empty = 0;
    int[] periodsAt = new int[RATES.length];

    for (int p = 0; p < PERIODS; p++) {
      int r = random.nextInt(RATES.length);
      periodsAt[r]++;
      for (long ms = 0; ms < PERIOD.toMillis(); ms++) {
        int budget = RATES[r];
        while (budget > 0) {
          switch (way) {
            case TRY_NEXT -> {
              OptionalLong id = orders.tryNext();
              if (id.isPresent()) {
                out.add(id.getAsLong());
                emptyInARow = 0;
              } else {
                empty++;
                emptyInARow++;
                assertThat(emptyInARow).as("tryNext found nothing twice in a row (period %s, ms %s)", p, ms)
                    .isLessThan(2);
              }
              budget--;
            }
            case FILL_AND_NEXT_N -> {
              int n = Math.min(budget, 1 + random.nextInt(MAX_BULK));
              if (random.nextBoolean()) {
                orders.fill(buffer, 0, n);
                for (int k = 0; k < n; k++) {
                  out.add(buffer[k]);
                }
              } else {
                for (long id : orders.next(n)) {
                  out.add(id);
                }
              }
              budget -= n;
            }
            case NEXT_ASYNC -> {
              CompletableFuture<Long> id = orders.nextAsync();
              assertThat(id).as("served at once (period %s, ms %s)", p, ms).isCompleted();
              out.add(id.join());
              budget--;
            }
          }
        }
        scheduler.advance(Duration.ofMillis(1));
      }
    }

    assertThat(Arrays.stream(periodsAt).min().orElseThrow()).as("periods at the rarest rate").isGreaterThanOrEqualTo(5);
    long[] sorted = Arrays.copyOf(out.ids, out.count);
    Arrays.sort(sorted);
    List<FakeBackend.Leased> leased = cluster.backend.leased("orders");
    for (int i = 0; i < sorted.length; i++) {
      if (i > 0 && sorted[i] == sorted[i - 1]) {
        throw new AssertionError("ID " + sorted[i] + " handed out twice");
      }
      if (!FakeBackend.contains(leased, sorted[i])) {
        throw new AssertionError("ID " + sorted[i] + " was never leased by the server");
      }
    }
    IdSourceStats stats = orders.stats();
    assertThat(out.ranges.size()).as("leases IDs were handed out from").isGreaterThanOrEqualTo(50);
    assertThat(stats.leases()).isGreaterThanOrEqualTo(50);
    assertThat(stats.idsServed()).isEqualTo(out.count);
    assertThat(stats.idsServed() + stats.idsExpired() + stats.idsHeld())
        .as("every ID leased is served, expired or held").isEqualTo(cluster.backend.leasedIds("orders"));
    assertThat(stats.idsHeld()).as("still refilling at the end").isPositive();
    assertThat(stats.failedCalls()).isZero();
    if (way == Way.TRY_NEXT) {
      assertThat(empty).as("tryNext calls that found nothing").isLessThan(10);
    }
  }
}
