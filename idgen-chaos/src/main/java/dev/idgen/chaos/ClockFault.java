package dev.idgen.chaos;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * A clock fault: one process's wall clock stepped by an offset ({@link #inject}) and put back ({@link #heal}),
 * an idgen server's or a Cassandra node's, through its {@link FakeClock}. The process must have been started
 * under that clock: a server with {@link ServerNode#environment} set to {@link FakeClock#environment()}, a
 * Cassandra node with {@link #underFakeClock} (a netns cluster's node, killed and started again on its data:
 * the loopback clusters' nodes cannot be restarted, see {@link CassandraCluster#whyNoKill()}).
 *
 * <p>A run calls {@link #inject}, lets traffic run, then {@link #heal} (in a {@code finally}: a clock left
 * stepped would confuse every later fault); the offset takes effect within {@link #SETTLE}. Not thread-safe:
 * the fault thread alone injects and heals.
 */
final class ClockFault {
  /** How long after {@link #inject} or {@link #heal} the process surely reads its new offset. */
  static final Duration SETTLE = Duration.ofSeconds(FakeClock.CACHE_SECONDS).plusMillis(500);

  private final String target;
  private final FakeClock clock;
  private final Duration offset;

  /** A step of {@code target}'s clock (a name for the report: "server s1", "cassandra dc1b"). */
  ClockFault(String target, FakeClock clock, Duration offset) {
    this.target = target;
    this.clock = clock;
    this.offset = offset;
  }

  /** Steps the clock to the real time plus the offset. */
  void inject() throws IOException {
    clock.set(offset);
  }

  /** Puts the clock back on the real time. Safe to call any number of times. */
  void heal() throws IOException {
    clock.set(Duration.ZERO);
  }

  String target() {
    return target;
  }

  Duration offset() {
    return offset;
  }

  /** For the run's log: e.g. {@code clock cassandra dc1b +600 s}. */
  String describe() {
    return "clock " + target + " " + FakeClock.format(offset) + " s";
  }

  @Override
  public String toString() {
    return describe();
  }

  /**
   * Starts Cassandra node {@code node} again under a fake clock whose file is {@code dir/node}: kills it
   * ({@code kill -9}) and starts it on its data with {@code IDGEN_CASSANDRA_FAKETIME_DIR=dir}. Its clock
   * starts on the real time. {@link #restoreRealClock} undoes it.
   */
  static FakeClock underFakeClock(CassandraCluster cluster, String node, Path dir)
      throws IOException, InterruptedException {
    if (!cluster.canKill()) {
      throw new IllegalStateException("cannot fake the clock of cassandra " + node + ": it must be started again"
          + " on a fake wall clock, and " + cluster.whyNoKill());
    }
    Path library = FakeClock.library().orElseThrow(() -> new IllegalStateException(
        FakeClock.unavailable().orElse("the wall-clock shim is missing")));
    FakeClock clock = new FakeClock(library, dir.resolve(node));
    cluster.kill(node);
    cluster.restart(node, Map.of("IDGEN_CASSANDRA_FAKETIME_DIR", dir.toAbsolutePath().toString(),
        "IDGEN_WALLCLOCK_LIB", library.toString()));
    return clock;
  }

  /** Starts node {@code node} again on the real clock (after {@link #underFakeClock}). */
  static void restoreRealClock(CassandraCluster cluster, String node) throws IOException, InterruptedException {
    cluster.kill(node);
    cluster.restart(node, Map.of());
  }
}
