package dev.idgen.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.security.SecureRandom;
import picocli.CommandLine;
import org.junit.jupiter.api.Test;

/**
 * The short chaos run of CI: three servers over both datacenters of the cluster that the build started,
 * four clients, about 80 seconds of faults (every kind at least once), then the checker on the records.
 * The seed is random and printed; rerun a failure with {@code -DchaosSeed=<seed>}.
 */
class ChaosIT {

  @Test
  void should_never_hand_out_an_id_twice_nor_out_of_bounds_under_faults() throws Exception {
    String seed = System.getProperty("chaosSeed", Long.toString(new SecureRandom().nextLong()));
    Path out = Path.of(property("idgenChaosOut"));
    ChaosCommand command = new ChaosCommand();
    new CommandLine(command).parseArgs(
        "--duration", System.getProperty("chaosDuration", "80s"),
        "--seed", seed,
        "--servers", "3",
        "--clients", "4",
        "--out", out.toString(),
        "--use-running-cassandra",
        "--repo-root", property("idgenRepoRoot"),
        "--server-jar", property("idgenServerJar"));

    Checker.Report report = command.execute();

    assertThat(report.complete()).as("the run recorded its end").isTrue();
    assertThat(report.ids()).as("IDs received").isPositive();
    assertThat(report.faults()).as("faults injected").isGreaterThanOrEqualTo(4);
    assertThat(report.advances()).as("AdvanceSequence calls").isPositive();
    assertThat(report.duplicates()).as("duplicates, seed %s", seed).isZero();
    assertThat(report.outOfBounds()).as("out of bounds, seed %s", seed).isZero();
    assertThat(report.belowFloor()).as("below an advanced floor, seed %s", seed).isZero();
    assertThat(report.unleased()).as("served but never leased, seed %s", seed).isZero();
    assertThat(report.badCalls()).as("calls with the wrong number of IDs, seed %s", seed).isZero();
    assertThat(report.lost()).as("lost IDs, seed %s", seed).isBetween(0L, report.lostBound());
    assertThat(report.ok()).isTrue();
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    assertThat(value).as("system property %s (set by failsafe)", name).isNotNull();
    return value;
  }
}
