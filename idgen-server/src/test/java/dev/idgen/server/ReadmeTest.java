package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The README's configuration reference lists every key of reference.conf, so that the two stay in step. */
class ReadmeTest {

  @Test
  void should_list_every_key_of_reference_conf_in_the_readme_configuration_reference() throws IOException {
    String readme = Files.readString(Path.of("..", "README.md"));
    String reference = readme.substring(readme.indexOf("### Configuration reference"));
    reference = reference.substring(0, reference.indexOf("\n### ", 1));
    Config idgen = ConfigFactory.parseResources("reference.conf").getConfig("idgen");
    List<String> keys = idgen.entrySet().stream().map(e -> "idgen." + e.getKey()).sorted().toList();

    assertThat(keys).hasSizeGreaterThan(40);
    for (String key : keys) {
      assertThat(reference).as("README configuration reference").contains("| `" + key + "` |");
    }
  }
}
