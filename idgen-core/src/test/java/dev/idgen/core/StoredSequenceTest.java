package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The stores' last check before they write a changed definition ({@link StoredSequence#checkReplaces}). */
class StoredSequenceTest {
  private static final StoredSequence STORED = StoredSequence.of(new SequenceDefinition("s", 1, 1_000, 1, 10, 100));

  @Test
  void should_accept_the_next_version_with_a_higher_max_other_block_sizes_or_a_deletion() {
    assertThatCode(() -> STORED.redefined(new SequenceDefinition("s", 1, 2_000, 1, 20, 200)).checkReplaces(STORED))
        .doesNotThrowAnyException();
    assertThatCode(() -> STORED.deletedAt(Instant.EPOCH, Instant.EPOCH).checkReplaces(STORED))
        .doesNotThrowAnyException();
  }

  @Test
  void should_refuse_a_lower_max_another_id_space_or_a_version_that_does_not_follow() {
    assertThatThrownBy(() -> STORED.redefined(new SequenceDefinition("s", 1, 999, 1, 10, 100)).checkReplaces(STORED))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max only rise");
    assertThatThrownBy(() -> STORED.redefined(new SequenceDefinition("s", 2, 1_000, 1, 10, 100)).checkReplaces(STORED))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> STORED.redefined(new SequenceDefinition("s", 1, 1_000, 2, 10, 100)).checkReplaces(STORED))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> STORED.redefined(new SequenceDefinition("t", 1, 1_000, 1, 10, 100)).checkReplaces(STORED))
        .isInstanceOf(IllegalArgumentException.class);
    StoredSequence skipped = STORED.redefined(STORED.definition()).redefined(STORED.definition());
    assertThatThrownBy(() -> skipped.checkReplaces(STORED)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("version go up by one");
  }
}
