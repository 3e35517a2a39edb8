package dev.idgen.core.store.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.IdRange;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every range a test was handed, by sequence; {@link #assertNoIdTwice} checks that no ID is in two of them.
 * Ranges of one sequence with the same stride and residue are the same stripe's: sorted, each must start
 * above the end of the one before. Not thread-safe.
 */
final class Ledger {
  private final Map<String, List<IdRange>> ranges = new HashMap<>();

  IdRange add(String sequence, IdRange range) {
    ranges.computeIfAbsent(sequence, s -> new ArrayList<>()).add(range);
    return range;
  }

  /** The highest ID handed out of {@code sequence}'s stripe that holds {@code like}'s IDs. */
  long highest(String sequence, IdRange like) {
    return ranges.getOrDefault(sequence, List.of()).stream()
        .filter(r -> sameStripe(r, like))
        .mapToLong(IdRange::last).max().orElse(Long.MIN_VALUE);
  }

  int size() {
    return ranges.values().stream().mapToInt(List::size).sum();
  }

  void assertNoIdTwice() {
    ranges.forEach((sequence, list) -> {
      Map<String, List<IdRange>> byStripe = new HashMap<>();
      for (IdRange r : list) {
        byStripe.computeIfAbsent(r.stride() + "/" + Math.floorMod(r.first(), r.stride()), k -> new ArrayList<>())
            .add(r);
      }
      byStripe.values().forEach(stripe -> {
        stripe.sort(Comparator.comparingLong(IdRange::first));
        for (int i = 1; i < stripe.size(); i++) {
          assertThat(stripe.get(i).first()).as("sequence '%s': %s after %s", sequence, stripe.get(i), stripe.get(i - 1))
              .isGreaterThan(stripe.get(i - 1).last());
        }
      });
    });
  }

  private static boolean sameStripe(IdRange a, IdRange b) {
    return a.stride() == b.stride() && Math.floorMod(a.first(), a.stride()) == Math.floorMod(b.first(), b.stride());
  }
}
