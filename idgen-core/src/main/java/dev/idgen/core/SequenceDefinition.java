package dev.idgen.core;

import com.google.errorprone.annotations.Immutable;
import java.util.regex.Pattern;

/**
 * The immutable definition of a sequence: its name, its ID space {@code [start, max]}, its striping and
 * the caps of its tiers' reserves (a server's per stripe, a datacenter's pool per stripe), which bound
 * what time-sized reserves may grow to. A stored definition changes only in ways that keep every
 * reserved position's ID ({@link SequenceUpdate}: max upwards, the caps), so a process may serve from a
 * cached one until the floor log tells it of a change ({@link FloorLog#DEFINITION_CHANGED}).
 *
 * <p>Stripe {@code k} of a sequence with {@code n} stripes owns the IDs {@code start + k + i·n} for
 * {@code i = 0, 1, 2 …} up to {@code max}. A stripe's progress is therefore an <em>index</em> {@code i}
 * (how many of its IDs are reserved), which, unlike an ID, cannot overflow near {@link Long#MAX_VALUE}.
 *
 * <p>A {@link Ordering#STRICT} sequence has one stripe (stripes interleave by construction) and a home
 * datacenter, whose servers own it; {@code homeDatacenter} is "" for {@link Ordering#PER_SERVER}.
 */
@Immutable
public record SequenceDefinition(
    String name, long start, long max, int stripes, long nodeBlockSize, long dcBlockSize, Ordering ordering,
    String homeDatacenter) {

  public static final long DEFAULT_START = 1;
  public static final long DEFAULT_MAX = Long.MAX_VALUE;
  public static final int DEFAULT_STRIPES = 1;
  public static final int MAX_STRIPES = 64;
  /**
   * The default cap of a server's reserve per stripe: reserves are sized by time (see {@link RunwayPolicy}),
   * and this cap binds only above about 260,000 IDs/s per server and stripe with the default 5-minute
   * outage runway. It is also the most IDs a crash can abandon per stripe.
   */
  public static final long DEFAULT_NODE_BLOCK_SIZE = 100_000_000L;
  /**
   * The default cap of a datacenter's pool per stripe: binds only above about 9 million IDs/s per
   * datacenter and stripe with the default 24-hour isolation runway.
   */
  public static final long DEFAULT_DC_BLOCK_SIZE = 1_000_000_000_000L;
  public static final long MAX_BLOCK_SIZE = 1_000_000_000_000_000L;
  public static final int MAX_NAME_LENGTH = 64;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

  /** A {@link Ordering#PER_SERVER} definition (the default ordering). */
  public SequenceDefinition(String name, long start, long max, int stripes, long nodeBlockSize, long dcBlockSize) {
    this(name, start, max, stripes, nodeBlockSize, dcBlockSize, Ordering.PER_SERVER, "");
  }

  /** Validates every field; throws {@link InvalidRequestException} naming the field and its range. */
  public SequenceDefinition {
    checkName(name);
    java.util.Objects.requireNonNull(ordering, "ordering");
    java.util.Objects.requireNonNull(homeDatacenter, "homeDatacenter");
    if (start < 0) {
      throw InvalidRequestException.ofField("start",
          "sequence '" + name + "': start " + start + " (expected: >= 0)");
    }
    if (max < start) {
      throw InvalidRequestException.ofField("max",
          "sequence '" + name + "': max " + max + " (expected: >= start " + start + ")");
    }
    if (stripes < 1 || stripes > MAX_STRIPES) {
      throw InvalidRequestException.ofField("stripes",
          "sequence '" + name + "': stripes " + stripes + " (expected: 1 to " + MAX_STRIPES + ")");
    }
    if (nodeBlockSize < 1 || nodeBlockSize > MAX_BLOCK_SIZE) {
      throw InvalidRequestException.ofField("node_block_size",
          "sequence '" + name + "': node_block_size " + nodeBlockSize
          + " (expected: 1 to " + MAX_BLOCK_SIZE + ")");
    }
    if (dcBlockSize < nodeBlockSize || dcBlockSize > MAX_BLOCK_SIZE) {
      throw InvalidRequestException.ofField("dc_block_size",
          "sequence '" + name + "': dc_block_size " + dcBlockSize
          + " (expected: node_block_size " + nodeBlockSize + " to " + MAX_BLOCK_SIZE + ")");
    }
    if (ordering == Ordering.STRICT && stripes != 1) {
      throw InvalidRequestException.ofField("ordering", "sequence '" + name + "': ORDERING_STRICT with "
          + stripes + " stripes (expected: stripes 1; stripes interleave their IDs by construction)");
    }
    if (ordering == Ordering.STRICT && homeDatacenter.isBlank()) {
      throw InvalidRequestException.ofField("home_datacenter", "sequence '" + name
          + "': ORDERING_STRICT without a home datacenter");
    }
    if (ordering != Ordering.STRICT && !homeDatacenter.isEmpty()) {
      throw InvalidRequestException.ofField("home_datacenter", "sequence '" + name + "': home_datacenter '"
          + printable(homeDatacenter) + "' is set, but only ORDERING_STRICT sequences have one");
    }
  }

  /** Whether IDs increase across servers ({@link Ordering#STRICT}). */
  public boolean strict() {
    return ordering == Ordering.STRICT;
  }

  /** This definition as {@link Ordering#STRICT}, owned by {@code homeDatacenter}'s servers. */
  public SequenceDefinition withStrictOrdering(String homeDatacenter) {
    return new SequenceDefinition(name, start, max, stripes, nodeBlockSize, dcBlockSize, Ordering.STRICT,
        homeDatacenter);
  }

  /** A definition with every default but the name. */
  public static SequenceDefinition withDefaults(String name) {
    return new SequenceDefinition(
        name, DEFAULT_START, DEFAULT_MAX, DEFAULT_STRIPES, DEFAULT_NODE_BLOCK_SIZE, DEFAULT_DC_BLOCK_SIZE);
  }

  /**
   * Checks a sequence name: 1 to 64 characters from {@code [A-Za-z0-9._-]}, starting with a letter or
   * digit. Throws {@link InvalidRequestException} otherwise.
   */
  public static String checkName(String name) {
    if (name == null || name.isEmpty()) {
      throw InvalidRequestException.ofField("name", "sequence name is empty (expected: 1 to "
          + MAX_NAME_LENGTH + " characters from [A-Za-z0-9._-], starting with a letter or digit)");
    }
    if (!NAME.matcher(name).matches()) {
      throw InvalidRequestException.ofField("name", "sequence name '" + printable(name)
          + "' is invalid (expected: 1 to " + MAX_NAME_LENGTH + " characters from [A-Za-z0-9._-], starting with a letter or digit)");
    }
    return name;
  }

  /** How many IDs stripe {@code stripe} owns in all. */
  public long stripeSize(int stripe) {
    checkStripe(stripe);
    if (start > max - stripe) {
      return 0;
    }
    long lastIndex = (max - (start + stripe)) / stripes;
    // Saturated: start 0, max Long.MAX_VALUE and one stripe hold 2^63 IDs, one more than a long counts,
    // so the last of them (Long.MAX_VALUE itself) is never handed out.
    return lastIndex == Long.MAX_VALUE ? Long.MAX_VALUE : lastIndex + 1;
  }

  /** The ID at {@code index} of stripe {@code stripe}; the caller ensures {@code index < stripeSize}. */
  public long idAt(int stripe, long index) {
    return start + stripe + index * stripes;
  }

  /** The index within stripe {@code stripe} of {@code id}, an ID of that stripe: the inverse of {@link #idAt}. */
  public long indexOf(int stripe, long id) {
    return (id - (start + stripe)) / stripes;
  }

  /**
   * The range of stripe {@code stripe} from index {@code fromIndex} (inclusive) to {@code toIndex}
   * (exclusive), which must be non-empty and within the stripe.
   */
  public IdRange range(int stripe, long fromIndex, long toIndex) {
    if (fromIndex < 0 || toIndex <= fromIndex || toIndex > stripeSize(stripe)) {
      throw new IllegalArgumentException("indexes [" + fromIndex + ", " + toIndex + ") of stripe " + stripe
          + " (expected: a non-empty part of [0, " + stripeSize(stripe) + "))");
    }
    return new IdRange(idAt(stripe, fromIndex), toIndex - fromIndex, stripes);
  }

  /**
   * The smallest index of stripe {@code stripe} whose ID is above {@code floor}; {@link #stripeSize} if
   * none is.
   */
  public long firstIndexAbove(int stripe, long floor) {
    long size = stripeSize(stripe);
    long first = start + stripe;
    if (size == 0 || floor < first) {
      return 0;
    }
    long atOrBelow = (floor - first) / stripes; // the last index at or below the floor; +1 may overflow
    return atOrBelow < size - 1 ? atOrBelow + 1 : size;
  }

  /** How many IDs the whole sequence holds, {@code max - start + 1}, saturated at {@link Long#MAX_VALUE}. */
  public long capacity() {
    long c = max - start + 1;
    return c <= 0 ? Long.MAX_VALUE : c;
  }

  private void checkStripe(int stripe) {
    if (stripe < 0 || stripe >= stripes) {
      throw new IllegalArgumentException("stripe: " + stripe + " (expected: 0 to " + (stripes - 1) + ")");
    }
  }

  /** Renders control and non-ASCII characters as escapes, and cuts very long names, for messages. */
  static String printable(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length() && b.length() < 80; i++) {
      char c = s.charAt(i);
      if (c >= 0x20 && c < 0x7f) {
        b.append(c);
      } else {
        b.append(String.format("\\u%04x", (int) c));
      }
    }
    if (b.length() >= 80) {
      b.setLength(77);
      b.append("... (").append(s.length()).append(" characters)");
    }
    return b.toString();
  }
}
