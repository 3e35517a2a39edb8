package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.LocalCassandra.DC1;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.Allocator;
import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.testing.CassandraExtension;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The outage runway on the real store: a server with default settings serves a paced caller through a
 * freeze (SIGSTOP) of its own datacenter's Cassandra node, without one failed call, because its reserve
 * was sized by time before the freeze. The rate and the freeze are chosen so that the reserve is ample by
 * construction (the test checks that precondition rather than assuming it); how long the default runway
 * lasts at which rate is measured in BENCHMARKS.md, not asserted here.
 */
@ExtendWith(CassandraExtension.class)
@Isolated // it freezes dc1 for everyone: no other class runs meanwhile
@Tag("full")
class CassandraStoreFreezeIT {
  private static final int RATE = 500; // calls of one ID per second
  private static final Duration FREEZE = Duration.ofSeconds(20);

  private final Closer closer = new Closer();

  @AfterEach
  void close() throws Exception {
    LocalCassandra.resume(DC1); // whatever happened, never leave a node frozen
    closer.close();
  }

  @Test
  void should_serve_a_paced_caller_through_a_freeze_of_the_local_node_without_a_failed_call() throws Exception {
    String keyspace = LocalCassandra.newKeyspace("freeze");
    CassandraRangeStore store = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC1, true));
    closer.add(store);
    Allocator server = Allocator.builder(store).build(); // default outage runway (5 min) and sizes
    closer.add(server);
    server.create(SequenceDefinition.withDefaults("paced"));

    Set<Long> seen = new HashSet<>();
    Pacer warmUp = new Pacer(server, seen);
    warmUp.run(Duration.ofSeconds(5));
    assertThat(warmUp.failures).as("warm-up failures").isZero();
    long held = server.sequenceStats().get(0).held();
    assertThat(held).as("the reserve covers the freeze twice over: the precondition of this test")
        .isGreaterThanOrEqualTo(2L * RATE * FREEZE.toSeconds());

    Pacer frozen = new Pacer(server, seen);
    LocalCassandra.pause(DC1);
    try {
      frozen.run(FREEZE);
    } finally {
      LocalCassandra.resume(DC1);
    }
    Pacer after = new Pacer(server, seen);
    after.run(Duration.ofSeconds(3));

    assertThat(frozen.calls).as("calls during the freeze").isGreaterThan(RATE * FREEZE.toSeconds() / 2);
    assertThat(frozen.failures).as("failed calls during the freeze: " + frozen.firstFailure).isZero();
    assertThat(after.failures).as("failed calls after it: " + after.firstFailure).isZero();
    assertThat(frozen.duplicates + after.duplicates + warmUp.duplicates).as("duplicates").isZero();
  }

  /** One caller at {@link #RATE} calls per second, each with a 1 s deadline, for a while. */
  private static final class Pacer {
    final Allocator server;
    final Set<Long> seen;
    long calls;
    long failures;
    long duplicates;
    String firstFailure;

    Pacer(Allocator server, Set<Long> seen) {
      this.server = server;
      this.seen = seen;
    }

    void run(Duration d) throws InterruptedException {
      long start = System.nanoTime();
      long end = start + d.toNanos();
      long period = TimeUnit.SECONDS.toNanos(1) / RATE;
      for (long next = start; next < end; next += period) {
        long wait = next - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
        }
        calls++;
        try {
          for (IdRange r : server.allocate("paced", 1, Duration.ofSeconds(1))) {
            if (!seen.add(r.first())) {
              duplicates++;
            }
          }
        } catch (StoreUnavailableException e) {
          failures++;
          if (firstFailure == null) {
            firstFailure = e.getMessage();
          }
        }
      }
    }
  }
}
