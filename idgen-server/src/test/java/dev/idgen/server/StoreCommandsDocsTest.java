package dev.idgen.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every server-jar store command in the docs ({@code java -jar idgen-server….jar backup|export|restore-guard|move-store
 * …}) parses against {@link Main}: a renamed option fails here, naming the page and line. Nothing is run.
 */
class StoreCommandsDocsTest {
  private static final List<String> COMMANDS = List.of("backup", "export", "restore-guard", "move-store");

  @Test
  void should_parse_every_store_command_that_the_docs_show() throws IOException {
    Path docs = Path.of("..", "docs").toAbsolutePath().normalize();
    List<String> broken = new ArrayList<>();
    int parsed = 0;
    List<Path> pages;
    try (Stream<Path> files = Files.list(docs)) {
      pages = files.filter(p -> p.toString().endsWith(".md")).sorted().toList();
    }
    for (Path page : pages) {
      List<String> lines = Files.readAllLines(page);
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i).strip();
        if (!line.startsWith("java -jar ") || !line.contains("idgen-server")) {
          continue;
        }
        List<String> words = Arrays.asList(line.replaceFirst("\\s+#.*", "").split("\\s+", -1));
        List<String> args = words.subList(3, words.size());
        if (args.isEmpty() || !COMMANDS.contains(args.get(0))) {
          continue;
        }
        parsed++;
        try {
          new CommandLine(new Main()).parseArgs(args.toArray(String[]::new));
        } catch (CommandLine.ParameterException e) {
          broken.add(page.getFileName() + ":" + (i + 1) + ": " + line + ": " + e.getMessage());
        }
      }
    }
    assertThat(parsed).as("store commands found in the docs").isGreaterThanOrEqualTo(4);
    assertThat(broken).as("store commands in the docs that the server jar refuses").isEmpty();
  }
}
