package dev.idgen.server.access;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.server.config.OperationsSettings;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A configured access rule, compiled: its globs. */
class RuleTest {

  @Test
  void should_match_globs_literally_apart_from_star_and_question_mark() {
    Rule rule = new Rule(new OperationsSettings.AccessRule("svc-?", List.of("orders.*"), List.of()));

    assertThat(rule.matchesIdentity("svc-1")).isTrue();
    assertThat(rule.matchesIdentity("svc-12")).isFalse();
    assertThat(rule.allows(Operation.ALLOCATE, "orders.eu")).isTrue();
    assertThat(rule.allows(Operation.ALLOCATE, "ordersXeu")).isFalse(); // '.' is literal
    assertThat(rule.allows(Operation.ADMIN, "orders.eu")).isFalse();
    assertThat(rule.administersAny()).isFalse();
  }
}
