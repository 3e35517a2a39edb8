package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The disk soak's short run ({@link DiskSoak}, about 45 s; {@code -DdiskSoakDuration=…} for longer): the embedded store on an ext4 file system of
 * its own filled up, turned read-only, its file damaged, its server killed, each at least once, while four
 * callers allocate. Asserts that no ID was handed out twice, every fault went as it must (the store's
 * failures said why; a full disk recovered by itself; a damaged copy was refused, naming the file), and that
 * a full disk did fail the store at least once. Needs root (it mounts a loop device): otherwise skipped,
 * saying why. Tagged {@code full}.
 */
@Tag("full")
class DiskSoakIT {
  /**
   * The run's length: the first round (every kind once, however long it takes) and little more. A longer soak
   * is {@code -DdiskSoakDuration=100s} (CI's until 2026-12-02) or the {@code disk-soak} command (RELIABILITY.md).
   */
  static final String DEFAULT_DURATION = "30s";

  @Test
  void should_hand_out_nothing_twice_and_say_what_each_disk_fault_is() throws Exception {
    String why = DiskImage.whyNot();
    assumeTrue(why == null, why);
    Path out = Path.of(System.getProperty("idgenChaosOut", "target/chaos-it")).resolve("disk-soak");
    Path jar = Path.of(System.getProperty("idgenServerJar", "idgen-server/target/idgen-server-all.jar"));
    long seed = Long.getLong("diskSoakSeed", System.nanoTime());
    Duration duration = Duration.parse("PT" + System.getProperty("diskSoakDuration", DEFAULT_DURATION));
    DiskSoak.Verdict v = new DiskSoak(new DiskSoak.Settings(duration, seed, out.toAbsolutePath(),
        jar.toAbsolutePath(), 4, 200, 32, Duration.ofSeconds(6)), System.out).run();
    DiskSoak.report(v, seed, System.out);

    assertThat(v.check().duplicates()).as("IDs handed out twice").isZero();
    assertThat(v.check().outOfBounds()).as("IDs out of bounds").isZero();
    assertThat(v.ids()).isPositive();
    for (DiskSoak.Kind kind : DiskSoak.Kind.values()) {
      assertThat(v.episodes()).as("episodes of " + kind.label).anyMatch(e -> e.kind == kind);
    }
    assertThat(v.episodes()).allSatisfy(e -> assertThat(e.problem).as(e.kind.label).isNull());
    assertThat(v.provoked(DiskSoak.Kind.DISK_FULL)).as("a full disk failed the store").isTrue();
    assertThat(v.ok()).isTrue();
  }
}
