package dev.idgen.core.store.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.store.cassandra.CassandraChecks.NodeSettings;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pool's record of appended blocks, and the start-up checks of the settings the read-back relies on. */
class AppendedRecordTest {

  @Test
  void should_know_a_block_it_recorded_and_not_one_it_did_not() {
    Appended r = Appended.EMPTY.with(100, 200).with(200, 300);
    assertThat(r.contains(100, 200)).isTrue();
    assertThat(r.contains(200, 300)).isTrue();
    assertThat(r.contains(100, 300)).as("pairs are matched whole").isFalse();
    assertThat(r.mayContain(300, 400)).isFalse();
  }

  @Test
  void should_never_vouch_for_absence_of_a_block_it_dropped_from_the_record() {
    Appended r = Appended.EMPTY;
    for (int i = 0; i < Appended.CAPACITY + 3; i++) {
      r = r.with(i * 100L, i * 100L + 100);
    }
    assertThat(r.pairs()).hasSize(2 * Appended.CAPACITY);
    // The three oldest were dropped: each is now "may contain", so it is never appended again.
    for (int i = 0; i < 3; i++) {
      assertThat(r.contains(i * 100L, i * 100L + 100)).isFalse();
      assertThat(r.mayContain(i * 100L, i * 100L + 100)).isTrue();
    }
    assertThat(r.contains(300, 400)).isTrue();
    // A fresh block above everything dropped is still appendable.
    long top = (Appended.CAPACITY + 3) * 100L;
    assertThat(r.contains(top, top + 100) || r.mayContain(top, top + 100)).isFalse();
  }

  @Test
  void should_tell_whether_intervals_overlap_a_range() {
    List<Long> blocks = List.of(10L, 20L, 30L, 40L);
    assertThat(Blocks.overlaps(blocks, 15, 16)).isTrue();
    assertThat(Blocks.overlaps(blocks, 19, 31)).isTrue();
    assertThat(Blocks.overlaps(blocks, 20, 30)).isFalse();
    assertThat(Blocks.overlaps(blocks, 0, 10)).isFalse();
    assertThat(Blocks.overlaps(List.of(), 0, 100)).isFalse();
  }

  @Test
  void should_warn_about_paxos_v1_and_a_request_timeout_shorter_than_the_server_side_cas_timeouts() {
    NodeSettings v1 = new NodeSettings("v1", Duration.ofSeconds(1), Duration.ofSeconds(2));
    assertThat(CassandraChecks.warnings(v1, Duration.ofSeconds(5)))
        .singleElement().asString().contains("paxos_variant is v1");
    NodeSettings v2 = new NodeSettings("v2", Duration.ofSeconds(1), Duration.ofSeconds(2));
    assertThat(CassandraChecks.warnings(v2, Duration.ofSeconds(5))).isEmpty();
    assertThat(CassandraChecks.warnings(v2, Duration.ofSeconds(2)))
        .singleElement().asString().contains("raise request-timeout above PT3S");
    assertThat(CassandraChecks.warnings(new NodeSettings(null, null, null), Duration.ofSeconds(1))).isEmpty();
  }

  @Test
  void should_parse_cassandra_durations() {
    assertThat(CassandraChecks.parse("1000ms")).isEqualTo(Duration.ofSeconds(1));
    assertThat(CassandraChecks.parse("2s")).isEqualTo(Duration.ofSeconds(2));
    assertThat(CassandraChecks.parse("1500")).isEqualTo(Duration.ofMillis(1500));
    assertThat(CassandraChecks.parse("soon")).isNull();
  }
}
