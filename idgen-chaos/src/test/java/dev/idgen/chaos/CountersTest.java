package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CountersTest {
  @Test
  void should_read_lost_ids_cas_outcomes_regressions_and_attempts_from_a_metrics_page() {
    String page = String.join("\n",
        "# HELP idgen_ids_lost_total IDs that will never be handed out",
        "idgen_ids_lost_total{reason=\"abandoned\"} 100.0",
        "idgen_ids_lost_total{reason=\"dc_block\"} 20.0",
        "idgen_ids_lost_total{reason=\"advanced\"} 5000.0",
        "idgen_store_cas_total{outcome=\"resolved_ambiguous\",tier=\"dc\"} 7.0",
        "idgen_store_cas_total{outcome=\"applied\",tier=\"global\"} 3.0",
        "idgen_store_regressions_total{tier=\"dc\"} 1.0",
        "idgen_store_regressions_total{tier=\"global\"} 0.0",
        "idgen_store_cas_attempts_total{tier=\"dc\"} 42.0");

    ServerNode.Counters c = ServerNode.Counters.parse(page);

    assertThat(c.lost()).as("abandoned + dc_block, not advanced").isEqualTo(120);
    assertThat(c.cas()).containsEntry("dc:resolved_ambiguous", 7L).containsEntry("global:applied", 3L)
        .containsEntry("dc:regressions", 1L).containsEntry("global:regressions", 0L);
    assertThat(c.attempts()).containsEntry("dc", 42L);
  }
}
