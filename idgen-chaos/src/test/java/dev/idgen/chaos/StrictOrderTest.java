package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import dev.idgen.chaos.StrictOrder.Call;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The strict order check on hand-made histories, and against a brute-force check on random ones. */
class StrictOrderTest {

  private static Call call(long start, long end, long min, long max) {
    return new Call(0, 0, start, end, min, max, max - min + 1, "OK");
  }

  @Test
  void should_pass_calls_in_sequence_with_increasing_ids() {
    List<Call> calls = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      calls.add(call(10L * i, 10L * i + 5, 3L * i + 1, 3L * i + 3));
    }
    Collections.shuffle(calls, new Random(1));

    StrictOrder.Result result = StrictOrder.check(calls, 10);

    assertThat(result.calls()).isEqualTo(100);
    assertThat(result.violations()).isZero();
    assertThat(result.examples()).isEmpty();
  }

  @Test
  void should_flag_a_call_with_lower_ids_than_a_call_that_ended_before_it_started() {
    Call earlier = call(0, 10, 100, 104);
    Call later = call(20, 30, 50, 50);
    Call fine = call(40, 50, 200, 200);

    StrictOrder.Result result = StrictOrder.check(List.of(fine, later, earlier), 10);

    assertThat(result.violations()).isEqualTo(1);
    assertThat(result.examples()).singleElement().satisfies(v -> {
      assertThat(v.later()).isEqualTo(later);
      assertThat(v.earlier()).isEqualTo(earlier);
      assertThat(v.describe()).contains("IDs 50..50").contains("IDs 100..104").contains("not above");
    });
  }

  @Test
  void should_flag_ids_that_interleave_with_an_earlier_call_and_count_each_late_call_once() {
    // The later call's lowest ID is below the earlier one's highest: out of order although its highest is above.
    Call a = call(0, 10, 100, 110);
    Call b = call(5, 12, 200, 200);
    Call c = call(20, 30, 105, 300); // after a and b, below both
    StrictOrder.Result result = StrictOrder.check(List.of(a, b, c), 10);

    assertThat(result.violations()).isEqualTo(1);
    assertThat(result.examples().get(0).earlier()).isEqualTo(b); // the one with the highest ID
  }

  @Test
  void should_pass_overlapping_calls_in_any_order() {
    // b starts before a ends: either order is allowed; c starts exactly when a ends (not "before"), and
    // overlaps b.
    Call a = call(0, 20, 100, 100);
    Call b = call(10, 30, 50, 50);
    Call c = call(20, 40, 40, 40);

    assertThat(StrictOrder.check(List.of(a, b, c), 10).violations()).isZero();
    assertThat(StrictOrder.check(List.of(c, b, a), 10).violations()).isZero();
  }

  @Test
  void should_agree_with_a_brute_force_check_on_random_histories() {
    Random random = new Random(20261125);
    long withViolations = 0;
    for (int round = 0; round < 2_000; round++) {
      int n = 1 + random.nextInt(round < 1_000 ? 12 : 200);
      boolean valid = random.nextBoolean();
      List<Call> calls = valid ? validHistory(random, n) : randomHistory(random, n);

      StrictOrder.Result result = StrictOrder.check(calls, 3);

      long expected = bruteForce(calls);
      assertThat(result.violations()).as("round %d, %s", round, calls).isEqualTo(expected);
      assertThat(result.examples()).hasSize((int) Math.min(3, expected));
      for (StrictOrder.Violation v : result.examples()) {
        assertThat(v.earlier().endNanos()).isLessThan(v.later().startNanos());
        assertThat(v.earlier().max()).isGreaterThanOrEqualTo(v.later().min());
      }
      if (valid) {
        assertThat(expected).as("a linearizable history, round %d", round).isZero();
      }
      if (expected > 0) {
        withViolations++;
      }
    }
    assertThat(withViolations).as("random histories with violations").isGreaterThan(200);
  }

  /**
   * Calls whose IDs were cut, in increasing order, at a moment within each call (its linearization point):
   * what a correct owner produces, with overlaps and ties in time.
   */
  private static List<Call> validHistory(Random random, int n) {
    long[][] spans = new long[n][];
    for (int i = 0; i < n; i++) {
      long start = random.nextInt(1_000);
      long end = start + random.nextInt(100);
      long point = start + (end > start ? random.nextInt((int) (end - start + 1)) : 0);
      spans[i] = new long[] {start, end, point, 1 + random.nextInt(5)};
    }
    java.util.Arrays.sort(spans, (x, y) -> Long.compare(x[2], y[2]));
    List<Call> calls = new ArrayList<>();
    long next = 1 + random.nextInt(10);
    for (long[] s : spans) {
      calls.add(new Call(0, 0, s[0], s[1], next, next + s[3] - 1, s[3], "OK"));
      next += s[3] + random.nextInt(3); // gaps are allowed
    }
    Collections.shuffle(calls, random);
    return calls;
  }

  private static List<Call> randomHistory(Random random, int n) {
    List<Call> calls = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long start = random.nextInt(1_000);
      long end = start + random.nextInt(100);
      long min = random.nextInt(500);
      calls.add(call(start, end, min, min + random.nextInt(4)));
    }
    return calls;
  }

  /** Calls with an ID at or below the highest ID of some call that ended strictly before they started. */
  private static long bruteForce(List<Call> calls) {
    long violations = 0;
    for (Call c : calls) {
      for (Call d : calls) {
        if (d.endNanos() < c.startNanos() && d.max() >= c.min()) {
          violations++;
          break;
        }
      }
    }
    return violations;
  }

  @Test
  void should_find_the_longest_stretch_between_successful_calls() {
    assertThat(StrictOrder.longestGap(new long[] {})).containsExactly(0, 0);
    assertThat(StrictOrder.longestGap(new long[] {5})).containsExactly(0, 0);
    assertThat(StrictOrder.longestGap(new long[] {1, 2, 10, 11, 15})).containsExactly(2, 10);
  }

  @Test
  void should_name_the_reason_of_a_failed_call() {
    StatusRuntimeException unavailable = StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
        .setCode(Status.Code.UNAVAILABLE.value()).setMessage("no owner")
        .addDetails(Any.pack(ErrorInfo.newBuilder().setDomain("idgen.dev").setReason("OWNER_UNAVAILABLE").build()))
        .build());

    assertThat(RecordingInterceptor.outcome(unavailable.getStatus(), unavailable.getTrailers()))
        .isEqualTo("UNAVAILABLE:OWNER_UNAVAILABLE");
    assertThat(RecordingInterceptor.outcome(Status.DEADLINE_EXCEEDED, new Metadata())).isEqualTo("DEADLINE_EXCEEDED");
    assertThat(RecordingInterceptor.outcome(Status.OK, new Metadata())).isEqualTo("OK");
  }
}
