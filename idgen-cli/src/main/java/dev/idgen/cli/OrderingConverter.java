package dev.idgen.cli;

import dev.idgen.api.v1.Ordering;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses {@code --ordering}: {@code strict} or {@code per-server} (case does not matter), the names
 * {@link #name(int)} prints; also the candidates picocli lists in the help.
 */
final class OrderingConverter implements ITypeConverter<Ordering>, Iterable<String> {

  static final String STRICT = "strict";
  static final String PER_SERVER = "per-server";

  @Override
  public Ordering convert(String value) {
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case STRICT -> Ordering.ORDERING_STRICT;
      case PER_SERVER -> Ordering.ORDERING_PER_SERVER;
      default -> throw new TypeConversionException(
          "'" + value + "' is not an ordering (expected: " + STRICT + " or " + PER_SERVER + ")");
    };
  }

  @Override
  public Iterator<String> iterator() {
    return List.of(STRICT, PER_SERVER).iterator();
  }

  /**
   * How an ordering is printed: {@code strict}, {@code per-server} (also for an unset ordering, which a
   * server before 0.2 sends: its sequences are all per-server), or {@code unknown (N)} for a value this
   * command line does not know.
   */
  static String name(int ordering) {
    if (ordering == Ordering.ORDERING_STRICT_VALUE) {
      return STRICT;
    }
    if (ordering == Ordering.ORDERING_PER_SERVER_VALUE || ordering == Ordering.ORDERING_UNSPECIFIED_VALUE) {
      return PER_SERVER;
    }
    return "unknown (" + ordering + ")";
  }
}
