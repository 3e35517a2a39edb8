package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class IdRangeTest {

  @Test
  void should_total_the_ids_of_ranges_of_any_stride() {
    assertThat(IdRange.total(List.of())).isZero();
    assertThat(IdRange.total(List.of(new IdRange(1, 10, 1), new IdRange(100, 3, 4), new IdRange(7, 1, 64))))
        .isEqualTo(14);
  }

  @Test
  void should_refuse_a_range_whose_last_id_does_not_fit_a_long() {
    assertThatThrownBy(() -> new IdRange(Long.MAX_VALUE - 5, 3, 3)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("overflows");
    assertThat(new IdRange(Long.MAX_VALUE - 6, 3, 3).last()).isEqualTo(Long.MAX_VALUE);
  }
}
