package dev.idgen.core.store.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.SequenceDefinition;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DcRateTest {
  private static final SequenceDefinition SEQ = SequenceDefinition.withDefaults("s");
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
  private static final long MINUTE = 60 * SECOND;
  private static final Duration DAY = Duration.ofHours(24);

  @Test
  void should_keep_ten_node_reservations_before_any_rate_is_known() {
    DcRate rate = new DcRate(DAY, 0.25);
    rate.request(1_000);
    assertThat(rate.lowWater(SEQ)).isEqualTo(10_000);
    rate.observe(0, 0);
    rate.observe(2 * SECOND, 76_000);
    assertThat(rate.lowWater(SEQ)).as("nothing measured over a minute yet").isEqualTo(10_000);
    // From empty: the low-water mark plus a step of at least the minimum (ten node reservations).
    assertThat(rate.refillSize(SEQ, 0)).isEqualTo(20_000);
    assertThat(rate.refillSize(SEQ, 4_000)).isEqualTo(16_000);
  }

  @Test
  void should_keep_the_isolation_runway_at_the_datacenters_rate_with_default_caps() {
    DcRate rate = new DcRate(DAY, 0.25);
    rate.request(1_000);
    rate.observe(SECOND, 75_000); // a first reservation that filled this server's reserve: not a rate
    rate.observe(76 * SECOND, 90_000); // 15,000 in 75 s: 200 IDs/s, a day is 17,280,000
    assertThat(rate.idsPerSecond()).isEqualTo(200.0);
    assertThat(rate.lowWater(SEQ)).isEqualTo(17_280_000);
    assertThat(rate.refillSize(SEQ, 17_000_000)).as("up to the mark plus a quarter")
        .isEqualTo(17_280_000 - 17_000_000 + 4_320_000);

    DcRate busy = new DcRate(DAY, 0.25);
    busy.observe(0, 0);
    busy.observe(MINUTE, 6_000_000); // 100,000 IDs/s: the default cap must not bind
    assertThat(busy.lowWater(SEQ)).isEqualTo(8_640_000_000L);
  }

  @Test
  void should_keep_the_pool_within_the_sequences_cap() {
    SequenceDefinition capped = new SequenceDefinition("t", 1, Long.MAX_VALUE, 1, 500, 2_000_000);
    DcRate rate = new DcRate(DAY, 0.25);
    rate.observe(0, 0);
    rate.observe(MINUTE, 3_000_000);
    assertThat(rate.lowWater(capped)).isEqualTo(1_600_000); // cap / (1 + step)
    assertThat(rate.refillSize(capped, 1_500_000)).as("never above the cap").isEqualTo(500_000);
  }

  @Test
  void should_not_read_this_servers_fills_as_rate() {
    DcRate rate = new DcRate(DAY, 0.25);
    rate.request(200);
    rate.observe(0, 200); // the first reservation, from empty
    rate.request(500);
    rate.observe(SECOND / 2, 700); // growing: 500 > 2 x 200
    rate.request(75_000);
    rate.observe(SECOND, 75_700); // the fill to 5 minutes at 200 IDs/s
    rate.request(15_000);
    rate.observe(76 * SECOND, 90_700); // a steady step, 75 s later
    assertThat(rate.idsPerSecond()).as("15,000 in 75 s, the fills left out").isEqualTo(200.0);
  }

  @Test
  void should_average_intervals_and_merge_ones_too_short_to_average_the_steps_out() {
    DcRate rate = new DcRate(DAY, 0.25);
    rate.observe(0, 0);
    rate.observe(MINUTE, 6_000); // 100 IDs/s
    rate.observe(MINUTE + SECOND, 1_000_000); // a step a second later: merged into the next interval
    assertThat(rate.idsPerSecond()).isEqualTo(100.0);
    rate.observe(2 * MINUTE + SECOND, 1_006_000);
    assertThat(rate.idsPerSecond()).isGreaterThan(100.0).isLessThan(1_000_000.0);
  }
}
