package dev.idgen.core.store.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.SequenceDefinition;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DcRateTest {
  private static final SequenceDefinition SEQ =
      new SequenceDefinition("s", 1, Long.MAX_VALUE, 1, 10_000, 1_000_000);
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  @Test
  void should_start_with_ten_node_blocks_before_any_rate_is_known() {
    DcRate rate = new DcRate(Duration.ofHours(1));
    assertThat(rate.blockSize(SEQ)).isEqualTo(100_000);
    rate.observe(0, 0);
    assertThat(rate.blockSize(SEQ)).as("one observation is no interval").isEqualTo(100_000);
  }

  @Test
  void should_size_blocks_to_last_the_target_runway_at_the_datacenters_rate() {
    DcRate rate = new DcRate(Duration.ofHours(1));
    rate.observe(0, 0);
    rate.observe(10 * SECOND, 1_500); // 150 IDs/s: an hour is 540,000
    assertThat(rate.idsPerSecond()).isEqualTo(150.0);
    assertThat(rate.blockSize(SEQ)).isEqualTo(540_000);
  }

  @Test
  void should_keep_blocks_between_ten_node_blocks_and_dc_block_size() {
    DcRate quiet = new DcRate(Duration.ofHours(1));
    quiet.observe(0, 0);
    quiet.observe(100 * SECOND, 10); // 0.1 IDs/s
    assertThat(quiet.blockSize(SEQ)).isEqualTo(100_000);

    DcRate busy = new DcRate(Duration.ofHours(1));
    busy.observe(0, 0);
    busy.observe(SECOND, 50_000); // 50,000 IDs/s
    assertThat(busy.blockSize(SEQ)).isEqualTo(1_000_000);
  }

  @Test
  void should_average_intervals_and_ignore_ones_too_short_to_measure() {
    DcRate rate = new DcRate(Duration.ofHours(1));
    rate.observe(0, 0);
    rate.observe(SECOND, 100);
    rate.observe(SECOND + 1_000, 1_000_000); // 1 µs later: merged into the next interval, not a spike
    assertThat(rate.idsPerSecond()).isEqualTo(100.0);
    rate.observe(2 * SECOND, 1_000_100);
    assertThat(rate.idsPerSecond()).isGreaterThan(100.0).isLessThan(1_000_000.0);
  }

  @Test
  void should_use_the_cap_when_ten_node_blocks_exceed_it() {
    SequenceDefinition tight = new SequenceDefinition("t", 1, Long.MAX_VALUE, 1, 500, 2_000);
    assertThat(new DcRate(Duration.ofHours(1)).blockSize(tight)).isEqualTo(2_000);
  }
}
