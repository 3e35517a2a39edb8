package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.chaos.RunLog.SequenceSpec;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The checker on hand-made records: each violation is seen, counted exactly, and a clean run passes. */
class CheckerTest extends CheckerFixture {
  @Override
  long seed() {
    return 99;
  }

  @BeforeEach
  void header() {
    log.sequence(new SequenceSpec("dense", 1, 1_000, 1, 100, 1_000));
    log.sequence(new SequenceSpec("striped", 10, Long.MAX_VALUE, 4, 100, 1_000));
  }

  @Test
  void should_pass_a_clean_run_and_count_what_nobody_received_as_lost() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock);
        Recorder b = new Recorder(dir.resolve("client-1.bin"), clock)) {
      a.range("dense", 0, 0, 1, 100, 1);
      b.range("dense", 0, 0, 101, 50, 1);
      a.served("dense", 0, new long[] {1, 2, 3}, 3);
      b.range("striped", 0, 0, 10, 5, 4); // 10, 14, 18, 22, 26
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
    log.cas("s1", "kill", Map.of("global:applied", 5L, "dc:applied", 7L, "dc:resolved_applied", 1L));
    log.cas("s0", "end", Map.of("global:applied", 2L, "dc:unknown", 3L, "dc:resolved_ambiguous", 2L,
        "global:recovered", 1L));
    log.cas("s2", "end", null);                  // could not be read

    Checker.Report report = check();

    assertThat(report.reported()).isEqualTo(40 + 7 + 2);
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("servers_reported = 49 (reserves held just before the kills: 40; their own lost counters,"
            + " abandoned + dc_block: 9; abandoned at planned stops: 0; 1 reports unknown); lost - reported = 1");
    assertThat(report.ids()).isEqualTo(155);
    assertThat(report.served()).isEqualTo(3);
    assertThat(report.duplicates()).isZero();
    assertThat(report.outOfBounds()).isZero();
    assertThat(report.lost()).isEqualTo(50);
    assertThat(report.lostBound()).isEqualTo(60);
    assertThat(report.ok()).isTrue();
    assertThat(report.cas()).containsEntry("applied", 14L).containsEntry("resolved_ambiguous", 2L)
        .containsEntry("recovered", 1L);
    assertThat(printed.toString(StandardCharsets.UTF_8).strip()).endsWith(
        "checked ids=155 duplicates=0 out_of_bounds=0 below_floor=0 unleased=0 bad_calls=0 lost=50 "
            + "lost_bound=60 reported=49 faults=1 seed=99\n"
            + "cas: applied=14 conflict=0 unknown=3 resolved_applied=1 resolved_not_applied=0 resolved_ambiguous=2 "
            + "unresolved=0 recovered=1");
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("read 1 times just before a kill -9 and 1 times at the end, 1 reads failed");
  }

  @Test
  void should_count_every_extra_copy_of_an_id_across_clients_and_stripes() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock);
        Recorder b = new Recorder(dir.resolve("client-1.bin"), clock)) {
      a.range("dense", 0, 0, 1, 10, 1);
      b.range("dense", 0, 0, 5, 10, 1);    // 5..10 again: 6
      b.range("dense", 0, 0, 6, 2, 1);     // 6, 7 a third time: 2
      a.range("striped", 0, 0, 14, 3, 4);  // 14, 18, 22
      b.range("striped", 0, 0, 18, 1, 4);  // 18 again: 1
      b.range("striped", 0, 0, 15, 3, 4);  // another stripe: no overlap
      a.served("dense", 0, new long[] {1, 1}, 2); // a stub handing 1 out twice: 1
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
      a.range("dense", 0, 0, 995, 10, 1);     // 1001..1004 pass max: the whole range, 10
      a.range("dense", 0, 0, 0, 1, 1);        // below start: 1
      a.range("striped", 0, 0, 10, 2, 3);     // stride 3 on a 4-stripe sequence: 2
      a.range("dense", 0, 0, 500, 5, 1);      // 500..504, the cursor is at 503: 2 never reserved
      a.range("nope", 0, 0, 1, 7, 1);         // a sequence that does not exist: 7
    }
    finalState("dense", 0, 503);

    Checker.Report report = check();

    assertThat(report.outOfBounds()).isEqualTo(10 + 1 + 2 + 2 + 7);
    assertThat(report.ok()).isFalse();
  }

  @Test
  void should_flag_ids_at_or_below_a_floor_only_in_calls_started_after_the_advance_returned() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 100, 1, 10, 1);     // started before the advance: allowed
      a.range("dense", 0, 300, 48, 5, 1);     // after: 48, 49, 50 are at or below 50
      a.range("dense", 0, 300, 51, 5, 1);     // after, above: fine
    }
    log.line("advance", "dense", 50, 200, "ok");
    log.line("advance", "dense", 70, 150, "failed:DEADLINE_EXCEEDED"); // not a promise: ignored
    finalState("dense", 0, 1_001);

    Checker.Report report = check();

    assertThat(report.belowFloor()).isEqualTo(3);
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("below_floor: dense: 3 IDs of client-0 server-0 range first=48 count=5 stride=1");
  }

  @Test
  void should_flag_ids_a_stub_handed_out_at_or_below_the_floor_of_an_advance_that_had_returned_ok() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 100, 40, 60, 1);                                  // leased 40..99 before the advance
      a.served("dense", 300, new long[] {45, 46, 47, 48, 49, 50, 51}, 7);    // asked after it returned: 45..50
      a.range("striped", 0, 100, 10, 50, 4);                                // stripe 0: 10, 14, …, 206
      a.served("striped", 300, new long[] {30, 34, 38}, 3);                 // 30 and 34 at or below 35
    }
    log.line("advance", "dense", 50, 200, "ok", 150, "server-1");
    log.line("advance", "striped", 35, 250, "ok", 150, "server-2");
    finalState("dense", 0, 1_001);
    for (int k = 0; k < 4; k++) {
      finalState("striped", k, 1_000);
    }

    Checker.Report report = check();

    assertThat(report.belowFloor()).isEqualTo(6 + 2);
    assertThat(report.stubJudged()).isEqualTo(7 + 3);
    assertThat(report.unleased()).isZero();
    assertThat(report.ok()).isFalse();
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("below_floor: dense: 6 IDs of client-0 stub batch run first=45 count=7 stride=1 asked 0.000s")
        .contains("at or below floor 50 of an advance that returned OK at 0.000s");
  }

  @Test
  void should_not_judge_a_stub_batch_asked_for_before_the_advance_returned() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 100, 1, 99, 1);
      a.served("dense", 199, new long[] {45, 46, 47, 48, 49, 50, 51}, 7); // the same batch, asked for before
    }
    log.line("advance", "dense", 50, 200, "ok", 150, "server-1");
    finalState("dense", 0, 100);

    Checker.Report report = check();

    assertThat(report.belowFloor()).isZero();
    assertThat(report.stubJudged()).isZero();
    assertThat(report.served()).isEqualTo(7);
    assertThat(report.ok()).isTrue();
    // Handed out (recorded) after the advance returned, so it is counted apart, for people, not judged.
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("handed out after it (not judged): 6");
  }

  @Test
  void should_not_judge_anything_against_a_failed_advance() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 100, 40, 60, 1);
      a.served("dense", 300, new long[] {45, 46, 47}, 3);   // after the failed advances, below their floors
      a.range("dense", 0, 300, 100, 10, 1);                 // a call started after them, below their floors
    }
    log.line("advance", "dense", 500, 200, "failed:UNAVAILABLE", 150, "server-1");
    log.line("advance", "dense", 600, 2_000_000, "failed:DEADLINE_EXCEEDED", 1_500_000, "server-0");
    log.line("down", "cassandra-pause", "dc2", 0, 1);   // 0 to 1 ms: the first call was in flight
    log.line("down", "server-kill", "server-2", 1, 3);  // 1 to 3 ms: the second call was
    finalState("dense", 0, 1_001);

    Checker.Report report = check();

    assertThat(report.belowFloor()).isZero();
    assertThat(report.stubJudged()).isZero();
    assertThat(report.advances()).isEqualTo(2);
    assertThat(report.advancesOk()).isZero();
    assertThat(report.advancesDuringPause()).isEqualTo(1);
    assertThat(report.advancesDuringKill()).isEqualTo(1);
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("advances: 2 (ok 0, failed 2): {failed:DEADLINE_EXCEEDED=1, failed:UNAVAILABLE=1}");
  }

  @Test
  void should_record_a_stub_batch_as_runs_and_read_back_exactly_its_ids() throws Exception {
    long[] batch = {5, 6, 7, 8, 20, 24, 28, 28, 3, 9};
    assertThat(Recorder.runs(batch, batch.length))
        .containsExactly(5, 4, 1, /**/ 20, 3, 4, /**/ 28, 1, 1, /**/ 3, 2, 6);
    long[] lease = new long[64];
    for (int i = 0; i < lease.length; i++) {
      lease[i] = 1_000 + 4L * i;
    }
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("striped", 0, 0, 1_000, 64, 4);
      a.served("striped", 0, lease, lease.length);  // one run: 64 IDs in 24 bytes (and the header)
    }
    assertThat(Files.size(dir.resolve("client-0.bin"))).isLessThan(64 * 8);
    try (Recorder a = new Recorder(dir.resolve("client-1.bin"), clock)) {
      a.range("dense", 0, 0, 1, 30, 1);
      a.range("dense", 0, 0, 31, 10, 1);                    // an adjacent lease
      a.served("dense", 0, batch, batch.length);            // 28 twice: a duplicate
      a.served("dense", 0, new long[] {28, 29, 30, 31, 32, 41}, 6); // across both leases; 28 a third time;
                                                                     // 41 never leased
    }
    finalState("dense", 0, 1_001);

    Checker.Report report = check();

    assertThat(report.served()).isEqualTo(64 + batch.length + 6);
    assertThat(report.unleased()).isEqualTo(1);
    assertThat(report.duplicates()).isEqualTo(2); // 28 handed out three times: two extra copies
  }

  @Test
  void should_flag_ids_a_stub_served_without_leasing_them_and_calls_with_the_wrong_count() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock);
        Recorder b = new Recorder(dir.resolve("client-1.bin"), clock)) {
      a.range("dense", 0, 0, 1, 10, 1);
      b.range("dense", 0, 0, 11, 10, 1);
      a.served("dense", 0, new long[] {2, 12, 13}, 3); // 12 and 13 were b's
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
  void should_read_only_the_client_files_of_the_clients_the_run_started() throws Exception {
    log.line("client", 0, "raw");
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock);
        Recorder stale = new Recorder(dir.resolve("client-7.bin"), clock)) {
      a.range("dense", 0, 0, 1, 10, 1);
      stale.range("dense", 1, 0, 1, 10, 1); // an earlier run's record left in the same directory
    }
    finalState("dense", 0, 11);

    Checker.Report report = check();

    assertThat(report.ids()).isEqualTo(10);
    assertThat(report.duplicates()).isZero();
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("ignored 1 client files the run did not start: [client-7.bin]");
  }

  @Test
  void should_fail_when_more_is_lost_than_the_faults_allow() throws Exception {
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 0, 1, 10, 1);
    }
    finalState("dense", 0, 111); // 100 lost
    log.fault(1, "client-kill", 99, "c0");

    Checker.Report report = check();

    assertThat(report.lost()).isEqualTo(100);
    assertThat(report.ok()).isFalse();
  }

  @Test
  void should_pass_a_run_of_planned_restarts_only_that_lost_nothing() throws Exception {
    log.line("kinds", "rolling-restart");
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock);
        Recorder b = new Recorder(dir.resolve("client-1.bin"), clock)) {
      a.range("dense", 0, 0, 1, 100, 1);
      b.range("dense", 1, 0, 101, 50, 1);   // from the DC pool: what server-0 gave back
      a.served("dense", 0, new long[] {1, 2, 3}, 3);
      b.failedCall("dense", 40, 0, "UNAVAILABLE"); // refused by a stopping server: took nothing
    }
    finalState("dense", 0, 301);             // 300 reserved: 150 received, 150 held
    log.line("final-held", "dense", "dc:dc1:0", 120);
    log.line("final-held", "dense", "server:server-1", 30);
    log.fault(5, "rolling-restart", 0, "[server-0,server-1,server-2]");
    log.line("reported", "server-0", "stop", 0, 0);
    log.line("stopped", "server-0", 143, 70, 0, 900);
    log.line("stopped", "server-1", 143, 0, 0, 800);
    log.line("stopped", "server-2", 143, 30, 0, 1_200);

    Checker.Report report = check();

    assertThat(report.lost()).isZero();
    assertThat(report.lostBound()).isZero();
    assertThat(report.restartsOnly()).isTrue();
    assertThat(report.restarts()).isEqualTo(3);
    assertThat(report.returned()).isEqualTo(100);
    assertThat(report.failedStops()).isZero();
    assertThat(report.ok()).isTrue();
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("planned stops (SIGTERM): 3, 0 did not exit in time; SIGTERM to exit at most 1200 ms; the servers"
            + " logged 100 IDs given back to the store, 0 abandoned (0 logged nothing)")
        .contains("lost=0 lost_bound=0 reported=0 faults=1 restarts=3 returned=100 failed_stops=0 restart_lost=0"
            + " restarts_only seed=99\n");
  }

  @Test
  void should_fail_a_run_of_planned_restarts_only_that_lost_any_id() throws Exception {
    log.line("kinds", "server-restart,rolling-restart");
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 0, 1, 100, 1);
      a.failedCall("dense", 500, 0, "CANCELLED"); // would be a bound in a mixed run; not here
    }
    finalState("dense", 0, 201);                // 200 reserved: 100 received, 93 held, 7 lost
    log.line("final-held", "dense", "dc:dc1:0", 93);
    log.fault(5, "server-restart", 0, "server-0");
    log.line("stopped", "server-0", 143, 93, 7, 900); // the server's own account: 7 not given back

    Checker.Report report = check();

    assertThat(report.lost()).isEqualTo(7);
    assertThat(report.lostBound()).isZero();
    assertThat(report.restartLost()).isEqualTo(7);
    assertThat(report.reported()).isEqualTo(7);
    assertThat(report.ok()).isFalse();
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("restart_lost: 7 IDs lost in a run of planned restarts only beyond what the servers counted")
        .contains("restart_lost=7 restarts_only seed=99 FAILED");
  }

  @Test
  void should_blame_the_restarts_for_what_is_lost_beyond_what_the_servers_counted_outside_their_stops()
      throws Exception {
    log.line("kinds", "rolling-restart");
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 0, 1, 100, 1);
    }
    finalState("dense", 0, 216);                 // 215 reserved: 100 received, 100 held, 15 lost
    log.line("final-held", "dense", "dc:dc1:0", 100);
    log.fault(5, "rolling-restart", 0, "[server-0,server-1]");
    // server-1 had counted 10 lost (a compare-and-set it could not settle) before its SIGTERM: not the stop's
    log.line("reported", "server-0", "stop", 0, 0);
    log.line("stopped", "server-0", 143, 50, 0, 900);
    log.line("reported", "server-1", "stop", 0, 10);
    log.line("stopped", "server-1", 143, 50, 0, 900);
    log.line("reported", "server-0", "end", 0, 0);
    log.line("reported", "server-1", "end", 0, 0);

    Checker.Report report = check();

    assertThat(report.lost()).isEqualTo(15);
    assertThat(report.lostBound()).isEqualTo(10);
    assertThat(report.restartLost()).isEqualTo(5);
    assertThat(report.ok()).isFalse();
  }

  @Test
  void should_pass_a_run_of_planned_restarts_whose_only_losses_the_servers_counted_before_their_stops()
      throws Exception {
    log.line("kinds", "rolling-restart");
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 0, 1, 100, 1);
    }
    finalState("dense", 0, 211);                 // 10 lost
    log.line("final-held", "dense", "dc:dc1:0", 100);
    log.fault(5, "rolling-restart", 0, "[server-0]");
    log.line("reported", "server-0", "stop", 0, 10);
    log.line("stopped", "server-0", 143, 50, 0, 900);
    log.line("reported", "server-0", "end", 0, 0);

    Checker.Report report = check();

    assertThat(report.lost()).isEqualTo(10);
    assertThat(report.restartLost()).isZero();
    assertThat(report.ok()).isTrue();
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("lost=10 lost_bound=10 reported=10 faults=1 restarts=1 returned=50 failed_stops=0 restart_lost=0");
  }

  @Test
  void should_give_planned_restarts_no_bound_in_a_mixed_run() throws Exception {
    log.line("kinds", "server-kill,server-restart");
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 0, 1, 100, 1);
    }
    finalState("dense", 0, 161);                // 60 lost
    log.fault(5, "server-kill", 50, "server-1");
    log.fault(6, "server-restart", 0, "server-0");
    log.line("stopped", "server-0", 143, 10, 0, 900);

    Checker.Report report = check();

    assertThat(report.restartsOnly()).isFalse();
    assertThat(report.lostBound()).isEqualTo(50);
    assertThat(report.lost()).isEqualTo(60);
    assertThat(report.ok()).isFalse();
  }

  @Test
  void should_fail_a_run_in_which_a_planned_stop_did_not_end_in_time() throws Exception {
    log.line("kinds", "rolling-restart");
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 0, 1, 100, 1);
    }
    finalState("dense", 0, 101);
    log.fault(5, "rolling-restart", 0, "[server-0]");
    log.line("stopped", "server-0", -1, -1, -1, 60_000); // killed after the timeout: logged nothing

    Checker.Report report = check();

    assertThat(report.lost()).isZero();
    assertThat(report.failedStops()).isEqualTo(1);
    assertThat(report.ok()).isFalse();
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("failed_stops: server-0 did not exit within its time after SIGTERM (60000 ms) and was killed");
  }

  @Test
  void should_report_by_fault_kind_what_was_received_duplicated_and_counted_while_each_held_and_after()
      throws Exception {
    long ms = 1_000_000;
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock);
        Recorder b = new Recorder(dir.resolve("client-1.bin"), clock)) {
      a.range("dense", 0, 0, 2_000 * ms, 1, 100, 1);      // during the partition and the burst
      a.range("dense", 0, 0, 5_000 * ms, 101, 50, 1);     // 2 s after the partition healed
      b.range("dense", 1, 0, 15_000 * ms, 151, 30, 1);    // during the Cassandra kill
      b.range("dense", 1, 0, 25_000 * ms, 181, 20, 1);    // 5 s after it
      a.range("dense", 0, 0, 50_000 * ms, 195, 10, 1);    // 195..200 again: 6 duplicates, of the kill's range
      a.range("dense", 0, 0, 60_000 * ms, 300, 10, 1);    // in no window
    }
    finalState("dense", 0, 310);
    log.fault(1_000, "dc-partition", 500, "dc1|dc2 fault-0 ms=2000");
    log.fault(1_500, "advance-burst", 0, "dense calls=1 base-floor=0 during=dc-partition:dc1|dc2");
    log.line("advance", "dense", 0, 2_400 * ms, "ok", 1_600 * ms, "server-0");
    log.window("-", "advance-burst", 1_500, 2_500, "dense calls=1");
    log.window("0", "dc-partition", 1_000, 3_000, "dc1|dc2 fault-0");
    log.fault(10_000, "cassandra-kill", 700, "dc2b restart-after-ms=2000 ms=2000");
    log.window("1", "cassandra-kill", 10_000, 20_000, "dc2b");
    log.fault(30_000, "server-kill", 300, "server-1");
    log.window("2", "server-kill", 30_000, 31_000, "server-1");
    log.line("reported", "server-1", "kill", 40, 8);
    // The servers' counters at the start of each fault, before the kill, from the restart, at the end.
    log.counters("0", "server-0", 1, 0, Map.of("global:unknown", 0L));
    log.counters("0", "server-1", 1, 5, Map.of());
    log.counters("1", "server-0", 1, 100, Map.of("global:unknown", 3L, "global:resolved_applied", 2L,
        "global:resolved_ambiguous", 1L, "dc:unknown", 1L, "dc:unresolved", 1L, "dc:attempts", 40L));
    log.counters("1", "server-1", 1, 5, Map.of());
    log.counters("2", "server-0", 1, 150, Map.of("global:unknown", 4L, "global:resolved_applied", 3L,
        "global:resolved_ambiguous", 1L, "dc:unknown", 1L, "dc:unresolved", 1L, "dc:attempts", 50L));
    log.counters("2", "server-1", 1, 5, Map.of());
    log.counters("2", "server-1", 1, 8, Map.of());      // just before its kill -9
    log.counters("2", "server-1", 2, 0, Map.of());      // its new incarnation
    log.counters("end", "server-0", 1, 150, Map.of("global:unknown", 4L, "global:resolved_applied", 3L,
        "global:resolved_ambiguous", 1L, "dc:unknown", 1L, "dc:unresolved", 1L, "dc:attempts", 50L));
    log.counters("end", "server-1", 2, 4, Map.of("dc:unknown", 2L, "dc:resolved_not_applied", 2L));

    Checker.Report report = check();

    FaultTable.Row partition = report.kind("dc-partition").orElseThrow();
    assertThat(partition.applied()).isEqualTo(1);
    assertThat(partition.heldMillis()).isEqualTo(2_000);
    assertThat(partition.idsDuring()).isEqualTo(100);
    assertThat(partition.idsAfter()).isEqualTo(50);
    assertThat(partition.duplicates()).isZero();
    assertThat(partition.advancesOk()).isEqualTo(1);
    assertThat(partition.lostCounted()).isEqualTo(100);
    assertThat(partition.lostBound()).isEqualTo(500);
    assertThat(partition.cas()).containsEntry("unknown", 4L).containsEntry("resolved_applied", 2L)
        .containsEntry("resolved_ambiguous", 1L).containsEntry("unresolved", 1L).containsEntry("attempts", 40L);

    FaultTable.Row kill = report.kind("cassandra-kill").orElseThrow();
    assertThat(kill.idsDuring()).isEqualTo(30);
    assertThat(kill.idsAfter()).isEqualTo(20);
    assertThat(kill.duplicates()).isEqualTo(6);
    assertThat(kill.lostCounted()).isEqualTo(50);
    assertThat(kill.cas()).containsEntry("unknown", 1L).containsEntry("resolved_applied", 1L)
        .containsEntry("attempts", 10L);

    FaultTable.Row serverKill = report.kind("server-kill").orElseThrow();
    assertThat(serverKill.idsDuring() + serverKill.idsAfter()).isZero();
    assertThat(serverKill.lostCounted()).as("3 before the kill, 4 by the new incarnation").isEqualTo(7);
    assertThat(serverKill.heldAtKills()).isEqualTo(40);
    assertThat(serverKill.cas()).containsEntry("unknown", 2L).containsEntry("resolved_not_applied", 2L);

    FaultTable.Row burst = report.kind("advance-burst").orElseThrow();
    assertThat(burst.idsDuring()).isEqualTo(100);
    assertThat(burst.idsAfter()).isEqualTo(50);
    assertThat(burst.advancesOk()).isEqualTo(1);
    assertThat(burst.lostCounted()).as("a burst beside a fault: its counts are the fault's").isZero();

    assertThat(report.duplicates()).isEqualTo(6);
    assertThat(report.byKind()).extracting(FaultTable.Row::kind)
        .containsExactly("server-kill", "advance-burst", "dc-partition", "cassandra-kill");
    String printed = this.printed.toString(StandardCharsets.UTF_8);
    assertThat(printed).contains("by fault kind").containsPattern("(?m)^dc-partition +1 +2\\.0 +100 +50 +0 +1/0 +100 ");
    assertThat(printed.strip()).as("the summary keeps its place: the last two lines")
        .containsPattern("checked ids=220 duplicates=6 .*\ncas: applied=0 conflict=0 unknown=0[^\n]*$");
  }

  private static final long MS = 1_000_000;

  /** A strict client's call as its interceptor records it: each range, then the call whole. */
  private static void strictCall(Recorder r, int server, long startMs, long endMs, String outcome, int unmarked,
      long... ranges) {
    for (int i = 0; i < ranges.length; i += 3) {
      r.range("strict", server, startMs * MS, endMs * MS, ranges[i], ranges[i + 1], ranges[i + 2]);
    }
    if (!outcome.equals("OK")) {
      r.failedCall("strict", 1, ranges.length == 0 ? 0 : 1, outcome.split(":")[0]);
    }
    r.call("strict", server, startMs * MS, endMs * MS, outcome, unmarked, ranges);
  }

  private void strictSequence() {
    log.sequence(new SequenceSpec("strict", 1, Long.MAX_VALUE, 1, 100, 1_000, "dc1"));
  }

  @Test
  void should_pass_strict_calls_in_order_and_report_failures_gaps_and_take_overs() throws Exception {
    strictSequence();
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock);
        Recorder b = new Recorder(dir.resolve("client-1.bin"), clock)) {
      strictCall(a, 0, 10, 20, "OK", 0, 1, 1, 1);
      strictCall(a, 1, 30, 40, "OK", 0, 2, 3, 1);
      strictCall(b, 2, 35, 50, "OK", 0, 5, 1, 1);      // overlaps the call before: may be above or below it
      strictCall(b, 0, 45, 55, "OK", 0, 6, 1, 1);      // above 1 and 2..4, which ended before it started
      strictCall(a, 1, 60, 70, "UNAVAILABLE:OWNER_UNAVAILABLE", 0);
      strictCall(b, 2, 80, 90, "OK", 0, 7, 2, 1);
    }
    finalState("strict", 0, 9);
    log.line("owner", "strict", 0, "10.77.0.101:5000", 1);
    log.line("owner", "strict", 57, "-", "-");
    log.line("owner", "strict", 85, "10.77.0.103:5002", 2);
    log.line("owner", "strict", 86, "10.77.0.101:5000", 1); // a server that still showed the old row
    log.line("owner", "strict", 87, "10.77.0.103:5002", 2); // not a second take-over
    log.fault(56, "owner-kill", 0, "server-0");
    log.window("0", "owner-kill", 56, 85, "server-0");

    Checker.Report report = check();

    String out = printed.toString(StandardCharsets.UTF_8);
    assertThat(report.strict().violations()).isZero();
    assertThat(report.strict().calls()).isEqualTo(6);
    assertThat(report.strict().succeeded()).isEqualTo(5);
    assertThat(report.strict().ownerUnavailable()).isEqualTo(1);
    assertThat(report.strict().takeovers()).isEqualTo(1);
    assertThat(report.strict().longestGapNanos()).isEqualTo(35 * MS);
    assertThat(report.ids()).isEqualTo(8);
    assertThat(report.lost()).isZero();
    assertThat(report.ok()).isTrue();
    assertThat(out)
        .contains("strict: sequences=1 calls=6 ok=5 failed=1 owner_unavailable=1 judged=5 ids=8 order_violations=0"
            + " unmarked=0 max_unavailable_s=0.035 (from 0.055s) takeovers=1 owner_epochs=1..2"
            + " failures={UNAVAILABLE:OWNER_UNAVAILABLE=1}\nchecked ids=8 ")
        .contains(" bad_calls=0 order_violations=0 lost=0 ")
        .contains("strict calls by fault kind")
        .containsPattern("(?m)^owner-kill +0/1 +1/0 +0\\.0$");
  }

  @Test
  void should_fail_strict_calls_out_of_order_and_still_count_their_duplicates() throws Exception {
    strictSequence();
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock);
        Recorder b = new Recorder(dir.resolve("client-1.bin"), clock)) {
      strictCall(a, 0, 10, 20, "OK", 0, 10, 1, 1);
      strictCall(b, 1, 30, 40, "OK", 0, 5, 1, 1);      // after 10 ended, below it: out of order
      strictCall(a, 2, 50, 60, "OK", 0, 10, 1, 1);     // 10 again: a duplicate, and out of order
      strictCall(b, 0, 70, 80, "DEADLINE_EXCEEDED", 0, 11, 1, 1); // failed after a range: handed out, in order
    }
    finalState("strict", 0, 12);

    Checker.Report report = check();

    String out = printed.toString(StandardCharsets.UTF_8);
    assertThat(report.strict().violations()).isEqualTo(2);
    assertThat(report.strict().judged()).isEqualTo(4);
    assertThat(report.duplicates()).isEqualTo(1);
    assertThat(report.ok()).isFalse();
    assertThat(out)
        .contains("order_violations: strict: client-1 server-1 call 0.030000s-0.040000s IDs 5..5 (1) OK started after"
            + " client-0 server-0 call 0.010000s-0.020000s IDs 10..10 (1) OK ended")
        .contains(" order_violations=2 ")
        .contains("FAILED");
  }

  @Test
  void should_fail_strict_ranges_that_do_not_say_they_are_strict() throws Exception {
    strictSequence();
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      strictCall(a, 0, 10, 20, "OK", 1, 1, 1, 1);
    }
    finalState("strict", 0, 2);

    Checker.Report report = check();

    assertThat(report.strict().unmarked()).isEqualTo(1);
    assertThat(report.ok()).isFalse();
    assertThat(printed.toString(StandardCharsets.UTF_8)).contains(" order_violations=0 unmarked=1 ");
  }

  @Test
  void should_not_blame_planned_restarts_for_what_a_strict_sequence_s_stopping_owner_held() throws Exception {
    strictSequence();
    log.line("kinds", "rolling-restart");
    try (Recorder a = new Recorder(dir.resolve("client-0.bin"), clock)) {
      a.range("dense", 0, 0, 1, 100, 1);
      strictCall(a, 0, 10, 20, "OK", 0, 1, 1, 1);
      strictCall(a, 0, 30, 40, "OK", 0, 102, 1, 1);  // a new owner, from the next node block
    }
    finalState("dense", 0, 101);
    finalState("strict", 0, 201);                    // 198 never received: the old owner's block and more
    log.fault(5, "rolling-restart", 0, "[server-0,server-1]");
    log.line("stopped", "server-0", 143, 0, 99, 900);
    log.line("stopped", "server-1", 143, 0, 0, 800);

    Checker.Report report = check();

    assertThat(report.lost()).isEqualTo(198);
    assertThat(report.lostBound()).isEqualTo(2 * (100 + 1_000));
    assertThat(report.restartLost()).isZero();
    assertThat(report.ok()).isTrue();
    assertThat(printed.toString(StandardCharsets.UTF_8)).contains("strict sequences lost 198, not blamed on the restarts");
  }

  @Test
  void should_fail_a_run_that_did_not_record_its_end() throws Exception {
    log.close();

    Checker.Report report = Checker.check(dir, new PrintStream(printed, true, StandardCharsets.UTF_8));

    assertThat(report.complete()).isFalse();
    assertThat(report.ok()).isFalse();
  }
}
