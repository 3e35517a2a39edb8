package dev.idgen.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** A Dockerfile read as instructions: continuation lines joined, comments and directives dropped. */
record Dockerfile(List<Instruction> instructions) {

  /** One instruction: its keyword in upper case and the rest of the line. */
  record Instruction(String keyword, String arguments) {}

  static Dockerfile read(Path file) throws IOException {
    List<Instruction> instructions = new ArrayList<>();
    StringBuilder logical = new StringBuilder();
    for (String line : Files.readAllLines(file)) {
      String trimmed = line.trim();
      if (trimmed.startsWith("#") || (trimmed.isEmpty() && logical.length() == 0)) {
        continue;
      }
      if (trimmed.endsWith("\\")) {
        logical.append(trimmed, 0, trimmed.length() - 1).append(' ');
        continue;
      }
      logical.append(trimmed);
      String text = logical.toString().trim();
      logical.setLength(0);
      if (text.isEmpty()) {
        continue;
      }
      int space = text.indexOf(' ');
      instructions.add(new Instruction(text.substring(0, space).toUpperCase(Locale.ROOT),
          text.substring(space + 1).trim()));
    }
    return new Dockerfile(instructions);
  }

  List<String> all(String keyword) {
    return instructions.stream().filter(i -> i.keyword().equals(keyword)).map(Instruction::arguments)
        .toList();
  }

  /** The instructions of the last stage (after the last FROM). */
  Dockerfile finalStage() {
    int last = 0;
    for (int i = 0; i < instructions.size(); i++) {
      if (instructions.get(i).keyword().equals("FROM")) {
        last = i;
      }
    }
    return new Dockerfile(instructions.subList(last, instructions.size()));
  }
}
