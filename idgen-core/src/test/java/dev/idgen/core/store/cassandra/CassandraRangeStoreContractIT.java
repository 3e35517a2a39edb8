package dev.idgen.core.store.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.ForwardingRangeStore;
import dev.idgen.core.RangeStore;
import dev.idgen.core.RangeStoreContractTest;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoredSequence;
import dev.idgen.testing.CassandraExtension;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The shared {@link RangeStoreContractTest} — the same suite the embedded store passes — against the
 * Cassandra store on the real two-datacenter cluster, from a server in dc1. Advance and exhaustion
 * therefore behave exactly as on the embedded store.
 *
 * <p>Its methods run beside each other (and beside the other classes, within the pool's few threads), as the
 * embedded store's run of the suite does: each test works on sequences of its own prefix, and every test
 * opens a store of its own over the one session.
 */
@ExtendWith(CassandraExtension.class)
@Execution(ExecutionMode.CONCURRENT)
class CassandraRangeStoreContractIT extends RangeStoreContractTest {
  private static CassandraRangeStore shared;

  @BeforeAll
  static void connect() {
    shared = CassandraRangeStore.connect(
        LocalCassandra.settings(LocalCassandra.newKeyspace("contract"), LocalCassandra.DC1, true));
  }

  @AfterAll
  static void disconnect() {
    if (shared != null) {
      shared.close();
    }
  }

  /** One session for the class; the suite's per-test close() must not close it. */
  @Override
  protected RangeStore newStore() {
    return new ForwardingRangeStore(shared) {}; // close() does not close the shared store
  }

  /**
   * 8 x 200 contended reservations in the README's test command (about 18 s on 2 cores; 500 each took 45 s of its
   * 8 minutes), 8 x 500 with {@code -Didgen.tests=full}, as on the embedded store.
   */
  @Override
  protected int concurrentReservesPerThread() {
    return "full".equals(System.getProperty("idgen.tests")) ? 500 : 200;
  }

  @Test
  void should_record_the_creation_time() {
    Instant before = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    SequenceDefinition d = created(prefix + "timed", 1, 100, 1);
    Instant after = Instant.now();

    StoredSequence found = store.findStored(d.name()).orElseThrow();
    assertThat(found.definition()).isEqualTo(d);
    assertThat(found.createTime()).hasValueSatisfying(t -> assertThat(t).isBetween(before, after));
    assertThat(store.listStored(prefix, 10)).filteredOn(s -> s.definition().name().startsWith(prefix))
        .containsExactly(found);
  }
}
