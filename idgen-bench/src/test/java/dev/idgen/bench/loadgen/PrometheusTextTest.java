package dev.idgen.bench.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusTextTest {

  @Test
  void should_parse_labels_values_and_skip_comments() {
    PrometheusText t = PrometheusText.parse("""
        # HELP idgen_store_cas_total CAS operations.
        # TYPE idgen_store_cas_total counter
        idgen_store_cas_total{tier="dc",outcome="applied"} 12.0
        idgen_store_cas_total{ outcome="conflict", tier="dc", } 3 1700000000000

        idgen_weird{msg="a \\"quoted\\" }, value"} +Inf
        idgen_store_reservations_total 7
        """);

    assertThat(t.samples()).containsEntry(
            new PrometheusText.Series("idgen_store_cas_total", Map.of("tier", "dc", "outcome", "applied")), 12.0)
        .containsEntry(
            new PrometheusText.Series("idgen_store_cas_total", Map.of("tier", "dc", "outcome", "conflict")), 3.0)
        .containsEntry(new PrometheusText.Series("idgen_weird", Map.of("msg", "a \"quoted\" }, value")),
            Double.POSITIVE_INFINITY)
        .containsEntry(new PrometheusText.Series("idgen_store_reservations_total", Map.of()), 7.0)
        .hasSize(4);
  }

  @Test
  void should_give_the_change_of_each_series_counting_new_ones_from_zero() {
    PrometheusText before = PrometheusText.parse("c{a=\"1\"} 5\nc{a=\"2\"} 1\nother 9\n");
    PrometheusText after = PrometheusText.parse("c{a=\"1\"} 8\nc{a=\"2\"} 1\nc{a=\"3\"} 4\nother 100\n");

    assertThat(PrometheusText.delta(before, after, "c")).containsOnly(
        Map.entry(new PrometheusText.Series("c", Map.of("a", "1")), 3.0),
        Map.entry(new PrometheusText.Series("c", Map.of("a", "2")), 0.0),
        Map.entry(new PrometheusText.Series("c", Map.of("a", "3")), 4.0));
  }

  @Test
  void should_name_the_line_that_is_not_a_sample() {
    assertThatThrownBy(() -> PrometheusText.parse("ok 1\nbroken{a=1} 2\n"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("line 2");
  }
}
