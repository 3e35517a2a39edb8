package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RunwayPolicyTest {
  private static final double PER_SECOND = 1e-9; // IDs per nanosecond in one ID per second
  private final RunwayPolicy fiveMinutes = RunwayPolicy.of(Duration.ofMinutes(5), 0.25, 100);

  @Test
  void should_keep_the_runway_at_the_rate_as_the_low_water_mark() {
    assertThat(fiveMinutes.lowWater(200 * PER_SECOND, SequenceDefinition.DEFAULT_NODE_BLOCK_SIZE))
        .isEqualTo(60_000);
    assertThat(fiveMinutes.lowWater(100_000 * PER_SECOND, SequenceDefinition.DEFAULT_NODE_BLOCK_SIZE))
        .as("the default cap does not bind at 100,000 IDs/s").isEqualTo(30_000_000);
    assertThat(fiveMinutes.lowWater(0.01 * PER_SECOND, 1_000_000)).as("a trickle keeps the minimum").isEqualTo(100);
    assertThat(fiveMinutes.lowWater(-1, 1_000_000)).as("no rate measured yet").isEqualTo(100);
  }

  @Test
  void should_keep_mark_plus_step_within_the_cap() {
    assertThat(fiveMinutes.lowWater(1e6 * PER_SECOND, 10_000)).isEqualTo(8_000);
    assertThat(fiveMinutes.maxLowWater(10_000)).isEqualTo(8_000);
    assertThat(fiveMinutes.refillSize(8_000, 7_999, 10_000)).isEqualTo(2_001);
    assertThat(fiveMinutes.refillSize(8_000, 0, 10_000)).isEqualTo(10_000);
    assertThat(fiveMinutes.lowWater(-1, 50)).as("a cap below the minimum wins").isEqualTo(40);
  }

  @Test
  void should_top_up_to_the_mark_plus_a_step_of_at_least_the_minimum() {
    assertThat(fiveMinutes.refillSize(60_000, 59_990, Long.MAX_VALUE / 4)).isEqualTo(10 + 15_000);
    assertThat(fiveMinutes.refillSize(100, 99, 1_000_000)).as("the step is at least the minimum").isEqualTo(101);
  }

  @Test
  void should_state_the_guaranteed_runway() {
    assertThat(RunwayPolicy.guaranteedSeconds(60_000, 200)).isEqualTo(300.0);
    assertThat(RunwayPolicy.guaranteedSeconds(60_000, 0)).isInfinite();
  }

  @Test
  void should_take_at_most_one_percent_of_what_is_left_but_not_less_than_a_thousand() {
    long int32 = Integer.MAX_VALUE;
    assertThat(RunwayPolicy.boundedByRemaining(1_000_000_000L, int32)).isEqualTo(int32 / 100);
    assertThat(RunwayPolicy.boundedByRemaining(5_000, int32)).isEqualTo(5_000);
    assertThat(RunwayPolicy.boundedByRemaining(5_000, 40_000)).isEqualTo(1_000);
    assertThat(RunwayPolicy.boundedByRemaining(5_000, 300)).isEqualTo(300);
    assertThat(RunwayPolicy.boundedByRemaining(Long.MAX_VALUE, Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE / 100);
  }

  @Test
  void should_refuse_settings_outside_their_range() {
    assertThatThrownBy(() -> RunwayPolicy.of(Duration.ZERO, 0.25, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RunwayPolicy.of(Duration.ofSeconds(1), 0, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RunwayPolicy.of(Duration.ofSeconds(1), 0.25, 0)).isInstanceOf(IllegalArgumentException.class);
  }
}
