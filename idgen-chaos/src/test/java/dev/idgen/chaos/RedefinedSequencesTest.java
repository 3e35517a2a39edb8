package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.chaos.RunLog.SequenceSpec;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the run does with sequences the redefine kind changes: the loss bounds take the largest block sizes an
 * update tried (each field at its largest, whatever the update that tried it), and the kind's own sequences are
 * kept from the clients, the bursts and the reservations.
 */
class RedefinedSequencesTest {
  @TempDir
  Path dir;

  @Test
  void should_bound_losses_with_the_largest_block_sizes_any_update_tried() throws Exception {
    try (RunLog log = new RunLog(dir)) {
      RunSequences sequences = new RunSequences(log);
      sequences.added(new SequenceSpec("dense", 1, Long.MAX_VALUE, 2, 100, 1_000));
      LossBounds bounds = new LossBounds(null, sequences, null, new Fleet(log, new Narrator(new RunClock())));
      assertThat(bounds.blocksPerServer()).isEqualTo(2 * (100 + 1_000));

      sequences.blocksAttempted("dense", 400, 500);   // a larger node block, a smaller DC block
      sequences.blocksAttempted("dense", 25, 4_000);  // then the other way round

      assertThat(bounds.blocksPerServer()).isEqualTo(2 * (400 + 4_000));
      assertThat(sequences.widest(sequences.all().get(0))).isEqualTo(
          new SequenceSpec("dense", 1, Long.MAX_VALUE, 2, 400, 4_000));
    }
  }

  @Test
  void should_keep_the_kinds_own_sequences_from_clients_bursts_and_reservations() throws Exception {
    try (RunLog log = new RunLog(dir)) {
      RunSequences sequences = new RunSequences(log);
      sequences.added(new SequenceSpec("chaos-dense", 1, Long.MAX_VALUE, 1, 100, 1_000));
      sequences.added(Redefinitions.BOUNDED);
      sequences.added(Redefinitions.SPARE);

      assertThat(sequences.of(ChaosClient.Kind.RAW)).extracting(SequenceSpec::name).containsExactly("chaos-dense");
      assertThat(sequences.unbounded()).extracting(SequenceSpec::name).containsExactly("chaos-dense");
      assertThat(RunSequences.faultsOwn(Redefinitions.SPARE.name())).isTrue();
    }
  }
}
