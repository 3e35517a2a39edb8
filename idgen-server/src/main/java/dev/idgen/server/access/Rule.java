package dev.idgen.server.access;

import com.google.errorprone.annotations.Immutable;
import dev.idgen.server.config.OperationsSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One rule of {@code idgen.access.rules} as the interceptor applies it: the configured globs (an identity,
 * the sequences it may allocate from, those it may administer) compiled once. A glob's {@code *} matches
 * any characters, {@code ?} one; everything else is literal.
 */
@Immutable
final class Rule {
  private final Pattern identity;
  @SuppressWarnings("Immutable") // Stream.toList(): unmodifiable
  private final List<Pattern> allocate;
  @SuppressWarnings("Immutable") // Stream.toList(): unmodifiable
  private final List<Pattern> admin;

  Rule(OperationsSettings.AccessRule rule) {
    this.identity = glob(rule.identity());
    this.allocate = rule.allocate().stream().map(Rule::glob).toList();
    this.admin = rule.admin().stream().map(Rule::glob).toList();
  }

  /** The configured rules, in order. */
  static List<Rule> compile(List<OperationsSettings.AccessRule> rules) {
    List<Rule> out = new ArrayList<>();
    for (OperationsSettings.AccessRule rule : rules) {
      out.add(new Rule(rule));
    }
    return List.copyOf(out);
  }

  boolean matchesIdentity(String candidate) {
    return identity.matcher(candidate).matches();
  }

  boolean allows(Operation operation, String sequence) {
    List<Pattern> patterns = operation == Operation.ALLOCATE ? allocate : admin;
    for (Pattern pattern : patterns) {
      if (pattern.matcher(sequence).matches()) {
        return true;
      }
    }
    return false;
  }

  /** Whether this rule lets its identity administer at least one sequence (ListSequences needs that). */
  boolean administersAny() {
    return !admin.isEmpty();
  }

  /** A glob: {@code *} any characters, {@code ?} one; everything else literal. */
  static Pattern glob(String glob) {
    StringBuilder regex = new StringBuilder();
    StringBuilder literal = new StringBuilder();
    for (int k = 0; k < glob.length(); k++) {
      char c = glob.charAt(k);
      if (c == '*' || c == '?') {
        if (literal.length() > 0) {
          regex.append(Pattern.quote(literal.toString()));
          literal.setLength(0);
        }
        regex.append(c == '*' ? ".*" : ".");
      } else {
        literal.append(c);
      }
    }
    if (literal.length() > 0) {
      regex.append(Pattern.quote(literal.toString()));
    }
    return Pattern.compile(regex.toString(), Pattern.DOTALL);
  }
}
