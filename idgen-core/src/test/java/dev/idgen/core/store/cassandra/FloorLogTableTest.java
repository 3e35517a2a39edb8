package dev.idgen.core.store.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.FloorLog;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Which announcement rows a process retires when it first announces: those of earlier processes of its own
 * name only (the Cassandra side is {@code CassandraAdvanceIT}'s); how a log entry is written and read back.
 */
class FloorLogTableTest {
  private static final UUID INCARNATION = UUID.fromString("3de2f2e3-7d2f-4e5b-9a1c-d68b0de8aa11");

  @Test
  void should_take_only_the_rows_of_processes_of_the_same_name_for_its_earlier_processes() {
    assertThat(FloorLogTable.isProcessOf(FloorLogTable.rowKey("vm:7070", INCARNATION), "vm:7070")).isTrue();
    assertThat(FloorLogTable.isProcessOf(FloorLogTable.rowKey("vm:70701", INCARNATION), "vm:7070"))
        .as("another port").isFalse();
    assertThat(FloorLogTable.isProcessOf(FloorLogTable.rowKey("a#b", INCARNATION), "a"))
        .as("a server named a#b is not a process of a").isFalse();
    assertThat(FloorLogTable.isProcessOf("a#" + "x".repeat(36), "a")).as("no incarnation after the #").isFalse();
    assertThat(FloorLogTable.isProcessOf("vm:7070", "vm:7070")).as("the row of an older version: by name")
        .isFalse();
  }

  @Test
  void should_keep_a_definition_changes_version_in_its_entry_and_read_entries_without_one_as_before() {
    FloorLog.Change changed = FloorLog.Change.definitionChange(7, "orders", 3);
    assertThat(FloorLogTable.entry(changed)).isEqualTo("7 " + Long.MIN_VALUE + " orders 3");
    assertThat(FloorLogTable.change(FloorLogTable.entry(changed))).isEqualTo(changed);

    FloorLog.Change advance = new FloorLog.Change(8, "orders", 5_000);
    assertThat(FloorLogTable.entry(advance)).isEqualTo("8 5000 orders");
    assertThat(FloorLogTable.change("8 5000 orders")).isEqualTo(advance);
    assertThat(FloorLogTable.change("9 " + Long.MIN_VALUE + " orders"))
        .as("a change logged without its version").satisfies(c -> {
          assertThat(c.definitionChanged()).isTrue();
          assertThat(c.definitionVersion()).isZero();
        });
  }
}
