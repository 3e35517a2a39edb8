package dev.idgen.core;

import com.google.errorprone.annotations.Immutable;
import java.util.List;

/**
 * A snapshot of a sequence's live state in its store: how far each stripe is reserved, and what each
 * datacenter holds in reserve. Immutable.
 *
 * @param unread what could not be read authoritatively (e.g. the global cursors while other datacenters
 *     are cut off), in words; the values then come from this datacenter's replicas and may be behind
 */
@Immutable
@SuppressWarnings("Immutable") // components are List.copyOf: unmodifiable
public record SequenceState(List<Stripe> stripes, List<DatacenterReserve> datacenterReserves,
    List<String> unread) {

  public SequenceState {
    stripes = List.copyOf(stripes);
    datacenterReserves = List.copyOf(datacenterReserves);
    unread = List.copyOf(unread);
  }

  /** A state read completely. */
  public SequenceState(List<Stripe> stripes, List<DatacenterReserve> datacenterReserves) {
    this(stripes, datacenterReserves, List.of());
  }

  /**
   * One stripe: {@code reserved} of its {@code size} IDs have been reserved by someone (index of the next
   * unreserved ID within the stripe).
   */
  @Immutable
  public record Stripe(int stripe, long reserved, long size) {
    /** IDs of the stripe not yet reserved by anyone. */
    public long remaining() {
      return size - reserved;
    }
  }

  /** IDs a datacenter holds in reserve for one stripe (the Cassandra store's middle tier). */
  @Immutable
  public record DatacenterReserve(String datacenter, int stripe, long ids) {}

  /** IDs not yet reserved by anyone, summed over stripes, saturated at {@link Long#MAX_VALUE}. */
  public long remaining() {
    long sum = 0;
    for (Stripe s : stripes) {
      sum += s.remaining();
      if (sum < 0) {
        return Long.MAX_VALUE;
      }
    }
    return sum;
  }
}
