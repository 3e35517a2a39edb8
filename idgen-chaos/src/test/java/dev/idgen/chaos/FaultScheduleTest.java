package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The first rounds of a schedule: every kind as many times a round as asked, and a kind that only has
 * something to do after another (a decommission after a bootstrap) never before it, whatever the seed.
 */
class FaultScheduleTest {
  private static final List<String> MEMBERSHIP =
      List.of("decommission", "replace", "bootstrap", "repair-cleanup", "add-dc", "clock-server");

  @Test
  void should_give_every_kind_its_count_in_each_round() {
    List<String> faults = FaultSchedule.firstRounds(MEMBERSHIP, 5, Map.of("clock-server", 4), new Random(1));

    assertThat(faults).hasSize(5 * 9);
    for (int r = 0; r < 5; r++) {
      List<String> round = faults.subList(r * 9, r * 9 + 9);
      for (String k : MEMBERSHIP) {
        assertThat(Collections.frequency(round, k)).as(k + " in round " + r).isEqualTo(k.equals("clock-server") ? 4 : 1);
      }
    }
  }

  @Test
  void should_put_each_decommission_after_a_bootstrap_of_its_round_for_every_seed() {
    for (long seed = 0; seed < 200; seed++) {
      List<String> faults = FaultSchedule.firstRounds(MEMBERSHIP, 3,
          Map.of("bootstrap", 2, "decommission", 2), new Random(seed));
      for (int r = 0; r < 3; r++) {
        List<String> round = faults.subList(r * 8, r * 8 + 8);
        int joined = 0;
        for (String k : round) {
          if (k.equals("bootstrap")) {
            joined++;
          } else if (k.equals("decommission")) {
            assertThat(joined).as("seed " + seed + " round " + r + ": " + round).isPositive();
            joined--;
          }
        }
      }
    }
  }

  @Test
  void should_shuffle_the_rounds_apart_and_keep_one_round_by_default() {
    List<String> faults = FaultSchedule.firstRounds(MEMBERSHIP, 4, Map.of(), new Random(7));
    assertThat(faults.subList(0, 6)).containsExactlyInAnyOrderElementsOf(MEMBERSHIP);
    assertThat(List.of(faults.subList(0, 6), faults.subList(6, 12), faults.subList(12, 18), faults.subList(18, 24)))
        .as("four rounds in one order each would not test the orders").doesNotHaveDuplicates();
    assertThat(FaultSchedule.firstRounds(MEMBERSHIP, 1, Map.of(), new Random(7))).hasSize(6);
  }
}
