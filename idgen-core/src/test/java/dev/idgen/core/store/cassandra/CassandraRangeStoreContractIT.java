package dev.idgen.core.store.cassandra;

import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.IdRange;
import dev.idgen.core.RangeStore;
import dev.idgen.core.RangeStoreContractTest;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceState;
import dev.idgen.testing.CassandraExtension;
import java.util.List;
import java.util.Optional;
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
    return new RangeStore() {
      @Override
      public void create(SequenceDefinition definition) {
        shared.create(definition);
      }

      @Override
      public Optional<SequenceDefinition> find(String name) {
        return shared.find(name);
      }

      @Override
      public List<SequenceDefinition> list(String afterName, int limit) {
        return shared.list(afterName, limit);
      }

      @Override
      public IdRange reserve(SequenceDefinition sequence, int stripe, long size) {
        return shared.reserve(sequence, stripe, size);
      }

      @Override
      public AdvanceReceipt advance(SequenceDefinition sequence, long floor) {
        return shared.advance(sequence, floor);
      }

      @Override
      public SequenceState state(SequenceDefinition sequence) {
        return shared.state(sequence);
      }

      @Override
      public void close() {}
    };
  }
}
