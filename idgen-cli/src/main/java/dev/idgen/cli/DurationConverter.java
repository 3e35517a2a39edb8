package dev.idgen.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses a duration option ({@code --deadline} here, the load generator's {@code --duration} and friends in
 * idgen-bench): {@code 500ms}, {@code 10s}, {@code 2m}, {@code 1h}, or ISO-8601 ({@code PT10S}); case and
 * surrounding spaces do not matter.
 */
public final class DurationConverter implements ITypeConverter<Duration> {

  private static final Pattern SIMPLE = Pattern.compile("(\\d+)\\s*(ms|s|m|h)");

  @Override
  public Duration convert(String value) {
    String text = value.trim().toLowerCase(Locale.ROOT);
    Matcher matcher = SIMPLE.matcher(text);
    try {
      if (matcher.matches()) {
        long amount = Long.parseLong(matcher.group(1));
        return switch (matcher.group(2)) {
          case "ms" -> Duration.ofMillis(amount);
          case "s" -> Duration.ofSeconds(amount);
          case "m" -> Duration.ofMinutes(amount);
          default -> Duration.ofHours(amount);
        };
      }
      return Duration.parse(value.trim());
    } catch (DateTimeParseException | ArithmeticException e) {
      throw new TypeConversionException(
          "'" + value + "' is not a duration (expected: e.g. 500ms, 10s, 2m, 1h or PT10S)");
    }
  }
}
