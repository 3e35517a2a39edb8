package dev.idgen.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every link between the repository's Markdown pages resolves: the file exists and, when the link names an
 * anchor, a heading of that file has it (GitHub's rule: lower case, punctuation dropped, spaces to hyphens, a
 * repeated heading gets {@code -1}, {@code -2}, ...). Moving a section or renaming a heading breaks the links to
 * it; this test names each one. Links to the web are not checked (no network in the test command).
 */
class DocLinksTest {

  /** {@code [text](target)}; images too. Targets with spaces or angle brackets are not used in these docs. */
  private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.+?)\\s*#*\\s*$");
  private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:name|id)=\"([^\"]+)\"");
  private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");

  private final Path root = Path.of("..").toAbsolutePath().normalize();
  private final Map<Path, Set<String>> anchors = new HashMap<>();

  @Test
  void should_resolve_every_link_and_anchor_between_the_repository_pages() throws IOException {
    List<Path> pages = RepositoryPages.markdown(root);
    assertThat(pages).as("Markdown pages under %s", root).hasSizeGreaterThan(10);
    List<String> broken = new ArrayList<>();
    int checked = 0;
    for (Path page : pages) {
      List<String> lines = Files.readAllLines(page);
      boolean inFence = false;
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i);
        if (FENCE.matcher(line).find()) {
          inFence = !inFence;
          continue;
        }
        if (inFence) {
          continue;
        }
        Matcher m = LINK.matcher(line.replaceAll("`[^`]*`", ""));
        while (m.find()) {
          String target = m.group(1);
          if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
            continue; // https:, mailto:, ...
          }
          checked++;
          String problem = problem(page, target);
          if (problem != null) {
            broken.add(root.relativize(page) + ":" + (i + 1) + ": " + target + ": " + problem);
          }
        }
      }
    }
    assertThat(checked).as("links checked").isGreaterThan(50);
    assertThat(broken).as("broken links (file:line: target: why)").isEmpty();
  }

  @Test
  void should_make_anchors_as_github_does() {
    assertThat(slug("API (gRPC, package `idgen.v1`)")).isEqualTo("api-grpc-package-idgenv1");
    assertThat(slug("A sequence's life: UpdateSequence, DeleteSequence, UndeleteSequence"))
        .isEqualTo("a-sequences-life-updatesequence-deletesequence-undeletesequence");
    assertThat(slug("Outages: reserves sized by time (2026-11-23)"))
        .isEqualTo("outages-reserves-sized-by-time-2026-11-23");
    assertThat(slug("The long run of issue 11: 52 million IDs, 162 faults, 2,258 duplicates"))
        .isEqualTo("the-long-run-of-issue-11-52-million-ids-162-faults-2258-duplicates");
  }

  /** Why {@code target}, linked from {@code page}, does not resolve; null if it does. */
  private String problem(Path page, String target) throws IOException {
    int hash = target.indexOf('#');
    String file = hash < 0 ? target : target.substring(0, hash);
    String anchor = hash < 0 ? null : URLDecoder.decode(target.substring(hash + 1), StandardCharsets.UTF_8);
    Path to = file.isEmpty() ? page : page.getParent().resolve(URLDecoder.decode(file, StandardCharsets.UTF_8))
        .normalize();
    if (!to.startsWith(root)) {
      return "outside the repository";
    }
    if (!Files.exists(to)) {
      return "no such file";
    }
    if (anchor == null || anchor.isEmpty() || !to.toString().endsWith(".md")) {
      return null;
    }
    return anchorsOf(to).contains(anchor) ? null : "no heading with anchor #" + anchor + " in " + root.relativize(to);
  }

  private Set<String> anchorsOf(Path page) throws IOException {
    Set<String> known = anchors.get(page);
    if (known != null) {
      return known;
    }
    known = new HashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    boolean inFence = false;
    for (String line : Files.readAllLines(page)) {
      if (FENCE.matcher(line).find()) {
        inFence = !inFence;
        continue;
      }
      if (inFence) {
        continue;
      }
      Matcher html = HTML_ANCHOR.matcher(line);
      while (html.find()) {
        known.add(html.group(1));
      }
      Matcher h = HEADING.matcher(line);
      if (h.matches()) {
        String slug = slug(h.group(2));
        int n = seen.merge(slug, 1, Integer::sum);
        known.add(n == 1 ? slug : slug + "-" + (n - 1));
      }
    }
    anchors.put(page, known);
    return known;
  }

  /** GitHub's heading anchor: markup and punctuation dropped, lower case, each space a hyphen. */
  static String slug(String heading) {
    String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1"); // a link's text only
    StringBuilder out = new StringBuilder();
    text.toLowerCase(Locale.ROOT).codePoints().forEach(c -> {
      if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
        out.appendCodePoint(c);
      } else if (c == ' ') {
        out.append('-');
      }
    });
    return out.toString();
  }
}
