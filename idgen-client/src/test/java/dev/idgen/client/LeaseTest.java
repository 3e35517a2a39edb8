package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The lease's one bound for the fast paths, and its counter at the end and at expiry. */
class LeaseTest {
  @Test
  void should_end_the_fast_range_at_the_refill_mark_or_at_the_end_when_the_lease_has_no_mark() {
    assertThat(new Lease(100, 1, 10, 6, false, 0).fastEnd).isEqualTo(6);
    assertThat(new Lease(100, 1, 10, 0, false, 0).fastEnd).isZero();
    assertThat(new Lease(100, 1, 10, -1, false, 0).fastEnd).isEqualTo(10);
    assertThat(new Lease(100, 1, 10, 10, false, 0).fastEnd).as("a mark past the end is none").isEqualTo(10);
    assertThat(Lease.empty().fastEnd).isZero();
  }

  @Test
  void should_hand_out_no_index_below_the_end_after_an_expiry() {
    Lease lease = new Lease(100, 3, 10, 6, true, 0);
    assertThat(lease.id(lease.take(2))).isEqualTo(100);

    assertThat(lease.expire()).isEqualTo(8);

    assertThat(lease.take(1)).isGreaterThanOrEqualTo(lease.fastEnd).isGreaterThanOrEqualTo(lease.count);
    assertThat(lease.used()).isEqualTo(2);
    assertThat(lease.remaining()).isZero();
  }
}
