package dev.idgen.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.deploy.RepositoryPages;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every {@code idgen ...} command in the docs' shell blocks parses against this CLI: its subcommand exists, and
 * its options and arguments are what the subcommand takes. A renamed option or subcommand fails here, naming the
 * page and line, instead of failing a reader. Nothing is sent: the commands are parsed, not run.
 */
class DocsCommandsTest {

  private final Path root = Path.of("..").toAbsolutePath().normalize();

  @Test
  void should_parse_every_idgen_command_that_the_docs_show() throws IOException {
    List<String> broken = new ArrayList<>();
    int parsed = 0;
    for (Path page : RepositoryPages.markdown(root)) {
      List<String> lines = Files.readAllLines(page);
      boolean shell = false;
      for (int i = 0; i < lines.size(); i++) {
        String line = lines.get(i).strip();
        if (line.startsWith("```")) {
          String lang = line.substring(3).strip();
          shell = !shell && (lang.equals("sh") || lang.equals("bash") || lang.equals("console") || lang.equals("shell"));
          continue;
        }
        if (!shell) {
          continue;
        }
        String command = line.startsWith("$ ") ? line.substring(2) : line;
        if (!command.startsWith("idgen ")) {
          continue;
        }
        List<String> args = words(command.substring("idgen ".length()));
        parsed++;
        try {
          IdgenCli.commandLine(new IdgenCli((target, credentials) -> {
            throw new AssertionError("a parse opens no channel");
          }, Map.of())).parseArgs(args.toArray(String[]::new));
        } catch (CommandLine.ParameterException e) {
          broken.add(root.relativize(page) + ":" + (i + 1) + ": " + command + ": " + e.getMessage());
        }
      }
    }
    assertThat(parsed).as("idgen commands found in the docs").isGreaterThan(15);
    assertThat(broken).as("commands in the docs that the CLI refuses (page:line: command: why)").isEmpty();
  }

  @Test
  void should_split_words_as_a_shell_does() {
    assertThat(words("create orders --start 42000   # a comment")).containsExactly("create", "orders", "--start",
        "42000");
    assertThat(words("get orders -o json | jq .headroom")).containsExactly("get", "orders", "-o", "json");
    assertThat(words("update orders --etag '3 4' \"x y\"")).containsExactly("update", "orders", "--etag", "3 4",
        "x y");
  }

  /**
   * The words of a shell command up to a comment, a pipe or a redirection, with quotes removed; enough for the
   * docs' commands, which use no variables inside quotes and no escapes.
   */
  static List<String> words(String command) {
    List<String> out = new ArrayList<>();
    StringBuilder word = null;
    char quote = 0;
    for (int i = 0; i < command.length(); i++) {
      char c = command.charAt(i);
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else {
          word.append(c);
        }
        continue;
      }
      if (c == '\'' || c == '"') {
        quote = c;
        word = word == null ? new StringBuilder() : word;
        continue;
      }
      if (Character.isWhitespace(c)) {
        if (word != null) {
          out.add(word.toString());
          word = null;
        }
        continue;
      }
      if ((c == '#' && word == null) || c == '|' || c == '>' || c == '<' || c == ';' || c == '&') {
        break;
      }
      word = word == null ? new StringBuilder() : word;
      word.append(c);
    }
    if (word != null) {
      out.add(word.toString());
    }
    return out;
  }
}
