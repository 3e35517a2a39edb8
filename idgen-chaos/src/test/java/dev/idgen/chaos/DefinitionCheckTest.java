package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.chaos.RunLog.SequenceSpec;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link DefinitionCheck} on hand-made records (times in run-clock nanos): a range served inside a confirmed
 * deletion fails the run ({@code deleted_served}), one outside it or inside an unconfirmed one does not; a raise
 * attempted, even a failed one, widens the bounds from its start on, and IDs above the max at creation read
 * before any raise was attempted, or with none attempted, are {@code out_of_bounds}; a used-up stripe ends at
 * the max the run ended with.
 */
class DefinitionCheckTest extends CheckerFixture {
  private static final String SPARE = "spare";
  private static final String BOUNDED = "bounded";

  @Override
  long seed() {
    return 2_027;
  }

  @BeforeEach
  void header() {
    log.sequence(new SequenceSpec(SPARE, 1, Long.MAX_VALUE, 1, 100, 1_000));
    log.sequence(new SequenceSpec(BOUNDED, 1, 2_000, 1, 100, 1_000));
  }

  /** A change of {@code name}, as {@link Redefinitions} logs it. */
  private void change(String op, String name, String arg, long started, long returned, String outcome) {
    Redefinitions.logged(log, op, name, arg, started, returned, outcome, "server-0");
  }

  @Test
  void should_fail_on_a_range_served_after_a_confirmed_delete_and_before_the_undelete_started() throws Exception {
    try (Recorder r = new Recorder(dir.resolve("client-0.bin"), clock)) {
      r.range(SPARE, 0, 10, 20, 1, 10, 1);        // 1..10 before the delete
      r.range(SPARE, 1, 90, 120, 11, 5, 1);       // started before the delete returned: not judged
      r.range(SPARE, 2, 150, 160, 16, 7, 1);      // inside: 7 IDs served while deleted
      r.range(SPARE, 0, 310, 320, 23, 10, 1);     // after the undelete started
    }
    change("delete", SPARE, "-", 80, 100, "OK");
    change("call", SPARE, "deleted", 150, 170, "OK");
    change("call", SPARE, "deleted", 180, 190, "NOT_FOUND:SEQUENCE_DELETED");
    change("undelete", SPARE, "-", 300, 305, "OK");
    finalState(SPARE, 0, 33); // every ID received: nothing lost, the deletion alone fails the run
    finalState(BOUNDED, 0, 1);

    Checker.Report report = check();

    assertThat(report.definitions().deletedServed()).isEqualTo(7);
    assertThat(report.definitions().whileDeleted()).isEqualTo(2);
    assertThat(report.definitions().refused()).isEqualTo(1);
    assertThat(report.duplicates()).isZero();
    assertThat(report.lost()).isZero();
    assertThat(report.ok()).isFalse();
    assertThat(printed()).contains("redefinitions=2 deleted_served=7").contains("FAILED")
        .contains("deleted_served: spare deleted (confirmed 0.000s, undelete started 0.000s) served client-0 server-2"
            + " range first=16 count=7");
  }

  @Test
  void should_judge_only_confirmed_deletions_a_repeated_deletes_answer_confirming_one() throws Exception {
    try (Recorder r = new Recorder(dir.resolve("client-0.bin"), clock)) {
      r.range(SPARE, 0, 150, 160, 1, 10, 1);      // inside a delete whose outcome is unknown: not judged
      r.range(SPARE, 0, 450, 460, 11, 4, 1);      // after the repeated delete confirmed it: 4 served
    }
    change("delete", SPARE, "-", 80, 100, "UNAVAILABLE:CHANGE_NOT_CONFIRMED");
    change("delete", SPARE, "-", 400, 420, "NOT_FOUND:SEQUENCE_DELETED");
    finalState(SPARE, 0, 15);
    finalState(BOUNDED, 0, 1);

    Checker.Report report = check();

    assertThat(report.definitions().confirmedDeletes()).isEqualTo(1);
    assertThat(report.definitions().deletedServed()).as("never undeleted: judged to the end").isEqualTo(4);
    assertThat(report.ok()).isFalse();
  }

  @Test
  void should_pass_a_deletion_whose_calls_were_all_refused() throws Exception {
    try (Recorder r = new Recorder(dir.resolve("client-0.bin"), clock)) {
      r.range(SPARE, 0, 10, 20, 1, 10, 1);
      r.range(SPARE, 1, 310, 320, 11, 10, 1);     // after the undelete, above everything before
    }
    change("delete", SPARE, "-", 80, 100, "OK");
    change("call", SPARE, "deleted", 150, 170, "NOT_FOUND:SEQUENCE_DELETED");
    change("undelete", SPARE, "-", 300, 305, "OK");
    finalState(SPARE, 0, 21);
    finalState(BOUNDED, 0, 1);

    Checker.Report report = check();

    assertThat(report.definitions().deletedServed()).isZero();
    assertThat(report.ok()).as(printed()).isTrue();
    assertThat(printed()).contains("redefinitions=2 deleted_served=0")
        .contains("1 calls inside a confirmed deletion: {NOT_FOUND:SEQUENCE_DELETED=1}");
  }

  @Test
  void should_widen_the_bounds_from_the_start_of_a_raise_even_a_failed_one() throws Exception {
    try (Recorder r = new Recorder(dir.resolve("client-0.bin"), clock)) {
      r.range(BOUNDED, 0, 10, 20, 1, 2_000, 1);      // the whole space at creation
      r.range(BOUNDED, 1, 140, 150, 2_001, 100, 1);  // read after a raise to 3,000 started (its outcome lost)
    }
    change("update", BOUNDED, "max=3000", 100, 200, "DEADLINE_EXCEEDED");
    finalState(SPARE, 0, 1);
    finalState(BOUNDED, 0, 2_101);

    Checker.Report report = check();

    assertThat(report.outOfBounds()).as(printed()).isZero();
    assertThat(report.ok()).as(printed()).isTrue();
    assertThat(printed()).contains("max attempted {bounded=3000}");
  }

  @Test
  void should_count_ids_above_the_max_at_creation_read_before_any_raise_was_attempted() throws Exception {
    try (Recorder r = new Recorder(dir.resolve("client-0.bin"), clock)) {
      r.range(BOUNDED, 0, 10, 20, 1, 1_950, 1);
      r.range(BOUNDED, 1, 40, 50, 1_951, 100, 1);    // 2,001..2,050 read before the raise started: 50 IDs
    }
    change("update", BOUNDED, "max=3000", 100, 200, "OK");
    finalState(SPARE, 0, 1);
    finalState(BOUNDED, 0, 2_051);

    Checker.Report report = check();

    assertThat(report.outOfBounds()).isEqualTo(50);
    assertThat(report.definitions().aboveMax()).isEqualTo(50);
    assertThat(report.ok()).isFalse();
    assertThat(printed()).contains("out_of_bounds: 50 IDs of bounded above 2000");
  }

  @Test
  void should_count_ids_above_the_max_at_creation_when_no_raise_was_attempted() throws Exception {
    try (Recorder r = new Recorder(dir.resolve("client-0.bin"), clock)) {
      r.range(BOUNDED, 0, 10, 20, 1_951, 100, 1);    // 2,001..2,050 above the only max there was
    }
    change("update", BOUNDED, "node_block_size=50,dc_block_size=500", 100, 200, "OK"); // no max: no raise
    finalState(SPARE, 0, 1);
    finalState(BOUNDED, 0, 2_051);

    Checker.Report report = check();

    assertThat(report.outOfBounds()).isEqualTo(100); // the whole range is outside [1, 2000]
    assertThat(report.ok()).isFalse();
  }

  @Test
  void should_end_a_used_up_stripe_at_the_max_the_run_ended_with() throws Exception {
    try (Recorder r = new Recorder(dir.resolve("client-0.bin"), clock)) {
      r.range(BOUNDED, 0, 10, 20, 1, 2_000, 1);
      r.range(BOUNDED, 1, 140, 150, 2_001, 1_000, 1);
    }
    change("update", BOUNDED, "max=3000", 100, 120, "OK");
    change("update", BOUNDED, "max=4000", 300, 320, "UNAVAILABLE:STORE_UNAVAILABLE"); // did not apply
    finalState(SPARE, 0, 1);
    log.line("final-stripe", BOUNDED, 0, "-", 0); // used up: at 3,000, as the end read it
    log.line(DefinitionCheck.FINAL, BOUNDED, 3_000, 100, 1_000, "live");

    Checker.Report report = check();

    assertThat(report.outOfBounds()).as(printed()).isZero();
    assertThat(report.lost()).as("every ID up to 3,000 received, none beyond").isZero();
    assertThat(report.ok()).as(printed()).isTrue();
  }
}
