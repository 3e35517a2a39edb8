package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The lease's counter at expiry: one atomic step, after which no index is an ID; and a bulk take, which
 * takes all it asks for or nothing.
 */
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

  @Test
  void should_take_all_the_indexes_asked_for_or_none() {
    Lease lease = new Lease(100, 3, 10, -1, false, 0);
    assertThat(lease.takeAll(4)).isZero();
    assertThat(lease.takeAll(7)).as("6 left: nothing taken").isEqualTo(-1);
    assertThat(lease.taken()).isEqualTo(4);
    assertThat(lease.takeAll(6)).isEqualTo(4);
    assertThat(lease.takeAll(1)).isEqualTo(-1);
    assertThat(lease.used()).isEqualTo(10);

    Lease expired = new Lease(100, 3, 10, -1, true, 0);
    assertThat(expired.expire()).isEqualTo(10);
    assertThat(expired.takeAll(1)).as("nothing after an expiry").isEqualTo(-1);
    assertThat(expired.used()).isZero();
  }
}
