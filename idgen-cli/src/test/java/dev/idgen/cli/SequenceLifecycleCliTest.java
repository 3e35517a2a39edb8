package dev.idgen.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.cli.CliRunner.Result;
import dev.idgen.server.EmbeddedDaemon;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code idgen update}, {@code delete} and {@code undelete} against the real daemon (embedded store). */
class SequenceLifecycleCliTest {

  @TempDir
  Path dataDir;

  private EmbeddedDaemon daemon;
  private CliRunner cli;

  @BeforeEach
  void start() {
    daemon = EmbeddedDaemon.inProcess(dataDir, List.of());
    cli = CliRunner.inProcess(daemon.inProcessName(), Map.of());
  }

  @AfterEach
  void stop() {
    daemon.close();
  }

  @Test
  void update_raises_max_of_an_exhausted_sequence_and_it_serves_again() {
    assertThat(cli.run("create", "small", "--max", "10").exitCode()).isZero();
    assertThat(cli.run("allocate", "small", "--count", "10").exitCode()).isZero();
    assertThat(cli.run("allocate", "small", "--count", "1").exitCode()).isEqualTo(ExitCodes.OUT_OF_RANGE);

    Result updated = cli.run("update", "small", "--max", "20", "--node-block-size", "5", "--etag", "1");

    assertThat(updated.exitCode()).isZero();
    assertThat(updated.out()).contains("max:              20").contains("node block size:  5")
        .contains("etag:             2");
    Result more = cli.run("allocate", "small", "--count", "10");
    assertThat(more.exitCode()).isZero();
    assertThat(more.out().lines().map(Long::parseLong).toList()).containsExactlyInAnyOrder(11L, 12L, 13L, 14L, 15L, 16L,
        17L, 18L, 19L, 20L);
  }

  @Test
  void update_exits_with_the_refusals_status() {
    assertThat(cli.run("create", "s", "--max", "1000").exitCode()).isZero();

    Result lower = cli.run("update", "s", "--max", "10");
    assertThat(lower.exitCode()).isEqualTo(ExitCodes.FAILED_PRECONDITION);
    assertThat(lower.err()).startsWith("idgen: FAILED_PRECONDITION: ").contains("below its current max 1000");
    Result stale = cli.run("update", "s", "--max", "2000", "--etag", "7");
    assertThat(stale.exitCode()).isEqualTo(ExitCodes.ABORTED);
    assertThat(stale.err()).contains("etag '7' is not its current one");
    Result nothing = cli.run("update", "s");
    assertThat(nothing.exitCode()).isEqualTo(ExitCodes.USAGE);
    assertThat(nothing.err()).contains("nothing to change");
  }

  @Test
  void delete_and_undelete() {
    assertThat(cli.run("create", "old").exitCode()).isZero();

    Result deleted = cli.run("delete", "old");

    assertThat(deleted.exitCode()).isZero();
    assertThat(deleted.out()).contains("deleted:").contains("restorable until");
    Result refused = cli.run("allocate", "old", "--count", "1");
    assertThat(refused.exitCode()).isEqualTo(ExitCodes.NOT_FOUND);
    assertThat(refused.err()).contains("was deleted at").contains("UndeleteSequence restores it until");
    assertThat(cli.run("list").out()).doesNotContain("old");
    assertThat(cli.run("list", "--show-deleted").out()).contains("old");
    assertThat(cli.run("delete", "old", "--purge").exitCode()).isEqualTo(ExitCodes.FAILED_PRECONDITION);

    Result restored = cli.run("undelete", "old");

    assertThat(restored.exitCode()).isZero();
    assertThat(restored.out()).doesNotContain("deleted:");
    assertThat(cli.run("allocate", "old", "--count", "1").exitCode()).isZero();
    assertThat(cli.run("undelete", "old").exitCode()).isEqualTo(ExitCodes.FAILED_PRECONDITION);
  }
}
