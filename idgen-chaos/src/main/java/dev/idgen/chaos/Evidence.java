package dev.idgen.chaos;

import java.util.ArrayList;
import java.util.List;

/**
 * The checker's lines of evidence, in the order the checks found them, at most {@value #PER_KIND} per kind of
 * violation ({@code duplicates: …}, {@code below_floor: …}). Single-threaded, as the checker is.
 */
final class Evidence {
  /** At most this many lines of evidence per kind of violation. */
  static final int PER_KIND = 10;

  private final List<String> lines = new ArrayList<>();

  /** Adds a line of evidence of a violation of {@code kind}, unless it has {@value #PER_KIND} already. */
  void note(String kind, String line) {
    long already = lines.stream().filter(l -> l.startsWith(kind + ": ")).count();
    if (already < PER_KIND) {
      lines.add(kind + ": " + line);
    }
  }

  List<String> lines() {
    return lines;
  }
}
