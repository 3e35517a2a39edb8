package dev.idgen.core;

import com.google.errorprone.annotations.Immutable;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * What an {@code UpdateSequence} asks: a value for each field it names (an update mask's paths), empty for
 * the others. {@code max}, {@code nodeBlockSize} and {@code dcBlockSize} may change; {@code start},
 * {@code stripes}, {@code ordering} and {@code homeDatacenter} may only be named with their current value
 * (a client that sends the whole sequence back), since they decide which ID each reserved position of the
 * stores is: a change would hand out IDs again or skip them unaccounted.
 *
 * <p>Rules ({@link #applyTo}): {@code max} only upwards (servers and datacenters may hold reserves up to the
 * current one, so a lower max could not be honoured; raising it is safe whatever a server still holds, since
 * every position keeps its ID); caps within their ranges ({@link SequenceDefinition}), and caps are bounds
 * only, so a server that still runs on the old ones until it applies the change stays correct.
 */
@Immutable
@SuppressWarnings("Immutable") // Optional of immutable values
public record SequenceUpdate(OptionalLong max, OptionalLong nodeBlockSize, OptionalLong dcBlockSize,
    OptionalLong start, OptionalInt stripes, Optional<Ordering> ordering, Optional<String> homeDatacenter) {

  /** An update that changes nothing. */
  public static final SequenceUpdate NONE = new SequenceUpdate(OptionalLong.empty(), OptionalLong.empty(),
      OptionalLong.empty(), OptionalLong.empty(), OptionalInt.empty(), Optional.empty(), Optional.empty());

  public SequenceUpdate withMax(long value) {
    return new SequenceUpdate(OptionalLong.of(value), nodeBlockSize, dcBlockSize, start, stripes, ordering,
        homeDatacenter);
  }

  public SequenceUpdate withNodeBlockSize(long value) {
    return new SequenceUpdate(max, OptionalLong.of(value), dcBlockSize, start, stripes, ordering, homeDatacenter);
  }

  public SequenceUpdate withDcBlockSize(long value) {
    return new SequenceUpdate(max, nodeBlockSize, OptionalLong.of(value), start, stripes, ordering, homeDatacenter);
  }

  public SequenceUpdate withStart(long value) {
    return new SequenceUpdate(max, nodeBlockSize, dcBlockSize, OptionalLong.of(value), stripes, ordering,
        homeDatacenter);
  }

  public SequenceUpdate withStripes(int value) {
    return new SequenceUpdate(max, nodeBlockSize, dcBlockSize, start, OptionalInt.of(value), ordering,
        homeDatacenter);
  }

  public SequenceUpdate withOrdering(Ordering value) {
    return new SequenceUpdate(max, nodeBlockSize, dcBlockSize, start, stripes, Optional.of(value), homeDatacenter);
  }

  public SequenceUpdate withHomeDatacenter(String value) {
    return new SequenceUpdate(max, nodeBlockSize, dcBlockSize, start, stripes, ordering, Optional.of(value));
  }

  /**
   * The definition {@code current} becomes.
   *
   * @throws ChangeRefusedException a lower max ({@link ChangeRefusedException.Kind#MAX_DECREASE}), or another
   *     value of an immutable field ({@link ChangeRefusedException.Kind#FIELD_IMMUTABLE})
   * @throws InvalidRequestException a cap out of range
   */
  public SequenceDefinition applyTo(SequenceDefinition current) {
    String name = current.name();
    immutable(name, "start", start.isPresent() && start.getAsLong() != current.start(),
        start.isPresent() ? Long.toString(start.getAsLong()) : "", Long.toString(current.start()));
    immutable(name, "stripes", stripes.isPresent() && stripes.getAsInt() != current.stripes(),
        stripes.isPresent() ? Integer.toString(stripes.getAsInt()) : "", Integer.toString(current.stripes()));
    immutable(name, "ordering", ordering.isPresent() && ordering.get() != current.ordering(),
        ordering.map(Ordering::name).orElse(""), current.ordering().name());
    immutable(name, "home_datacenter", homeDatacenter.isPresent()
        && !homeDatacenter.get().equals(current.homeDatacenter()), homeDatacenter.orElse(""),
        current.homeDatacenter());
    long newMax = max.orElse(current.max());
    if (newMax < current.max()) {
      throw new ChangeRefusedException(ChangeRefusedException.Kind.MAX_DECREASE, name, "max", "sequence '" + name
          + "': max " + newMax + " is below its current max " + current.max() + ": a max is only ever raised,"
          + " because servers and datacenters may hold reserves up to the current one (to stop a sequence"
          + " early, stop allocating from it, or delete it)");
    }
    return new SequenceDefinition(name, current.start(), newMax, current.stripes(),
        nodeBlockSize.orElse(current.nodeBlockSize()), dcBlockSize.orElse(current.dcBlockSize()),
        current.ordering(), current.homeDatacenter());
  }

  private static void immutable(String name, String field, boolean changed, String value, String current) {
    if (changed) {
      throw new ChangeRefusedException(ChangeRefusedException.Kind.FIELD_IMMUTABLE, name, field, "sequence '"
          + name + "': " + field + " cannot change (asked: " + SequenceDefinition.printable(value) + ", current: "
          + current + "): start, stripes and ordering decide which ID each position reserved in the stores is,"
          + " so a change would hand out IDs again or skip them unaccounted; create a new sequence (start it"
          + " above this one's highest ID) instead");
    }
  }
}
