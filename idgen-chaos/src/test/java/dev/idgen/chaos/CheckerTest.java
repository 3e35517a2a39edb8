package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.chaos.RunLog.SequenceSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The checker on hand-made records: each violation is seen, counted exactly, and a clean run passes. */
class CheckerTest {
  @TempDir
  Path dir;

  private final RunClock clock = new RunClock();
  private final ByteArrayOutputStream printed = new ByteArrayOutputStream();
  private RunLog log;

  @BeforeEach
  void header() throws Exception {
    log = new RunLog(dir);
    log.line("seed", 99);
    log.sequence(new SequenceSpec("dense", 1, 1_000, 1, 100, 1_000));
    log.sequence(new SequenceSpec("striped", 10, Long.MAX_VALUE, 4, 100, 1_000));
  }

  private Checker.Report check() throws Exception {
    log.line("end", 1);
    log.close();
    return Checker.check(dir, new PrintStream(printed, true, StandardCharsets.UTF_8));
  }

  private void finalState(String name, int stripe, long next) {
    log.line("final-stripe", name, stripe, next, 0);
  }

  @Test
  void should_pass_a_clean_run_and_count_what_nobody_received_as_lost() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock);
        Recorder b = new Recorder(dir.resolve("client-1.bin"), clock)) {
      a.range("dense", 0, 1, 100, 1);
      b.range("dense", 0, 101, 50, 1);
      a.served("dense", new long[] {1, 2, 3}, 3);
      b.range("striped", 0, 10, 5, 4); // 10, 14, 18, 22, 26
    }
    finalState("dense", 0, 301); // 300 reserved: 150 received, 100 held, 50 lost
    log.line("final-held", "dense", "server:s0", 100);
    for (int k = 0; k < 4; k++) {
      finalState("striped", k, k == 0 ? 30 : 10 + k); // stripe 0: 5 reserved, all received
    }
    log.fault(5, "server-kill", 60, "s1");
    log.line("reported", "s1", "kill", 40, 7);   // held 40 just before its kill, had counted 7 lost
    log.line("reported", "s0", "end", 0, 2);
    log.line("reported", "s2", "end", 0, -1);    // could not be asked: counted as 0, and as unknown

    Checker.Report report = check();

    assertThat(report.reported()).isEqualTo(40 + 7 + 2);
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("servers_reported = 49 (reserves held just before the kills: 40; their own lost counters,"
            + " abandoned + dc_block: 9; 1 reports unknown); lost - reported = 1");
    assertThat(report.ids()).isEqualTo(155);
    assertThat(report.served()).isEqualTo(3);
    assertThat(report.duplicates()).isZero();
    assertThat(report.outOfBounds()).isZero();
    assertThat(report.lost()).isEqualTo(50);
    assertThat(report.lostBound()).isEqualTo(60);
    assertThat(report.ok()).isTrue();
    assertThat(printed.toString(StandardCharsets.UTF_8).strip()).endsWith(
        "checked ids=155 duplicates=0 out_of_bounds=0 below_floor=0 unleased=0 bad_calls=0 lost=50 "
            + "lost_bound=60 reported=49 faults=1 seed=99");
  }

  @Test
  void should_count_every_extra_copy_of_an_id_across_clients_and_stripes() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock);
        Recorder b = new Recorder(dir.resolve("client-1.bin"), clock)) {
      a.range("dense", 0, 1, 10, 1);
      b.range("dense", 0, 5, 10, 1);    // 5..10 again: 6
      b.range("dense", 0, 6, 2, 1);     // 6, 7 a third time: 2
      a.range("striped", 0, 14, 3, 4);  // 14, 18, 22
      b.range("striped", 0, 18, 1, 4);  // 18 again: 1
      b.range("striped", 0, 15, 3, 4);  // another stripe: no overlap
      a.served("dense", new long[] {1, 1}, 2); // a stub handing 1 out twice: 1
    }
    finalState("dense", 0, 1_001);

    Checker.Report report = check();

    assertThat(report.duplicates()).isEqualTo(6 + 2 + 1 + 1);
    assertThat(report.ok()).isFalse();
    assertThat(printed.toString(StandardCharsets.UTF_8)).contains("FAILED");
  }

  @Test
  void should_count_ids_out_of_bounds_off_stripe_or_beyond_the_cursor() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 995, 10, 1);     // 1001..1004 pass max: the whole range, 10
      a.range("dense", 0, 0, 1, 1);        // below start: 1
      a.range("striped", 0, 10, 2, 3);     // stride 3 on a 4-stripe sequence: 2
      a.range("dense", 0, 500, 5, 1);      // 500..504, the cursor is at 503: 2 never reserved
      a.range("nope", 0, 1, 7, 1);         // a sequence that does not exist: 7
    }
    finalState("dense", 0, 503);

    Checker.Report report = check();

    assertThat(report.outOfBounds()).isEqualTo(10 + 1 + 2 + 2 + 7);
    assertThat(report.ok()).isFalse();
  }

  @Test
  void should_flag_ids_at_or_below_a_floor_only_in_calls_started_after_the_advance_returned() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 100, 1, 10, 1);     // started before the advance: allowed
      a.range("dense", 300, 48, 5, 1);     // after: 48, 49, 50 are at or below 50
      a.range("dense", 300, 51, 5, 1);     // after, above: fine
    }
    log.line("advance", "dense", 50, 200, "ok");
    log.line("advance", "dense", 70, 150, "failed:DEADLINE_EXCEEDED"); // not a promise: ignored
    finalState("dense", 0, 1_001);

    Checker.Report report = check();

    assertThat(report.belowFloor()).isEqualTo(3);
  }

  @Test
  void should_flag_ids_a_stub_served_without_leasing_them_and_calls_with_the_wrong_count() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock);
        Recorder b = new Recorder(dir.resolve("client-1.bin"), clock)) {
      a.range("dense", 0, 1, 10, 1);
      b.range("dense", 0, 11, 10, 1);
      a.served("dense", new long[] {2, 12, 13}, 3); // 12 and 13 were b's
      a.failedCall("dense", 20, 10, "OK");          // an OK stream with half the IDs
      a.failedCall("dense", 20, 5, "CANCELLED");    // a cut call: 15 may be lost
    }
    finalState("dense", 0, 21);

    Checker.Report report = check();

    assertThat(report.unleased()).isEqualTo(2);
    assertThat(report.badCalls()).isEqualTo(1);
    assertThat(report.lostBound()).isEqualTo(15);
  }

  @Test
  void should_fail_when_more_is_lost_than_the_faults_allow() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 1, 10, 1);
    }
    finalState("dense", 0, 111); // 100 lost
    log.fault(1, "client-kill", 99, "c0");

    Checker.Report report = check();

    assertThat(report.lost()).isEqualTo(100);
    assertThat(report.ok()).isFalse();
  }

  @Test
  void should_fail_a_run_that_did_not_record_its_end() throws Exception {
    log.close();

    Checker.Report report = Checker.check(dir, new PrintStream(printed, true, StandardCharsets.UTF_8));

    assertThat(report.complete()).isFalse();
    assertThat(report.ok()).isFalse();
  }
}
