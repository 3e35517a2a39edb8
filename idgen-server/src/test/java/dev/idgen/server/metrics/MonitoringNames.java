package dev.idgen.server.metrics;

import io.grpc.Status;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.yaml.snakeyaml.Yaml;

/**
 * The metric and label names that deploy/monitoring's alerting rules and Grafana dashboard use, checked
 * against what a server exports (a Prometheus text scrape). A small PromQL scanner, not a parser: it finds
 * selectors (a name, optionally with {@code {label op "value"}} matchers), the labels of {@code by},
 * {@code without}, {@code on}, {@code ignoring}, {@code group_left} and {@code group_right}, and skips
 * strings, ranges ({@code [5m]}), numbers, functions and operators. Enough for the expressions of
 * monitoring files; an expression it misreads shows as a name the server does not export, never as a pass.
 */
final class MonitoringNames {
  /**
   * Added by Prometheus to every series it scrapes: instance and job; and, for deploy/k8s's pods scraped through
   * their annotations (Prometheus' example kubernetes-pods job), their namespace, name and labels.
   */
  static final Set<String> TARGET_LABELS = Set.of("instance", "job", "namespace", "pod", "app_kubernetes_io_name",
      "app_kubernetes_io_component");
  /** Series Prometheus makes itself for each target. */
  static final Set<String> PROMETHEUS_SERIES = Set.of("up", "scrape_duration_seconds", "scrape_samples_scraped");
  /** Labels whose values are the traffic's (sequence names), not a fixed set. */
  static final Set<String> DATA_LABELS = Set.of("sequence");
  /** Labels whose values are gRPC status code names. */
  static final Set<String> STATUS_LABELS = Set.of("status", "statusCode");

  private static final Set<String> GROUPING = Set.of("by", "without", "on", "ignoring", "group_left", "group_right");
  private static final Set<String> AGGREGATIONS = Set.of("sum", "min", "max", "avg", "count", "stddev", "stdvar",
      "topk", "bottomk", "quantile", "count_values", "group", "limitk", "limit_ratio");
  private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "inf", "nan", "atan2");
  private static final Pattern LEGEND_LABEL = Pattern.compile("\\{\\{\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*}}");
  private static final Pattern LABEL_VALUES = Pattern.compile("^\\s*label_values\\((.*),\\s*([a-zA-Z_][a-zA-Z0-9_]*)\\s*\\)\\s*$");
  private static final Pattern LITERAL_ALTERNATIVES = Pattern.compile("[A-Za-z0-9_.]+(\\|[A-Za-z0-9_.]+)*");

  private MonitoringNames() {}

  /** A selector: a metric name and its label matchers (label, operator, value). */
  record Selector(String metric, List<String[]> matchers) {}

  /** What one expression uses. */
  record Names(List<Selector> selectors, Set<String> groupingLabels) {}

  /** An expression and where it is, for messages. */
  record Expression(String where, String expr, Set<String> legendLabels) {}

  /** Scans one PromQL expression. */
  static Names scan(String expr) {
    List<Selector> selectors = new ArrayList<>();
    Set<String> grouping = new LinkedHashSet<>();
    int i = 0;
    int n = expr.length();
    while (i < n) {
      char c = expr.charAt(i);
      if (c == '"' || c == '\'' || c == '`') {
        i = skipString(expr, i);
      } else if (c == '[') {
        int end = expr.indexOf(']', i);
        i = end < 0 ? n : end + 1;
      } else if (c == '{') { // a selector without a name: {__name__="x"}, rare in monitoring files
        List<String[]> matchers = new ArrayList<>();
        i = matchers(expr, i, matchers);
        String name = matchers.stream().filter(m -> m[0].equals("__name__")).map(m -> m[2]).findFirst().orElse("");
        selectors.add(new Selector(name, matchers));
      } else if (Character.isDigit(c) || (c == '.' && i + 1 < n && Character.isDigit(expr.charAt(i + 1)))) {
        while (i < n && (Character.isLetterOrDigit(expr.charAt(i)) || expr.charAt(i) == '.')) {
          i++; // a number or a duration (5m, 1e3)
        }
      } else if (Character.isLetter(c) || c == '_' || c == ':') {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(expr.charAt(i)) || expr.charAt(i) == '_' || expr.charAt(i) == ':')) {
          i++;
        }
        String word = expr.substring(start, i);
        int next = skipSpace(expr, i);
        if (GROUPING.contains(word)) {
          if (next < n && expr.charAt(next) == '(') {
            int end = expr.indexOf(')', next);
            Arrays.stream(expr.substring(next + 1, end).split(",")).map(String::trim).filter(s -> !s.isEmpty())
                .forEach(grouping::add);
            i = end + 1;
          }
        } else if (next < n && expr.charAt(next) == '(') {
          i = next; // a function or an aggregation: its arguments are scanned as they come
        } else if (AGGREGATIONS.contains(word) && startsWord(expr, next, "by", "without")) {
          // sum by (x) (...)
        } else if (!KEYWORDS.contains(word.toLowerCase(java.util.Locale.ROOT))) {
          List<String[]> matchers = new ArrayList<>();
          if (next < n && expr.charAt(next) == '{') {
            i = matchers(expr, next, matchers);
          }
          selectors.add(new Selector(word, matchers));
        }
      } else {
        i++;
      }
    }
    return new Names(selectors, grouping);
  }

  private static boolean startsWord(String s, int at, String... words) {
    for (String w : words) {
      if (s.startsWith(w, at) && (at + w.length() == s.length() || !Character.isLetterOrDigit(s.charAt(at + w.length())))) {
        return true;
      }
    }
    return false;
  }

  private static int skipSpace(String s, int i) {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
    return i;
  }

  private static int skipString(String s, int i) {
    char quote = s.charAt(i);
    i++;
    while (i < s.length() && s.charAt(i) != quote) {
      i += s.charAt(i) == '\\' && quote != '`' ? 2 : 1;
    }
    return i + 1;
  }

  /** Parses {@code {a="x", b=~"y|z"}} from the '{' at {@code i}; returns the index after the '}'. */
  private static int matchers(String s, int i, List<String[]> out) {
    i++;
    while (true) {
      i = skipSpace(s, i);
      if (i >= s.length()) {
        throw new IllegalArgumentException("unclosed '{' in: " + s);
      }
      if (s.charAt(i) == '}') {
        return i + 1;
      }
      if (s.charAt(i) == ',') {
        i++;
        continue;
      }
      int start = i;
      while (i < s.length() && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '_')) {
        i++;
      }
      String label = s.substring(start, i);
      i = skipSpace(s, i);
      String op = s.startsWith("=~", i) || s.startsWith("!~", i) || s.startsWith("!=", i) ? s.substring(i, i + 2)
          : s.startsWith("=", i) ? "=" : null;
      if (label.isEmpty() || op == null) {
        throw new IllegalArgumentException("cannot read the label matcher at " + start + " of: " + s);
      }
      i = skipSpace(s, i + op.length());
      int end = skipString(s, i);
      out.add(new String[] {label, op, s.substring(i + 1, end - 1)});
      i = end;
    }
  }

  /** The series a scrape (Prometheus text format) holds: name, then label, then the values seen. */
  static Map<String, Map<String, Set<String>>> exported(String... scrapes) {
    Map<String, Map<String, Set<String>>> out = new TreeMap<>();
    Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
    for (String scrape : scrapes) {
      for (String line : scrape.split("\n")) {
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        int brace = line.indexOf('{');
        int space = line.indexOf(' ');
        String name = line.substring(0, brace >= 0 && brace < space ? brace : space);
        Map<String, Set<String>> labels = out.computeIfAbsent(name, k -> new TreeMap<>());
        if (brace >= 0 && brace < space) {
          Matcher m = label.matcher(line.substring(brace, line.lastIndexOf('}') + 1));
          while (m.find()) {
            labels.computeIfAbsent(m.group(1), k -> new TreeSet<>()).add(m.group(2));
          }
        }
      }
    }
    return out;
  }

  /** Every {@code expr} of the alerting and recording rules of a Prometheus rule file. */
  @SuppressWarnings("unchecked")
  static List<Expression> rules(Path file) throws IOException {
    List<Expression> out = new ArrayList<>();
    Map<String, Object> root;
    try (InputStream in = Files.newInputStream(file)) {
      root = new Yaml().load(in);
    }
    for (Map<String, Object> group : (List<Map<String, Object>>) root.get("groups")) {
      for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
        String name = String.valueOf(rule.containsKey("alert") ? rule.get("alert") : rule.get("record"));
        out.add(new Expression(file.getFileName() + ": " + name, String.valueOf(rule.get("expr")), Set.of()));
      }
    }
    return out;
  }

  /** Every Prometheus query of a Grafana dashboard: panel targets (rows' too) and template variables. */
  @SuppressWarnings("unchecked")
  static List<Expression> dashboard(Path file) throws IOException {
    List<Expression> out = new ArrayList<>();
    Map<String, Object> root;
    try (InputStream in = Files.newInputStream(file)) {
      root = new Yaml().load(in); // JSON is YAML
    }
    List<Map<String, Object>> panels = new ArrayList<>((List<Map<String, Object>>) root.get("panels"));
    for (int p = 0; p < panels.size(); p++) {
      Map<String, Object> panel = panels.get(p);
      if (panel.get("panels") instanceof List<?> nested) {
        panels.addAll((List<Map<String, Object>>) nested);
      }
      for (Map<String, Object> target : (List<Map<String, Object>>) panel.getOrDefault("targets", List.of())) {
        Set<String> legend = new LinkedHashSet<>();
        Matcher m = LEGEND_LABEL.matcher(String.valueOf(target.getOrDefault("legendFormat", "")));
        while (m.find()) {
          legend.add(m.group(1));
        }
        out.add(new Expression(file.getFileName() + ": panel '" + panel.get("title") + "' " + target.get("refId"),
            String.valueOf(target.get("expr")), legend));
      }
    }
    Map<String, Object> templating = (Map<String, Object>) root.getOrDefault("templating", Map.of());
    for (Map<String, Object> variable : (List<Map<String, Object>>) templating.getOrDefault("list", List.of())) {
      Object query = variable.get("query");
      String q = query instanceof Map<?, ?> map ? String.valueOf(map.get("query")) : String.valueOf(query);
      Matcher lv = LABEL_VALUES.matcher(q);
      if ("query".equals(variable.get("type")) && lv.matches()) {
        out.add(new Expression(file.getFileName() + ": variable $" + variable.get("name"), lv.group(1),
            Set.of(lv.group(2))));
      } else if ("query".equals(variable.get("type"))) {
        out.add(new Expression(file.getFileName() + ": variable $" + variable.get("name"), q, Set.of()));
      }
    }
    return out;
  }

  /**
   * What the expressions name that {@code exported} lacks: metrics, labels of selectors, grouping and legends,
   * and label values (gRPC status names; for other labels but {@link #DATA_LABELS}, values the scrape shows).
   * Empty when everything is exported.
   */
  static List<String> problems(List<Expression> expressions, Map<String, Map<String, Set<String>>> exported) {
    Set<String> codes = Arrays.stream(Status.Code.values()).map(Enum::name).collect(Collectors.toSet());
    List<String> problems = new ArrayList<>();
    for (Expression e : expressions) {
      Names names = scan(e.expr());
      if (names.selectors().isEmpty()) {
        problems.add(e.where() + ": no metric found in '" + e.expr() + "'");
      }
      Set<String> labelsOfExpr = new LinkedHashSet<>(TARGET_LABELS);
      boolean missing = false;
      for (Selector s : names.selectors()) {
        Map<String, Set<String>> labels = PROMETHEUS_SERIES.contains(s.metric()) ? Map.of() : exported.get(s.metric());
        if (labels == null) {
          problems.add(e.where() + ": metric " + s.metric() + " is not exported");
          missing = true;
          continue;
        }
        labelsOfExpr.addAll(labels.keySet());
        for (String[] m : s.matchers()) {
          String label = m[0];
          String value = m[2];
          if (!labels.containsKey(label) && !TARGET_LABELS.contains(label)) {
            problems.add(e.where() + ": " + s.metric() + " has no label " + label + " (it has " + labels.keySet() + ")");
            continue;
          }
          if (DATA_LABELS.contains(label) || TARGET_LABELS.contains(label)
              || !LITERAL_ALTERNATIVES.matcher(value).matches()) {
            continue; // a sequence name, a Grafana variable ($sequence), a real regular expression
          }
          for (String v : value.split("\\|")) {
            boolean known = STATUS_LABELS.contains(label) ? codes.contains(v) : labels.get(label).contains(v);
            if (!known) {
              problems.add(e.where() + ": " + s.metric() + "{" + label + "=\"" + v + "\"} is not exported"
                  + (STATUS_LABELS.contains(label) ? " (not a gRPC status code)" : " (values: " + labels.get(label) + ")"));
            }
          }
        }
      }
      if (missing) {
        continue; // its labels are unknown: the missing metric is the problem
      }
      for (String label : names.groupingLabels()) {
        if (!labelsOfExpr.contains(label)) {
          problems.add(e.where() + ": groups by " + label + ", a label none of its metrics has");
        }
      }
      for (String label : e.legendLabels()) {
        if (!labelsOfExpr.contains(label)) {
          problems.add(e.where() + ": shows label " + label + ", which none of its metrics has");
        }
      }
    }
    return problems;
  }

  /** Metric names of {@code expressions}, for the test's own sanity checks. */
  static Map<String, List<String>> metricsByWhere(List<Expression> expressions) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (Expression e : expressions) {
      out.put(e.where(), scan(e.expr()).selectors().stream().map(Selector::metric).toList());
    }
    return out;
  }
}
