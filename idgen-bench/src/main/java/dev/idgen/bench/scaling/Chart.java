package dev.idgen.bench.scaling;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.TreeMap;

/**
 * One plot of SCALING.md: lines of one CSV file against one of its columns. Each line takes the rows that
 * match its {@code where} (column = value), and draws, for every x, the <b>median</b> of its y over those
 * rows: a point measured again (an outlier rerun) does not make a second point, and the CSV keeps every run.
 *
 * @param csv the CSV file name (in the data directory)
 * @param png the PNG file name written beside it
 * @param logX logarithmic x axis (rows with x ≤ 0 are left out)
 * @param logY logarithmic y axis (points with y ≤ 0 are left out)
 */
record Chart(String csv, String png, String title, String xColumn, String xTitle, String yTitle, boolean logX,
    boolean logY, List<Line> lines) {

  Chart {
    lines = List.copyOf(lines);
  }

  /** One line: the y column, its label, and the rows it takes (every row if {@code where} is empty). */
  record Line(String label, String yColumn, Map<String, String> where) {
    Line {
      where = Map.copyOf(where);
    }

    static Line of(String label, String yColumn) {
      return new Line(label, yColumn, Map.of());
    }

    Line where(String column, String value) {
      Map<String, String> w = new TreeMap<>(where);
      w.put(column, value);
      return new Line(label, yColumn, w);
    }
  }

  /** The points of {@code line} in {@code data}, sorted by x: (x, median y) pairs, as two arrays. */
  double[][] points(Csv data, Line line) {
    Map<Double, List<Double>> byX = new TreeMap<>();
    for (Map<String, String> row : data.rows()) {
      if (!line.where().entrySet().stream().allMatch(w -> w.getValue().equals(row.get(w.getKey())))) {
        continue;
      }
      OptionalDouble x = Csv.number(row, xColumn);
      OptionalDouble y = Csv.number(row, line.yColumn());
      if (x.isEmpty() || y.isEmpty() || (logX && x.getAsDouble() <= 0) || (logY && y.getAsDouble() <= 0)) {
        continue;
      }
      byX.computeIfAbsent(x.getAsDouble(), k -> new ArrayList<>()).add(y.getAsDouble());
    }
    double[] xs = new double[byX.size()];
    double[] ys = new double[byX.size()];
    int i = 0;
    for (var e : byX.entrySet()) {
      xs[i] = e.getKey();
      ys[i] = median(e.getValue());
      i++;
    }
    return new double[][] {xs, ys};
  }

  static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
