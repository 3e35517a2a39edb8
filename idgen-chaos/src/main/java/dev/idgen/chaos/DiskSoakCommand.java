package dev.idgen.chaos;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code idgen-chaos disk-soak}: the embedded store's disk faults under load ({@link DiskSoak}), as root:
 * <pre>
 * java -jar idgen-chaos/target/idgen-chaos-0.2.0-SNAPSHOT-all.jar disk-soak --duration 10m --out /tmp/disk-soak
 * </pre>
 * Exits 0 when nothing was handed out twice and every fault went as it must, 1 otherwise, 2 on bad options.
 */
@Command(name = "disk-soak", mixinStandardHelpOptions = true,
    description = "The embedded store's disk faults (full, read-only, damaged file, kill -9) under load, on an "
        + "ext4 file system of its own on a loop device (root), then a check that no ID was handed out twice.")
final class DiskSoakCommand implements Callable<Integer> {
  @Option(names = "--duration", defaultValue = "3m", converter = ChaosCommand.DurationConverter.class,
      description = "how long faults are injected (default: ${DEFAULT-VALUE})")
  Duration duration;

  @Option(names = "--seed", description = "the faults' order and hold times (default: random, printed)")
  Long seed;

  @Option(names = "--callers", defaultValue = "4", description = "threads calling Allocate of the sequences that"
      + " are not strict; the strict one has a thread of its own (default: ${DEFAULT-VALUE})")
  int callers;

  @Option(names = "--rate", defaultValue = "200",
      description = "the most calls per second of each caller (default: ${DEFAULT-VALUE})")
  long rate;

  @Option(names = "--disk-mb", defaultValue = "32",
      description = "the size of the store's file system in MB (default: ${DEFAULT-VALUE})")
  int diskMegabytes;

  @Option(names = "--max-hold", defaultValue = "10s", converter = ChaosCommand.DurationConverter.class,
      description = "the longest a disk stays full or read-only (at least 2 s; default: ${DEFAULT-VALUE})")
  Duration maxHold;

  @Option(names = "--kinds", split = ",", paramLabel = "KIND",
      description = "only these faults, each once per round: disk-full, disk-readonly, damaged-file, server-kill"
          + " (default: all)")
  List<String> kinds = List.of();

  @Option(names = "--out", defaultValue = "target/disk-soak", description = "where the disk image and logs go")
  Path out;

  @Option(names = "--server-jar", defaultValue = "idgen-server/target/idgen-server-0.2.0-SNAPSHOT-all.jar",
      description = "the shaded server jar (default: ${DEFAULT-VALUE})")
  Path serverJar;

  @Override
  public Integer call() throws Exception {
    String why = DiskImage.whyNot();
    if (why != null) {
      throw new CommandLine.ParameterException(new CommandLine(this), "disk-soak cannot run here: " + why);
    }
    if (callers < 1 || rate < 1 || diskMegabytes < 16 || maxHold.toMillis() < 2_000) {
      throw new CommandLine.ParameterException(new CommandLine(this),
          "expected --callers >= 1, --rate >= 1, --disk-mb >= 16 (ext4's journal), --max-hold >= 2s");
    }
    Set<DiskSoak.Kind> only = EnumSet.noneOf(DiskSoak.Kind.class);
    try {
      kinds.forEach(k -> only.add(DiskSoak.Kind.of(k.strip())));
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
    }
    long s = seed != null ? seed : new SecureRandom().nextLong();
    System.out.println("disk-soak seed=" + s);
    DiskSoak.Verdict v = new DiskSoak(new DiskSoak.Settings(duration, s, out.toAbsolutePath(),
        serverJar.toAbsolutePath(), callers, rate, diskMegabytes, maxHold, only), System.out).run();
    DiskSoak.report(v, s, System.out);
    return v.ok() ? 0 : 1;
  }
}
