package dev.idgen.core.store.cassandra;

import dev.idgen.core.ForwardingRangeStore;
import dev.idgen.core.RangeStore;
import dev.idgen.core.RangeStoreContractTest;
import dev.idgen.testing.CassandraExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The shared {@link RangeStoreContractTest} — the same suite the embedded store passes — against the
 * Cassandra store on the real two-datacenter cluster, from a server in dc1. Advance and exhaustion
 * therefore behave exactly as on the embedded store.
 */
@ExtendWith(CassandraExtension.class)
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
}
