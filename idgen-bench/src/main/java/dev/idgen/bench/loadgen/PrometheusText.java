package dev.idgen.bench.loadgen;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The samples of a Prometheus text exposition (format 0.0.4): {@code name{label="value",...} value
 * [timestamp]} per line; comments ({@code # HELP}, {@code # TYPE}) and blank lines are skipped.
 * Immutable.
 */
final class PrometheusText {

  /** One time series: a metric name and its labels (sorted by label name). */
  record Series(String name, Map<String, String> labels) {
    String label(String key) {
      return labels.getOrDefault(key, "");
    }
  }

  private final Map<Series, Double> samples;

  private PrometheusText(Map<Series, Double> samples) {
    this.samples = Collections.unmodifiableMap(samples);
  }

  Map<Series, Double> samples() {
    return samples;
  }

  /**
   * Parses an exposition.
   *
   * @throws IllegalArgumentException naming the line that is not a sample
   */
  static PrometheusText parse(String text) {
    Map<Series, Double> samples = new LinkedHashMap<>();
    int lineNo = 0;
    for (String raw : text.split("\n")) {
      lineNo++;
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      try {
        parseLine(line, samples);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("metrics line " + lineNo + " is not a sample: '" + line + "' ("
            + e.getMessage() + ")", e);
      }
    }
    return new PrometheusText(samples);
  }

  private static void parseLine(String line, Map<Series, Double> samples) {
    int i = 0;
    while (i < line.length() && line.charAt(i) != '{' && !Character.isWhitespace(line.charAt(i))) {
      i++;
    }
    String name = line.substring(0, i);
    if (name.isEmpty()) {
      throw new IllegalArgumentException("no metric name");
    }
    Map<String, String> labels = new TreeMap<>();
    if (i < line.length() && line.charAt(i) == '{') {
      i++;
      while (true) {
        while (line.charAt(i) == ' ' || line.charAt(i) == ',') {
          i++;
        }
        if (line.charAt(i) == '}') {
          i++;
          break;
        }
        int eq = line.indexOf('=', i);
        String key = line.substring(i, eq).strip();
        i = eq + 1;
        if (line.charAt(i) != '"') {
          throw new IllegalArgumentException("label " + key + " has no quoted value");
        }
        i++;
        StringBuilder value = new StringBuilder();
        while (line.charAt(i) != '"') {
          char c = line.charAt(i++);
          if (c == '\\') {
            char e = line.charAt(i++);
            value.append(e == 'n' ? '\n' : e);
          } else {
            value.append(c);
          }
        }
        i++;
        labels.put(key, value.toString());
      }
    }
    String[] rest = line.substring(i).strip().split("\\s+");
    samples.put(new Series(name, Collections.unmodifiableMap(labels)), parseValue(rest[0]));
  }

  private static double parseValue(String s) {
    return switch (s) {
      case "+Inf" -> Double.POSITIVE_INFINITY;
      case "-Inf" -> Double.NEGATIVE_INFINITY;
      default -> Double.parseDouble(s);
    };
  }

  /** {@code after - before} for each series of {@code after} named {@code name} (absent before: 0). */
  static Map<Series, Double> delta(PrometheusText before, PrometheusText after, String name) {
    Map<Series, Double> out = new LinkedHashMap<>();
    after.samples.forEach((series, value) -> {
      if (series.name().equals(name)) {
        out.put(series, value - before.samples.getOrDefault(series, 0.0));
      }
    });
    return out;
  }
}
