package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.chaos.RunLog.SequenceSpec;
import dev.idgen.client.IdSource;
import dev.idgen.client.IdSourceStats;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The checks that hold the fresh-advance and strict-stamp cases, on hand-made records: ranges stamped with the
 * wrong ordering fail a run, a strict stub's batches are held to the strict order, the IDs of a fresh
 * sequence are judged against its floor and counted, the pool rows' reads say what they prove, and the
 * forwarded strict calls are told from the owner's.
 */
class FloorsAndStampsCheckTest extends CheckerFixture {
  private static final String STRICT = "strict";
  private static final String FRESH = FreshAdvance.PREFIX + "3";

  @Override
  long seed() {
    return 7;
  }

  @BeforeEach
  void header() {
    log.sequence(new SequenceSpec("dense", 1, Long.MAX_VALUE, 1, 100, 1_000));
    log.sequence(new SequenceSpec(STRICT, 1, Long.MAX_VALUE, 1, 100, 1_000, "dc1"));
    log.line("client", 0, "strict");
  }

  /** Ranges 1..10 of dense and of strict, stamped as given, all received: nothing lost, nothing else wrong. */
  private void tenOfEach(int denseStamp, int strictStamp) {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.stampedRange("dense", 0, 0, 1, 1, 10, 1, denseStamp);
      a.stampedRange(STRICT, 0, 0, 1, 1, 10, 1, strictStamp);
    }
    log.line("final-stripe", "dense", 0, 11, 0);
    log.line("final-stripe", STRICT, 0, 11, 0);
  }

  @Test
  void should_pass_ranges_stamped_as_their_sequence_is() throws Exception {
    tenOfEach(1, 2);

    Checker.Report report = check();

    assertThat(report.stamped()).isEqualTo(2);
    assertThat(report.wrongStamps()).isZero();
    assertThat(report.ok()).as(printed()).isTrue();
    assertThat(report.line()).contains(" wrong_stamps=0 ");
  }

  @Test
  void should_fail_a_strict_sequence_range_stamped_per_server() throws Exception {
    tenOfEach(1, 1);

    Checker.Report report = check();

    assertThat(report.wrongStamps()).isEqualTo(1);
    assertThat(report.ok()).isFalse();
    assertThat(report.line()).contains(" wrong_stamps=1 ").endsWith(" FAILED");
    assertThat(printed()).contains("wrong_stamps: strict (strict) stamped ORDERING_PER_SERVER");
  }

  @Test
  void should_fail_a_per_server_range_stamped_strict_but_not_one_left_unset() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.stampedRange("dense", 0, 0, 1, 1, 5, 1, 2);  // strict on a per-server sequence: wrong
      a.stampedRange("dense", 0, 0, 1, 6, 5, 1, 0);  // unset (an older server): per-server, fine
    }
    log.line("final-stripe", "dense", 0, 11, 0);
    log.line("final-stripe", STRICT, 0, 1, 0);

    Checker.Report report = check();

    assertThat(report.wrongStamps()).isEqualTo(1);
    assertThat(report.ok()).isFalse();
  }

  @Test
  void should_not_print_wrong_stamps_for_records_without_stamps() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 0, 1, 1, 10, 1);
    }
    log.line("final-stripe", "dense", 0, 11, 0);
    log.line("final-stripe", STRICT, 0, 1, 0);

    Checker.Report report = check();

    assertThat(report.stamped()).isZero();
    assertThat(report.line()).doesNotContain("wrong_stamps");
    assertThat(report.ok()).as(printed()).isTrue();
  }

  @Test
  void should_hold_a_strict_stubs_batches_to_the_order_of_the_calls() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      // A stub leased 1..6 early (a source that cached a range it took for per-server)...
      a.stampedRange(STRICT, 0, 10, 20, 1, 6, 1, 2);
      // ...a raw call got 7..9 and completed at 200...
      a.stampedRange(STRICT, 1, 100, 150, 7, 3, 1, 2);
      a.call(STRICT, 1, 100, 200, "OK", 0, new long[] {7, 3, 1});
      // ...and the stub hands out 1..2 to a caller who asked at 300: below 9, out of order.
      a.served(STRICT, 300, 310, new long[] {1, 2}, 2);
      // 3..4 asked for at 120, while that call was open: either order is fine.
      a.served(STRICT, 120, 130, new long[] {3, 4}, 2);
    }
    log.line("final-stripe", "dense", 0, 1, 0);
    log.line("final-stripe", STRICT, 0, 10, 0);
    log.line("final-held", STRICT, "server:s0", 0);

    Checker.Report report = check();

    assertThat(report.strict().stubBatches()).isEqualTo(2);
    assertThat(report.strict().violations()).isEqualTo(1);
    assertThat(report.ok()).isFalse();
    assertThat(printed()).contains("order_violations: strict: client-0 stub batch asked 0.000000s handed"
        + " 0.000000s IDs 1..2 (2) started after client-0 server-1 call");
  }

  @Test
  void should_judge_a_fresh_sequence_against_its_floor_and_count_the_races_seen() throws Exception {
    log.sequence(FreshAdvance.spec(FRESH));
    log.line("client", 1, "fresh");
    try (Recorder a = new Recorder(dir.resolve("client-1.bin"), clock)) {
      a.stampedRange(FRESH, 0, 100, 120, 1, 10, 1, 1);   // a loader, started before the advance: not judged
      a.stampedRange(FRESH, 2, 300, 320, 45, 10, 1, 1);  // started after it returned: 45..50 at or below 50
      a.stampedRange(FRESH, 1, 400, 420, 55, 5, 1, 1);   // above: fine
    }
    log.line("advance", FRESH, 50, 200, "ok", 110, "server-2");
    log.line("fresh", FRESH, 50, "ok", 90, 110, 200, "loaders=2", "in_flight=1", "frozen=2", "frozen_ms=640",
        "dc1=case1", "dc2=trim-created", "reads=80", "unread=0", "others=1/1", "idle=3/3");
    log.line("fresh-probes", "calls=5", "ok=4", "restarted=2", "restarted_ok=2");
    log.line("final-stripe", "dense", 0, 1, 0);
    log.line("final-stripe", STRICT, 0, 1, 0);
    log.line("final-stripe", FRESH, 0, 60, 0);

    Checker.Report report = check();

    assertThat(report.belowFloor()).isEqualTo(6);
    assertThat(report.cases().freshBelowFloor()).isEqualTo(6);
    assertThat(report.cases().freshJudgedIds()).isEqualTo(15);
    assertThat(report.cases().freshEpisodes()).isEqualTo(1);
    assertThat(report.cases().freshOk()).isEqualTo(1);
    assertThat(report.cases().freshCase1()).isEqualTo(1);
    assertThat(report.cases().freshInFlight()).isEqualTo(1);
    assertThat(report.cases().freshFrozen()).isEqualTo(1);
    assertThat(report.ok()).isFalse();
    assertThat(printed()).contains("seen in the pool rows: 1 times")
        .contains("2 of them on servers restarted since the advance (2 ok)")
        .contains("below_floor among them: 6");
  }

  @Test
  void should_tell_the_calls_a_forwarder_answered_from_the_owners() throws Exception {
    log.line("server", "server-0", 0, "10.0.0.1:7000", "dc1");
    log.line("server", "server-1", 1, "10.0.0.2:7000", "dc2");
    log.owner(STRICT, 0, "10.0.0.1:7000", 1);
    log.owner(STRICT, 1_000, "10.0.0.2:7000", 2); // taken over at 1 s
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.call(STRICT, 0, 100_000_000L, 110_000_000L, "OK", 0, new long[] {1, 1, 1});  // the owner at 0.1 s
      a.call(STRICT, 1, 200_000_000L, 210_000_000L, "OK", 1, new long[] {2, 1, 1});  // forwarded, unmarked
      a.call(STRICT, 0, 2_000_000_000L, 2_010_000_000L, "OK", 0, new long[] {3, 1, 1}); // forwarded after
      a.stampedRange(STRICT, 0, 0, 1, 1, 3, 1, 2);
    }
    log.line("unloads", 2_000, 4, 9);
    log.line("stub-try", "client-0", 100, 7);
    log.line("final-stripe", "dense", 0, 1, 0);
    log.line("final-stripe", STRICT, 0, 4, 0);

    Checker.Report report = check();

    assertThat(report.cases().forwardedCalls()).isEqualTo(2);
    assertThat(report.cases().forwardedUnmarked()).isEqualTo(1);
    assertThat(report.cases().idleUnloads()).isEqualTo(9);
    assertThat(report.cases().stubTries()).isEqualTo(100);
    assertThat(report.cases().stubEmptyTries()).isEqualTo(7);
    assertThat(report.strict().unmarked()).isEqualTo(1);
    assertThat(report.ok()).isFalse();
    assertThat(printed()).contains("unload-idle-after 2000 ms, idle unloads in their logs: 9 sequences");
  }

  /** A source that holds an ID for every other tryNext(), and fails its next() after {@code failAfter} IDs. */
  private static final class FakeSource implements IdSource {
    private long nextId = 1;
    private long tries;
    private final long failAfter;

    FakeSource(long failAfter) {
      this.failAfter = failAfter;
    }

    private long take() {
      if (nextId > failAfter) {
        throw new IllegalStateException("the servers are gone");
      }
      return nextId++;
    }

    @Override
    public String sequence() {
      return "dense";
    }

    @Override
    public long next() {
      return take();
    }

    @Override
    public OptionalLong tryNext() {
      return tries++ % 2 == 0 ? OptionalLong.of(take()) : OptionalLong.empty();
    }

    @Override
    public CompletableFuture<Long> nextAsync() {
      return CompletableFuture.completedFuture(take());
    }

    @Override
    public long[] next(int count) {
      long[] ids = new long[count];
      fill(ids, 0, count);
      return ids;
    }

    @Override
    public void fill(long[] ids, int from, int to) {
      for (int i = from; i < to; i++) {
        ids[i] = take();
      }
    }

    @Override
    public IdSourceStats stats() {
      throw new UnsupportedOperationException();
    }
  }

  @Test
  void should_record_each_way_of_taking_ids_as_one_batch_and_count_the_empty_tries() throws Exception {
    AtomicLong tries = new AtomicLong();
    AtomicLong empty = new AtomicLong();
    FakeSource source = new FakeSource(16);
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.stampedRange("dense", 0, 0, 1, 1, 20, 1, 1); // leased 1..20
      assertThat(ChaosClient.take(source, 4, 0, a, tries, empty)).isEqualTo(4);  // next(4): 1..4
      assertThat(ChaosClient.take(source, 3, 1, a, tries, empty)).isEqualTo(3);  // fill: 5..7
      assertThat(ChaosClient.take(source, 6, 2, a, tries, empty)).isEqualTo(6);  // tryNext, next when empty: 8..13
      // tryNext again: 14..16 are taken, then the next() after an empty tryNext fails; the three are recorded
      // all the same, and nothing else (no slot for the ID that never came).
      assertThatThrownBy(() -> ChaosClient.take(source, 6, 2, a, tries, empty))
          .isInstanceOf(IllegalStateException.class);
    }
    assertThat(tries.get()).isEqualTo(10); // 6, then 4
    assertThat(empty.get()).isEqualTo(5);
    log.line("final-stripe", "dense", 0, 21, 0);
    log.line("final-stripe", STRICT, 0, 1, 0);

    Checker.Report report = check();

    assertThat(report.served()).isEqualTo(16);
    assertThat(report.outOfBounds()).isZero();
    assertThat(report.unleased()).isZero();
    assertThat(report.duplicates()).isZero();
  }

  private static Optional<PoolWatch.PoolRow> row(Long floor, Long... appended) {
    return Optional.of(new PoolWatch.PoolRow(true, floor, List.of(appended)));
  }

  private static final Optional<PoolWatch.PoolRow> ABSENT = Optional.of(PoolWatch.PoolRow.ABSENT);

  /** Floor 50 of a sequence that starts at 1: index 49; the first DC block [0, 1000). */
  private static String observe(List<Optional<PoolWatch.PoolRow>> reads) {
    PoolObservation o = new PoolObservation();
    reads.forEach(r -> o.see(r, 50, 49));
    return o.state();
  }

  @Test
  void should_see_the_race_only_when_a_row_the_trim_created_gets_a_block_from_before_the_advance() {
    // The trim created the row (floor, nothing appended); then the block [0, 1000) taken before the advance.
    assertThat(observe(List.of(ABSENT, row(50L), row(50L, 0L, 1_000L)))).isEqualTo("case1");
    // What came after the trim was taken after the advance: the trim created the row, no race.
    assertThat(observe(List.of(ABSENT, row(50L), row(50L, 1_000L, 2_000L)))).isEqualTo("trim-created");
    // Appended first, trimmed after: the race the append's floor read always covered.
    assertThat(observe(List.of(ABSENT, row(null, 0L, 1_000L), row(50L, 0L, 1_000L)))).isEqualTo("append-first");
    // First seen trimmed and appended: which came first cannot be told.
    assertThat(observe(List.of(ABSENT, row(50L, 0L, 1_000L)))).isEqualTo("seen-late");
    assertThat(observe(List.of(Optional.empty(), Optional.empty()))).isEqualTo("unread");
    assertThat(observe(List.of(ABSENT, ABSENT))).isEqualTo("absent");
  }
}
