package dev.idgen.bench.scaling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.idgen.bench.scaling.CapacityModel.Load;
import dev.idgen.bench.scaling.CapacityModel.PoolRun;
import dev.idgen.bench.scaling.CapacityModel.Sizing;
import dev.idgen.bench.scaling.CapacityModel.Workload;
import org.junit.jupiter.api.Test;

/** The capacity arithmetic follows the sizing rule of docs/operations.md, and the simulation agrees with it. */
class CapacityModelTest {

  private static final Sizing DEFAULTS = Sizing.DEFAULTS;

  @Test
  void should_refill_a_reserve_every_75_seconds_until_the_cap_binds() {
    // A step is a quarter of 5 minutes of the rate: 75 s of it.
    assertThat(DEFAULTS.nodeStep(1_000) / 1_000).isCloseTo(75, within(1e-9));
    // At 1M IDs/s the cap binds: L = 100 M / 1.25 = 80 M, step 20 M (0.05 CAS per million IDs).
    assertThat(DEFAULTS.nodeStep(1_000_000)).isCloseTo(20_000_000, within(1e-6));
    // Slow sequences refill by the minimum block.
    assertThat(DEFAULTS.nodeStep(0.1)).isEqualTo(100);
  }

  @Test
  void should_count_one_node_reservation_per_server_stripe_and_refill_step() {
    Load load = CapacityModel.load(new Workload(1, 20, 10_000, 1, 20), DEFAULTS);

    // 1 ID/s per server and stripe: a step of 100 IDs (the minimum; 75 would be a quarter of 5 minutes).
    assertThat(load.casPerPoolPartition()).isCloseTo(20 * 0.01, within(1e-3));
    assertThat(load.poolCasPerDc()).isCloseTo(10_000 * 20 * 0.01, within(20.0));
    // The monitor reads the cursor and pool of at most 50 sequences per server every 15 s, however many are loaded.
    assertThat(load.monitorReadsPerDc()).isCloseTo(50 * 2 * 20 / 15.0, within(1e-6));
    assertThat(CapacityModel.load(new Workload(1, 20, 20, 1, 20), DEFAULTS).monitorReadsPerDc())
        .isCloseTo(20 * 2 * 20 / 15.0, within(1e-6));
  }

  @Test
  void should_never_conflict_with_one_server_and_conflict_more_with_more_servers() {
    Sizing small = DEFAULTS.withNodeCap(1_000);

    PoolRun one = CapacityModel.simulatePool(1, 20_000, small, 7, 60, 1);
    PoolRun eight = CapacityModel.simulatePool(8, 20_000, small, 7, 60, 1);

    assertThat(one.conflicts()).isZero();
    // 20,000 IDs/s in steps of 200 IDs: 100 successful reservations per second, whoever makes them.
    assertThat((one.attempts() - one.conflicts()) / 60.0).isCloseTo(100, within(2.0));
    // Eight servers race for the row: some attempts lose, and a server that waits too long runs dry (the
    // IDs it could not hand out are not reserved later), so never more successful reservations than that.
    assertThat(eight.conflicts()).isPositive();
    assertThat((eight.attempts() - eight.conflicts()) / 60.0).isBetween(50.0, 102.0);
  }
}
