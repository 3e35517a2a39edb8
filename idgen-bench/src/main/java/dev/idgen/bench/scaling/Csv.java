package dev.idgen.bench.scaling;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * A CSV file as the scaling scripts write it: a header row, then one row per measurement, values separated
 * by commas and never quoted (no value contains a comma). Blank lines are skipped. Immutable.
 */
final class Csv {

  private final List<String> header;
  private final List<Map<String, String>> rows;

  private Csv(List<String> header, List<Map<String, String>> rows) {
    this.header = List.copyOf(header);
    this.rows = Collections.unmodifiableList(rows);
  }

  /**
   * Reads {@code file}.
   *
   * @throws IllegalArgumentException naming the line whose number of values differs from the header's
   */
  static Csv read(Path file) throws IOException {
    List<String> lines = Files.readAllLines(file);
    List<String> header = new ArrayList<>();
    List<Map<String, String>> rows = new ArrayList<>();
    for (int n = 0; n < lines.size(); n++) {
      String line = lines.get(n).strip();
      if (line.isEmpty()) {
        continue;
      }
      String[] values = line.split(",", -1);
      if (header.isEmpty()) {
        for (String v : values) {
          header.add(v.strip());
        }
        continue;
      }
      if (values.length != header.size()) {
        throw new IllegalArgumentException(file + " line " + (n + 1) + ": " + values.length
            + " values (expected: " + header.size() + ", as in the header)");
      }
      Map<String, String> row = new LinkedHashMap<>();
      for (int i = 0; i < values.length; i++) {
        row.put(header.get(i), values[i].strip());
      }
      rows.add(Collections.unmodifiableMap(row));
    }
    return new Csv(header, rows);
  }

  List<String> header() {
    return header;
  }

  List<Map<String, String>> rows() {
    return rows;
  }

  /** The number in {@code column} of {@code row}; empty if the column is missing, blank or not a number. */
  static OptionalDouble number(Map<String, String> row, String column) {
    String v = row.get(column);
    if (v == null || v.isEmpty()) {
      return OptionalDouble.empty();
    }
    try {
      double d = Double.parseDouble(v);
      return Double.isFinite(d) ? OptionalDouble.of(d) : OptionalDouble.empty();
    } catch (NumberFormatException e) {
      return OptionalDouble.empty();
    }
  }
}
