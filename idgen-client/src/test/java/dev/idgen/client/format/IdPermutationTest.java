package dev.idgen.client.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link IdPermutation}: a bijection of its range (exhaustively on small ranges, sampled on the 32-bit one), fixed by
 * its key and range, and strict about what it is given.
 */
class IdPermutationTest {

  private static final byte[] KEY = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] OTHER_KEY = "fedcba9876543210".getBytes(StandardCharsets.US_ASCII);
  private static final long INT32 = Integer.MAX_VALUE;

  @Test
  void should_be_a_bijection_of_every_small_range() {
    long[] starts = {0, 1, 42_000, Long.MAX_VALUE - 400, Long.MIN_VALUE};
    for (byte[] key : new byte[][] {KEY, OTHER_KEY}) {
      for (long start : starts) {
        for (int size = 1; size <= 300; size++) {
          assertBijection(IdPermutation.create(start, start + size - 1, key));
        }
      }
    }
  }

  @Test
  void should_be_a_bijection_of_a_range_of_two_to_the_sixteen() {
    assertBijection(IdPermutation.create(1, 1 << 16, KEY)); // 17 bits: walks the cycles
    assertBijection(IdPermutation.create(0, (1 << 16) - 1, KEY)); // 16 bits exactly
  }

  @Test
  void should_keep_a_million_ids_of_the_32_bit_range_distinct_inside_it_and_invertible() {
    IdPermutation p = IdPermutation.create(1, INT32, KEY);
    int n = 500_000;
    long[] out = new long[2 * n];
    // The first half million IDs, as a new sequence hands them out, then as many drawn anywhere in the range.
    SplittableRandom random = new SplittableRandom(47);
    long[] in = new long[2 * n];
    for (int i = 0; i < n; i++) {
      in[i] = i + 1L;
      in[n + i] = random.nextLong(n + 1, INT32 + 1);
    }
    for (int i = 0; i < in.length; i++) {
      out[i] = p.apply(in[i]);
      if (out[i] < 1 || out[i] > INT32) {
        throw new AssertionError("apply(" + in[i] + ") = " + out[i] + ", outside [1, 2^31 - 1]");
      }
      if (p.invert(out[i]) != in[i]) {
        throw new AssertionError("invert(apply(" + in[i] + ")) = " + p.invert(out[i]));
      }
    }
    assertThat(distinct(out)).as("distinct results").isEqualTo(distinct(in));
  }

  @Test
  void should_not_keep_the_order_of_consecutive_ids() {
    IdPermutation p = IdPermutation.create(1, INT32, KEY);
    int rising = 0;
    int fixed = 0;
    long previous = p.apply(1);
    int n = 100_000;
    for (long id = 2; id <= n + 1; id++) {
      long next = p.apply(id);
      rising += next > previous ? 1 : 0;
      fixed += next == id ? 1 : 0;
      previous = next;
    }
    // A random order rises half the time (standard deviation 0.16 %); a shift or a reversal, always or never.
    assertThat(rising / (double) n).isBetween(0.48, 0.52);
    assertThat(fixed).isLessThan(5);
  }

  @Test
  void should_give_the_same_mapping_for_the_same_key_and_range_and_another_for_another() {
    IdPermutation p = IdPermutation.create(1, INT32, KEY);
    IdPermutation same = IdPermutation.create(1, INT32, KEY.clone());
    IdPermutation otherKey = IdPermutation.create(1, INT32, OTHER_KEY);
    IdPermutation otherMax = IdPermutation.create(1, INT32 - 1, KEY);
    int equalOtherKey = 0;
    int equalOtherMax = 0;
    for (long id = 1; id <= 10_000; id++) {
      assertThat(same.apply(id)).isEqualTo(p.apply(id));
      equalOtherKey += otherKey.apply(id) == p.apply(id) ? 1 : 0;
      equalOtherMax += otherMax.apply(id) == p.apply(id) ? 1 : 0;
    }
    assertThat(equalOtherKey).as("IDs mapped alike under another key").isLessThan(5);
    assertThat(equalOtherMax).as("IDs mapped alike with another max").isLessThan(5);
  }

  @Test
  void should_map_as_version_1_of_the_derivation_does() {
    // Pinned: a change here would remap every ID already handed out under these keys.
    IdPermutation p = IdPermutation.create(1, INT32, KEY);
    assertThat(new long[] {p.apply(1), p.apply(2), p.apply(3), p.apply(INT32)})
        .containsExactly(PINNED);
  }

  private static final long[] PINNED = {1_218_344_918L, 1_659_405_970L, 691_171_205L, 1_480_355_603L};

  @Test
  void should_stay_inside_the_javascript_safe_range_and_the_whole_long_range() {
    IdPermutation js = IdPermutation.create(1, IdPresets.JAVASCRIPT_SAFE_MAX, KEY);
    IdPermutation all = IdPermutation.create(Long.MIN_VALUE, Long.MAX_VALUE, KEY);
    IdPermutation nonNegative = IdPermutation.create(0, Long.MAX_VALUE, KEY);
    SplittableRandom random = new SplittableRandom(53);
    for (int i = 0; i < 10_000; i++) {
      long id = random.nextLong(1, IdPresets.JAVASCRIPT_SAFE_MAX + 1);
      long out = js.apply(id);
      assertThat(out).isBetween(1L, IdPresets.JAVASCRIPT_SAFE_MAX);
      assertThat((long) (double) out).as("exact as a JavaScript number").isEqualTo(out);
      assertThat(js.invert(out)).isEqualTo(id);

      long any = random.nextLong();
      assertThat(all.invert(all.apply(any))).isEqualTo(any);
      long positive = any & Long.MAX_VALUE;
      assertThat(nonNegative.apply(positive)).isNotNegative();
      assertThat(nonNegative.invert(nonNegative.apply(positive))).isEqualTo(positive);
    }
    assertThat(IdPresets.JAVASCRIPT_SAFE_MAX).isEqualTo(9_007_199_254_740_991L);
    assertThat((double) (IdPresets.JAVASCRIPT_SAFE_MAX + 1)).as("the first integer JavaScript cannot tell apart")
        .isEqualTo((double) (IdPresets.JAVASCRIPT_SAFE_MAX + 2));
  }

  @Test
  void should_refuse_ids_outside_its_range_naming_it() {
    IdPermutation p = IdPermutation.create(10, 20, KEY);
    assertThatThrownBy(() -> p.apply(9)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("id 9 is outside this permutation's range [10, 20]");
    assertThatThrownBy(() -> p.apply(21)).hasMessageContaining("[10, 20]");
    assertThatThrownBy(() -> p.invert(Long.MIN_VALUE)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("permuted -9223372036854775808 is outside this permutation's range [10, 20]");
  }

  @Test
  void should_refuse_an_empty_range_and_a_short_key() {
    assertThatThrownBy(() -> IdPermutation.create(5, 4, KEY)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("max 4 is below start 5: the range [start, max] is empty");
    assertThatThrownBy(() -> IdPermutation.create(1, 100, "secret".getBytes(StandardCharsets.US_ASCII)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("key: 6 bytes (expected: at least 16 random bytes");
    assertThatThrownBy(() -> IdPermutation.create(1, 100, null)).isInstanceOf(NullPointerException.class)
        .hasMessage("key");
  }

  /** How many distinct values {@code values} holds. */
  private static int distinct(long[] values) {
    long[] sorted = values.clone();
    Arrays.sort(sorted);
    int distinct = 1;
    for (int i = 1; i < sorted.length; i++) {
      distinct += sorted[i] != sorted[i - 1] ? 1 : 0;
    }
    return distinct;
  }

  /** Every ID of the range maps inside it, to a different ID each, and back. */
  private static void assertBijection(IdPermutation p) {
    int size = Math.toIntExact(p.max() - p.start() + 1);
    boolean[] seen = new boolean[size];
    for (long id = p.start(); ; id++) {
      long out = p.apply(id);
      int index = (int) (out - p.start());
      if (index < 0 || index >= size || seen[index]) {
        throw new AssertionError(p + ": apply(" + id + ") = " + out + (index < 0 || index >= size
            ? ", outside the range" : ", already the image of another ID"));
      }
      seen[index] = true;
      if (p.invert(out) != id) {
        throw new AssertionError(p + ": invert(apply(" + id + ")) = " + p.invert(out));
      }
      if (id == p.max()) {
        break;
      }
    }
  }
}
