package dev.idgen.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigRenderOptions;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The configuration reference ({@code docs/configuration.md}, section "Configuration reference") lists
 * every key of reference.conf, so that the two stay in step; and every default that a page's table quotes for a
 * key of reference.conf is the one reference.conf gives it.
 */
class ReadmeTest {

  private static final Path DOC = Path.of("..", "docs", "configuration.md");
  private static final Pattern HEADING = Pattern.compile("(?m)^(#+)\\s+Configuration reference\\s*$");

  @Test
  void should_list_every_key_of_reference_conf_in_the_configuration_reference() throws IOException {
    assertThat(Files.isRegularFile(DOC))
        .as("the configuration reference is in %s (relative to idgen-server), which does not exist",
            DOC.toAbsolutePath().normalize())
        .isTrue();
    String reference = section(Files.readString(DOC));
    Config idgen = ConfigFactory.parseResources("reference.conf").getConfig("idgen");
    List<String> keys = idgen.entrySet().stream().map(e -> "idgen." + e.getKey()).sorted().toList();

    assertThat(keys).hasSizeGreaterThan(40);
    for (String key : keys) {
      assertThat(reference).as("the configuration reference in " + DOC).contains("| `" + key + "` |");
    }
  }

  /** A table row of a page that starts with a key and its default: {@code | `idgen.x.y` | `5m` | ...}. */
  private static final Pattern DEFAULT_ROW = Pattern.compile("(?m)^\\|\\s*`(idgen\\.[a-z0-9.-]+)`\\s*\\|\\s*([^|]*?)\\s*\\|");

  @Test
  void should_quote_the_defaults_of_reference_conf_wherever_a_page_lists_them() throws IOException {
    Config reference = ConfigFactory.parseResources("reference.conf");
    List<String> wrong = new ArrayList<>();
    int checked = 0;
    List<Path> pages;
    try (Stream<Path> docs = Files.list(DOC.getParent())) {
      pages = docs.filter(p -> p.toString().endsWith(".md")).sorted().collect(Collectors.toList());
    }
    for (Path page : pages) {
      Matcher m = DEFAULT_ROW.matcher(Files.readString(page));
      while (m.find()) {
        String key = m.group(1);
        if (!reference.hasPath(key)) {
          continue; // another component's keys (the Spring Boot starter's idgen.client.*)
        }
        checked++;
        String quoted = normalized(m.group(2));
        String actual = normalized(reference.getValue(key).render(ConfigRenderOptions.concise()));
        if (!quoted.equals(actual)) {
          wrong.add(page.getFileName() + ": " + key + " is quoted as " + m.group(2) + ", reference.conf has "
              + reference.getValue(key).render(ConfigRenderOptions.concise()));
        }
      }
    }
    assertThat(checked).as("defaults quoted in tables of docs/").isGreaterThan(50);
    assertThat(wrong).as("defaults the docs quote differently from reference.conf").isEmpty();
  }

  /** A value without quotes, backticks and spaces, its numbers in one form ({@code 0.20} and {@code 0.2}). */
  private static String normalized(String value) {
    String bare = value.replaceAll("[`\"\\s]", "");
    StringBuilder out = new StringBuilder();
    for (String token : bare.split("(?<=[\\[\\],])|(?=[\\[\\],])")) {
      out.append(token.matches("-?\\d+(\\.\\d+)?") ? new BigDecimal(token).stripTrailingZeros().toPlainString() : token);
    }
    return out.toString();
  }

  /** From the "Configuration reference" heading to the next heading of the same or a higher level. */
  private static String section(String doc) {
    Matcher heading = HEADING.matcher(doc);
    assertThat(heading.find())
        .as("%s has a heading \"Configuration reference\" (e.g. \"### Configuration reference\")", DOC)
        .isTrue();
    int level = heading.group(1).length();
    Matcher next = Pattern.compile("(?m)^#{1," + level + "}\\s").matcher(doc);
    int end = next.find(heading.end()) ? next.start() : doc.length();
    return doc.substring(heading.start(), end);
  }
}
