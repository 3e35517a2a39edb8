package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The disk soak's own checks: IDs handed out twice or out of bounds, and the damage it does to a file. */
class DiskSoakCheckTest {
  private static final List<DiskSoak.Seq> SEQS = List.of(new DiskSoak.Seq("a", 1_000, 5, false),
      new DiskSoak.Seq("b", Long.MAX_VALUE, 5, false));

  @Test
  void should_count_the_ids_handed_out_twice_per_sequence() {
    Map<String, List<long[]>> received = Map.of(
        "a", List.of(new long[] {1, 10, 1}, new long[] {21, 5, 1}, new long[] {8, 5, 1}, new long[] {11, 10, 1}),
        "b", List.of(new long[] {1, 10, 1})); // the same IDs in another sequence: no duplicate

    Overlaps.Result r = Overlaps.check(received, SEQS);

    // 8..12 against 1..10 (8, 9, 10), then 11..20 against 8..12 (11, 12); 21..25 is alone.
    assertThat(r.duplicates()).isEqualTo(5);
    assertThat(r.outOfBounds()).isZero();
  }

  @Test
  void should_count_a_range_contained_in_another_whole() {
    Map<String, List<long[]>> received = Map.of("a", List.of(new long[] {1, 100, 1}, new long[] {40, 10, 1}));

    assertThat(Overlaps.check(received, SEQS).duplicates()).isEqualTo(10);
  }

  @Test
  void should_name_the_ranges_of_a_duplicate_and_when_they_arrived() {
    Map<String, List<long[]>> received = Map.of("a",
        List.of(new long[] {1, 100, 1, 500}, new long[] {40, 10, 1, 9_000}, new long[] {200, 5, 1, 9_100}));

    assertThat(Overlaps.check(received, SEQS).examples())
        .containsExactly("a [40..49] received at 9000 ms overlaps [1..100] received at 500 ms");
  }

  @Test
  void should_count_ids_outside_the_bounds_and_ranges_of_another_stride_as_out_of_bounds() {
    Map<String, List<long[]>> received = Map.of("a", List.of(new long[] {995, 10, 1}, new long[] {0, 1, 1},
        new long[] {50, 3, 2}, new long[] {100, 5, 1}));

    Overlaps.Result r = Overlaps.check(received, SEQS);

    assertThat(r.outOfBounds()).isEqualTo(10 + 1 + 3);
    assertThat(r.duplicates()).isZero();
  }

  @Test
  void should_damage_the_head_of_every_page_past_the_first(@TempDir Path dir) throws IOException {
    int pageSize = 4096;
    byte[] file = new byte[pageSize * 3];
    file[16] = (byte) (pageSize >> 8); // SQLite's header: the page size, big-endian, at offset 16
    file[17] = (byte) pageSize;
    Path db = dir.resolve("idgen.db");
    Files.write(db, file);

    int pages = DiskSoak.damagePages(db, new SplittableRandom(7));

    byte[] after = Files.readAllBytes(db);
    assertThat(pages).isEqualTo(2);
    assertThat(Arrays.copyOfRange(after, 0, pageSize)).isEqualTo(Arrays.copyOfRange(file, 0, pageSize));
    for (int p = 1; p < 3; p++) {
      assertThat(Arrays.copyOfRange(after, p * pageSize, p * pageSize + 512))
          .isNotEqualTo(new byte[512]);
      assertThat(Arrays.copyOfRange(after, p * pageSize + 512, (p + 1) * pageSize)).isEqualTo(new byte[pageSize - 512]);
    }
  }

  @Test
  void should_refuse_to_damage_what_is_not_a_sqlite_file(@TempDir Path dir) throws IOException {
    Path notDb = dir.resolve("x");
    Files.write(notDb, new byte[100]);

    assertThatThrownBy(() -> DiskSoak.damagePages(notDb, new SplittableRandom(1)))
        .isInstanceOf(IOException.class).hasMessageContaining("not a SQLite file");
  }
}
