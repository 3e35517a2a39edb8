package dev.idgen.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** How the load generator spreads calls over many sequences. */
class SequencePickerTest {

  @Test
  void should_give_zipf_probabilities_in_proportion_to_one_over_the_rank() {
    SequencePicker zipf = SequencePicker.zipf(1000, 1.0);

    double sum = 0;
    for (int k = 0; k < 1000; k++) {
      sum += zipf.probability(k);
    }
    assertThat(sum).isCloseTo(1.0, within(1e-9));
    assertThat(zipf.probability(0) / zipf.probability(9)).isCloseTo(10.0, within(1e-6));
  }

  @Test
  void should_pick_indices_in_range_with_the_first_zipf_rank_most_often() {
    SequencePicker zipf = SequencePicker.zipf(100, 1.0);
    SequencePicker uniform = SequencePicker.uniform(100);
    int[] counts = new int[100];

    for (int i = 0; i < 100_000; i++) {
      int z = zipf.next();
      int u = uniform.next();
      assertThat(z).isBetween(0, 99);
      assertThat(u).isBetween(0, 99);
      counts[z]++;
    }

    // P(rank 1) = 1 / H(100) ≈ 0.193; P(rank 100) ≈ 0.0019: the first far ahead of the last.
    assertThat(counts[0]).isGreaterThan(15_000);
    assertThat(counts[0]).isGreaterThan(20 * counts[99]);
  }

  @Test
  void should_always_pick_the_one_sequence_and_refuse_none() {
    assertThat(SequencePicker.zipf(1, 1.0).next()).isZero();
    assertThat(SequencePicker.uniform(1).next()).isZero();
    assertThatThrownBy(() -> SequencePicker.uniform(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SequencePicker.zipf(10, 0)).isInstanceOf(IllegalArgumentException.class);
  }
}
