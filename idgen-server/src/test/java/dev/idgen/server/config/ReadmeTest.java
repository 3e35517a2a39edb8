package dev.idgen.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The configuration reference ({@code docs/configuration.md}, section "Configuration reference") lists
 * every key of reference.conf, so that the two stay in step.
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
