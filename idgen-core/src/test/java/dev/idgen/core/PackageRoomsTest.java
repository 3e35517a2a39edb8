package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The rooms of idgen-core and the direction of their imports, read by {@code jdeps} from the compiled classes
 * (so a reference only in a comment does not count, and every class does). Each room may use only the rooms
 * {@link #ALLOWED} lists for it: the allocator on top, the internal rooms in order below it, the stores and the
 * API at the bottom. A new package fails here until it is given its place. docs/development.md draws the same
 * order ("The packages of idgen-core").
 */
@Execution(ExecutionMode.CONCURRENT) // shares nothing static; beside the classes that wait on real time
class PackageRoomsTest {
  /** The allocator itself: {@code Allocator} and {@code AllocatorBuilder}, with their nested classes. */
  private static final String ALLOCATOR = "core (Allocator)";
  /** Everything else in {@code dev.idgen.core}: the values, the exceptions, the store's interface, the clocks. */
  private static final String API = "core (API)";

  /** What each room may use besides itself. The order is a line: no room uses one above it. */
  private static final Map<String, Set<String>> ALLOWED = allowed();

  private static Map<String, Set<String>> allowed() {
    Map<String, Set<String>> m = new LinkedHashMap<>();
    m.put(ALLOCATOR, Set.of("internal.lifecycle", "internal.floors", "internal.strict", "internal.allocation",
        "internal", "store.cassandra", "store.embedded", API));
    m.put("internal.lifecycle", Set.of("internal.floors", "internal.allocation", "internal", API));
    m.put("internal.floors", Set.of("internal.allocation", "internal", API));
    m.put("internal.strict", Set.of("internal.allocation", "internal", API));
    m.put("internal.allocation", Set.of("internal", API));
    m.put("internal", Set.of(API));
    m.put("store.cassandra", Set.of(API));
    m.put("store.embedded", Set.of(API));
    m.put(API, Set.of());
    return m;
  }

  @Test
  void should_have_no_cycle_between_rooms_and_no_import_that_runs_up() throws Exception {
    Map<String, Map<String, Set<String>>> edges = roomEdges(); // from room -> to room -> class arrows
    assertThat(edges).as("rooms found in target/classes").containsKeys(ALLOCATOR, API, "internal.allocation");

    List<String> unplaced = new ArrayList<>();
    for (String room : edges.keySet()) {
      if (!ALLOWED.containsKey(room)) {
        unplaced.add(room);
      }
    }
    assertThat(unplaced).as("packages without a place in PackageRoomsTest.ALLOWED").isEmpty();

    assertThat(cycles(edges)).as("cycles between rooms (each with its class arrows)").isEmpty();

    List<String> upward = new ArrayList<>();
    edges.forEach((from, tos) -> tos.forEach((to, arrows) -> {
      if (!ALLOWED.get(from).contains(to)) {
        upward.add(from + " -> " + to + ": " + arrows);
      }
    }));
    assertThat(upward).as("imports against the allowed order").isEmpty();
  }

  /** The room of a class of idgen-core, or its package when it has none. */
  static String roomOf(String className) {
    String pkg = className.substring(0, className.lastIndexOf('.'));
    String simple = className.substring(pkg.length() + 1);
    if (pkg.equals("dev.idgen.core")) {
      return simple.equals("Allocator") || simple.startsWith("Allocator$") || simple.equals("AllocatorBuilder")
          || simple.startsWith("AllocatorBuilder$") ? ALLOCATOR : API;
    }
    return pkg.startsWith("dev.idgen.core.") ? pkg.substring("dev.idgen.core.".length()) : pkg;
  }

  private static Map<String, Map<String, Set<String>>> roomEdges() throws Exception {
    Path classes = Path.of(Allocator.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    ToolProvider jdeps = ToolProvider.findFirst("jdeps")
        .orElseThrow(() -> new AssertionError("no jdeps in this JDK (a JDK 17 has it: jdk.jdeps)"));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int status = jdeps.run(new PrintWriter(out), new PrintWriter(err), "-verbose:class", "-filter:none",
        "-e", "dev\\.idgen\\.core(\\..*)?", classes.toString());
    assertThat(status).as("jdeps exit status; stderr: %s", err).isZero();
    Pattern arrow = Pattern.compile("^\\s+(dev\\.idgen\\.core\\.\\S+)\\s+->\\s+(dev\\.idgen\\.core\\.\\S+)\\s");
    Map<String, Map<String, Set<String>>> edges = new TreeMap<>();
    int arrows = 0;
    for (String line : out.toString().split("\n")) {
      Matcher m = arrow.matcher(line);
      if (!m.find()) {
        continue;
      }
      arrows++;
      String from = roomOf(m.group(1));
      String to = roomOf(m.group(2));
      Map<String, Set<String>> tos = edges.computeIfAbsent(from, k -> new TreeMap<>());
      if (!from.equals(to)) {
        tos.computeIfAbsent(to, k -> new TreeSet<>()).add(simple(m.group(1)) + "->" + simple(m.group(2)));
      }
    }
    assertThat(arrows).as("class arrows jdeps printed; output: %s", out).isGreaterThan(100);
    return edges;
  }

  private static String simple(String className) {
    return className.substring(className.lastIndexOf('.') + 1);
  }

  /** Every group of rooms that reach each other (Tarjan's strongly connected components of size > 1). */
  static List<String> cycles(Map<String, Map<String, Set<String>>> edges) {
    Map<String, Integer> index = new HashMap<>();
    Map<String, Integer> low = new HashMap<>();
    Deque<String> stack = new ArrayDeque<>();
    Set<String> onStack = new TreeSet<>();
    List<String> found = new ArrayList<>();
    int[] next = {0};
    for (String room : edges.keySet()) {
      if (!index.containsKey(room)) {
        connect(room, edges, index, low, stack, onStack, found, next);
      }
    }
    return found;
  }

  private static void connect(String v, Map<String, Map<String, Set<String>>> edges, Map<String, Integer> index,
      Map<String, Integer> low, Deque<String> stack, Set<String> onStack, List<String> found, int[] next) {
    index.put(v, next[0]);
    low.put(v, next[0]);
    next[0]++;
    stack.push(v);
    onStack.add(v);
    for (String w : edges.getOrDefault(v, Map.of()).keySet()) {
      if (!index.containsKey(w)) {
        connect(w, edges, index, low, stack, onStack, found, next);
        low.put(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.contains(w)) {
        low.put(v, Math.min(low.get(v), index.get(w)));
      }
    }
    if (low.get(v).equals(index.get(v))) {
      Set<String> component = new TreeSet<>();
      String w;
      do {
        w = stack.pop();
        onStack.remove(w);
        component.add(w);
      } while (!w.equals(v));
      if (component.size() > 1) {
        StringBuilder s = new StringBuilder(String.join(" <-> ", component)).append(':');
        for (String a : component) {
          for (String b : component) {
            Set<String> arrows = edges.getOrDefault(a, Map.of()).get(b);
            if (arrows != null) {
              s.append(' ').append(a).append(" -> ").append(b).append(' ').append(arrows);
            }
          }
        }
        found.add(s.toString());
      }
    }
  }
}
