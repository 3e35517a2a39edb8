package dev.idgen.bench.loadgen;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Durations on the command line: {@code 500ms}, {@code 15s}, {@code 2m}, or ISO-8601 ({@code PT15S}). */
final class DurationConverter implements ITypeConverter<Duration> {
  private static final Pattern SIMPLE = Pattern.compile("(\\d+)(ms|s|m|h)");

  @Override
  public Duration convert(String value) {
    Matcher m = SIMPLE.matcher(value.strip());
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        default -> Duration.ofHours(n);
      };
    }
    try {
      return Duration.parse(value);
    } catch (RuntimeException e) {
      throw new TypeConversionException("'" + value + "' (expected: a duration such as 500ms, 15s, 2m)");
    }
  }
}
