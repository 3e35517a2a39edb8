package dev.idgen.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The repository's Markdown pages, for the tests that check the docs. */
public final class RepositoryPages {
  private RepositoryPages() {}

  /** Every Markdown file under {@code root}, sorted; build output, installed tools and git's own files left out. */
  public static List<Path> markdown(Path root) throws IOException {
    try (Stream<Path> files = Files.walk(root)) {
      return files.filter(p -> p.toString().endsWith(".md"))
          .filter(p -> {
            String rel = root.relativize(p).toString();
            return !rel.contains("/target/") && !rel.startsWith("target/") && !rel.contains("node_modules")
                && !rel.startsWith(".ci/tools") && !rel.startsWith(".git/") && !rel.contains("/.mvn/");
          })
          .sorted().toList();
    }
  }
}
