package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SequenceDefinitionTest {

  @Test
  void should_split_the_space_into_stripes() {
    SequenceDefinition d = new SequenceDefinition("s", 10, 20, 3, 5, 5);
    // stripe 0: 10 13 16 19; stripe 1: 11 14 17 20; stripe 2: 12 15 18
    assertThat(d.stripeSize(0)).isEqualTo(4);
    assertThat(d.stripeSize(1)).isEqualTo(4);
    assertThat(d.stripeSize(2)).isEqualTo(3);
    assertThat(d.idAt(1, 3)).isEqualTo(20);
    assertThat(d.range(2, 1, 3)).isEqualTo(new IdRange(15, 2, 3));
    assertThat(d.firstIndexAbove(0, 13)).isEqualTo(2);
    assertThat(d.firstIndexAbove(0, 9)).isZero();
    assertThat(d.firstIndexAbove(2, 100)).isEqualTo(3);
  }

  @Test
  void should_give_empty_stripes_when_the_space_is_smaller_than_the_stripes() {
    SequenceDefinition d = new SequenceDefinition("s", 5, 6, 4, 1, 1);
    assertThat(d.stripeSize(0)).isEqualTo(1);
    assertThat(d.stripeSize(1)).isEqualTo(1);
    assertThat(d.stripeSize(2)).isZero();
    assertThat(d.stripeSize(3)).isZero();
  }

  @Test
  void should_not_overflow_near_long_max() {
    SequenceDefinition d = new SequenceDefinition("s", Long.MAX_VALUE - 5, Long.MAX_VALUE, 4, 1, 1);
    assertThat(d.stripeSize(0) + d.stripeSize(1) + d.stripeSize(2) + d.stripeSize(3)).isEqualTo(6);
    assertThat(d.idAt(1, d.stripeSize(1) - 1)).isEqualTo(Long.MAX_VALUE);
    SequenceDefinition full = new SequenceDefinition("f", 0, Long.MAX_VALUE, 1, 1, 1);
    assertThat(full.capacity()).isEqualTo(Long.MAX_VALUE);
    assertThat(full.firstIndexAbove(0, Long.MAX_VALUE)).isEqualTo(full.stripeSize(0));
  }

  @Test
  void should_reject_each_bad_field_naming_it() {
    assertThatThrownBy(() -> new SequenceDefinition("s", -1, 10, 1, 1, 1)).hasMessageContaining("start");
    assertThatThrownBy(() -> new SequenceDefinition("s", 10, 9, 1, 1, 1)).hasMessageContaining("max 9");
    assertThatThrownBy(() -> new SequenceDefinition("s", 1, 9, 0, 1, 1)).hasMessageContaining("stripes");
    assertThatThrownBy(() -> new SequenceDefinition("s", 1, 9, 65, 1, 1)).hasMessageContaining("1 to 64");
    assertThatThrownBy(() -> new SequenceDefinition("s", 1, 9, 1, 0, 1)).hasMessageContaining("node_block_size");
    assertThatThrownBy(() -> new SequenceDefinition("s", 1, 9, 1, 10, 5)).hasMessageContaining("dc_block_size");
    assertThatThrownBy(() -> new SequenceDefinition("-s", 1, 9, 1, 1, 1)).isInstanceOf(InvalidRequestException.class);
    assertThat(SequenceDefinition.checkName("a.b-c_9")).isEqualTo("a.b-c_9");
  }

  @Test
  void should_name_the_bad_field_as_the_api_does() {
    assertThat(fieldOf(() -> new SequenceDefinition("s", -1, 10, 1, 1, 1))).isEqualTo("start");
    assertThat(fieldOf(() -> new SequenceDefinition("s", 10, 9, 1, 1, 1))).isEqualTo("max");
    assertThat(fieldOf(() -> new SequenceDefinition("s", 1, 9, 65, 1, 1))).isEqualTo("stripes");
    assertThat(fieldOf(() -> new SequenceDefinition("s", 1, 9, 1, 0, 1))).isEqualTo("node_block_size");
    assertThat(fieldOf(() -> new SequenceDefinition("s", 1, 9, 1, 10, 5))).isEqualTo("dc_block_size");
    assertThat(fieldOf(() -> new SequenceDefinition("-s", 1, 9, 1, 1, 1))).isEqualTo("name");
    assertThat(fieldOf(() -> SequenceDefinition.checkName(""))).isEqualTo("name");
  }

  private static String fieldOf(Runnable invalid) {
    try {
      invalid.run();
    } catch (InvalidRequestException e) {
      assertThat(e.limit()).isEmpty();
      return e.field();
    }
    throw new AssertionError("no InvalidRequestException");
  }

  @Test
  void should_cut_ranges_at_a_floor() {
    IdRange r = new IdRange(10, 5, 3); // 10 13 16 19 22
    assertThat(r.above(9)).isEqualTo(r);
    assertThat(r.above(13)).isEqualTo(new IdRange(16, 3, 3));
    assertThat(r.above(14)).isEqualTo(new IdRange(16, 3, 3));
    assertThat(r.above(22)).isNull();
    assertThat(r.contains(19)).isTrue();
    assertThat(r.contains(20)).isFalse();
    assertThatThrownBy(() -> new IdRange(Long.MAX_VALUE, 2, 1)).isInstanceOf(IllegalArgumentException.class);
  }
}
