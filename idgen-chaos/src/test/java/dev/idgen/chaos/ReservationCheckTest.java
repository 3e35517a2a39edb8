package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.chaos.RunLog.SequenceSpec;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link ReservationCheck} on hand-made records: a reserved ID handed out by Allocate, by a stub or reserved
 * twice fails the run, counted exactly; a retry that got another range fails it; a clean run with reservations
 * passes, its reserved IDs out of {@code lost} and a failed call's count in {@code lost_bound}.
 */
class ReservationCheckTest extends CheckerFixture {
  @Override
  long seed() {
    return 27;
  }

  @BeforeEach
  void header() {
    log.sequence(new SequenceSpec("dense", 1, Long.MAX_VALUE, 1, 100, 1_000));
  }

  @Test
  void should_pass_reservations_beside_what_was_handed_out_and_not_count_them_as_lost() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 0, 1, 100, 1);      // 1..100
      a.range("dense", 0, 0, 1_101, 100, 1);  // 1101..1200, after the reservation
      a.served("dense", 0, new long[] {1, 2, 3}, 3);
    }
    ReservationCheck.logMade(log, "dense", 101, 1_100, "r-1", false, "s0", 10, 20);
    ReservationCheck.logMade(log, "dense", 101, 1_100, "r-1", true, "s1", 30, 40); // the retry: same range
    ReservationCheck.logFailed(log, "dense", 500, "r-2", "UNAVAILABLE:STORE_UNAVAILABLE", "s2", 50);
    finalState("dense", 0, 1_701); // 1700 reserved: 200 received, 1000 reserved for a caller, 500 a gap

    Checker.Report report = check();

    assertThat(report.reservations().overlaps()).isZero();
    assertThat(report.reservations().mismatches()).isZero();
    assertThat(report.reservations().made()).isEqualTo(2);
    assertThat(report.reservations().replayed()).isEqualTo(1);
    assertThat(report.reservations().reservedIds()).isEqualTo(1_000);
    assertThat(report.lost()).as("the reserved range is not lost; the failed call's may be").isEqualTo(500);
    assertThat(report.lostBound()).as("the failed call's count").isEqualTo(500);
    assertThat(report.ok()).isTrue();
    assertThat(printed()).contains("reserved_for_callers=1000").contains("reservations=2 reserved_overlaps=0"
        + " replay_mismatches=0");
  }

  @Test
  void should_fail_on_a_reserved_id_handed_out_by_allocate_by_a_stub_or_reserved_twice() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock);
        Recorder b = new Recorder(dir.resolve("client-1.bin"), clock)) {
      a.range("dense", 0, 0, 1, 100, 1);     // 1..100
      b.range("dense", 1, 0, 195, 10, 1);    // 195..204: 6 of them (195..200) reserved
      b.served("dense", 0, new long[] {196, 197}, 2); // a stub handed out 2 reserved IDs
    }
    ReservationCheck.logMade(log, "dense", 101, 200, "r-1", false, "s0", 10, 20);
    ReservationCheck.logMade(log, "dense", 151, 160, "r-2", false, "s1", 10, 20); // inside r-1: 10
    finalState("dense", 0, 301);

    Checker.Report report = check();

    assertThat(report.reservations().overlaps()).isEqualTo(6 + 2 + 10);
    assertThat(report.ok()).isFalse();
    assertThat(printed()).contains("reserved_overlaps=18").contains("FAILED")
        .contains("6 reserved IDs handed out by Allocate").contains("overlaps dense [101, 200] request r-1");
  }

  @Test
  void should_fail_when_a_retry_got_another_range_than_its_request() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 0, 1, 100, 1);
    }
    ReservationCheck.logMade(log, "dense", 101, 200, "r-1", false, "s0", 10, 20);
    ReservationCheck.logMade(log, "dense", 201, 300, "r-1", true, "s1", 30, 40);
    finalState("dense", 0, 301);

    Checker.Report report = check();

    assertThat(report.reservations().mismatches()).isEqualTo(1);
    assertThat(report.ok()).isFalse();
    assertThat(printed()).contains("replay_mismatches=1");
  }

  @Test
  void should_print_nothing_about_reservations_in_a_run_without_any() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 0, 1, 100, 1);
    }
    finalState("dense", 0, 101);

    Checker.Report report = check();

    assertThat(report.ok()).isTrue();
    assertThat(printed()).doesNotContain("reservations").doesNotContain("reserved_overlaps");
  }
}
