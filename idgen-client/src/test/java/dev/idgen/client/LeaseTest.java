package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The lease's counter at expiry: one atomic step, after which no index is an ID. */
class LeaseTest {
  @Test
  void should_hand_out_no_index_below_the_end_after_an_expiry() {
    Lease lease = new Lease(100, 3, 10, 6, true, 0);
    assertThat(lease.id(lease.take(2))).isEqualTo(100);

    assertThat(lease.expire()).isEqualTo(8);

    assertThat(lease.take(1)).isGreaterThanOrEqualTo(lease.count);
    assertThat(lease.used()).isEqualTo(2);
    assertThat(lease.remaining()).isZero();
    assertThat(lease.expire()).as("a second expiry drops nothing").isZero();
  }
}
