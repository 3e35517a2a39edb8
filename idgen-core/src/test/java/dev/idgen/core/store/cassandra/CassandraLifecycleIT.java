package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.LocalCassandra.DC1;
import static dev.idgen.core.store.cassandra.LocalCassandra.DC2;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import dev.idgen.core.Allocator;
import dev.idgen.core.ChangeNotConfirmedException;
import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceDeletedException;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceUpdate;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.StoredSequence;
import dev.idgen.testing.CassandraExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A sequence's life on the real two-datacenter cluster, with three servers (two in dc1, one in dc2), each
 * with its own store connection as separate processes would have: a 32-bit sequence that reached its max
 * serves again on every server, without a restart, as soon as UpdateSequence raised the max; a delete stops
 * every server and an undelete brings them back, never handing an ID out twice.
 */
@ExtendWith(CassandraExtension.class)
class CassandraLifecycleIT {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final long INT_MAX = Integer.MAX_VALUE;

  @AutoClose
  private final Closer closer = new Closer();
  private final Set<Long> handedOut = new HashSet<>();
  private final List<CassandraRangeStore> stores = new ArrayList<>();

  private Allocator server(String keyspace, String dc, String name) {
    CassandraRangeStore store = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(keyspace, dc,
        name.equals("a1"))));
    stores.add(store);
    return closer.add(Allocator.builder(store).serverName(name).minNodeBlock(100).build());
  }

  private void record(List<IdRange> ranges) {
    for (IdRange r : ranges) {
      for (long i = 0; i < r.count(); i++) {
        assertThat(handedOut.add(r.get(i))).as("ID %d handed out twice", r.get(i)).isTrue();
      }
    }
  }

  /** Allocates from one server until the sequence is exhausted there; bounded. */
  private void exhaust(Allocator server, String sequence) {
    for (int i = 0; i < 2_000; i++) {
      try {
        record(server.allocate(sequence, 97, WAIT));
      } catch (SequenceExhaustedException e) {
        record(e.delivered());
        return;
      }
    }
    throw new AssertionError("not exhausted after 2,000 calls");
  }

  @Test
  void an_exhausted_32_bit_sequence_serves_again_on_every_server_once_its_max_is_raised() {
    String ks = LocalCassandra.newKeyspace("raise");
    Allocator a1 = server(ks, DC1, "a1");
    Allocator a2 = server(ks, DC1, "a2");
    Allocator b1 = server(ks, DC2, "b1");
    long start = INT_MAX - 4_999; // the last 5,000 IDs of a signed 32-bit column
    a1.create(new SequenceDefinition("legacy32", start, INT_MAX, 1, 1_000, 10_000));
    for (Allocator s : List.of(a1, a2, b1)) {
      record(s.allocate("legacy32", 10, WAIT)); // every server holds a reserve
    }
    for (Allocator s : List.of(a1, a2, b1)) {
      exhaust(s, "legacy32");
    }
    for (Allocator s : List.of(a1, a2, b1)) {
      assertThatThrownBy(() -> s.allocate("legacy32", 1, WAIT)).isInstanceOf(SequenceExhaustedException.class);
    }
    // Every one of the 5,000 IDs was handed out or is a counted gap: a compare-and-set whose outcome stayed
    // unknown on a slow node (the tests' 2 s request timeout) counts its block as lost (an upper bound: another
    // server may have taken it) and never hands it out.
    long lost = stores.stream().mapToLong(st -> st.poolStats().idsLost() + st.globalStats().idsLost()).sum();
    assertThat(handedOut).hasSizeLessThanOrEqualTo(5_000).allSatisfy(id -> assertThat(id).isBetween(start, INT_MAX));
    assertThat(handedOut.size() + lost).as("IDs handed out (%d) plus counted gaps (%d)", handedOut.size(), lost)
        .isGreaterThanOrEqualTo(5_000);

    // The column became a bigint: let the sequence go past 2^31 - 1, from the other datacenter.
    StoredSequence raised = b1.update("legacy32", "1", SequenceUpdate.NONE.withMax(INT_MAX + 1_000_000));

    assertThat(raised.version()).isEqualTo(2);
    // No restart, no wait: every server serves above the old max as soon as the update returned.
    for (Allocator s : List.of(a1, a2, b1)) {
      List<IdRange> got = s.allocate("legacy32", 50, WAIT);
      record(got);
      assertThat(got).allSatisfy(r -> {
        assertThat(r.first()).isGreaterThan(INT_MAX);
        assertThat(r.last()).isLessThanOrEqualTo(INT_MAX + 1_000_000);
      });
    }
    assertThat(a2.describe("legacy32").definition().max()).isEqualTo(INT_MAX + 1_000_000);
  }

  @Test
  void a_delete_stops_every_server_and_an_undelete_brings_them_back_above_what_was_handed_out() {
    String ks = LocalCassandra.newKeyspace("delete");
    Allocator a1 = server(ks, DC1, "a1");
    Allocator b1 = server(ks, DC2, "b1");
    a1.create(new SequenceDefinition("retired", 1, Long.MAX_VALUE, 2, 1_000, 10_000));
    record(a1.allocate("retired", 100, WAIT));
    record(b1.allocate("retired", 100, WAIT));

    StoredSequence deleted = a1.delete("retired", null, false);

    assertThat(deleted.deleted()).isTrue();
    assertThat(b1.isLoaded("retired")).as("b1 gave back and forgot its reserve").isFalse();
    assertThatThrownBy(() -> b1.allocate("retired", 1, WAIT)).isInstanceOf(SequenceDeletedException.class)
        .hasMessageContaining("UndeleteSequence restores it until");
    assertThat(b1.describe("retired").stored().deleteTime()).isPresent();

    b1.undelete("retired", deleted.etag());

    for (Allocator s : List.of(a1, b1)) {
      for (int i = 0; i < 20; i++) {
        record(s.allocate("retired", 100, WAIT));
      }
    }
  }

  @Test
  void a_server_that_cannot_read_a_delete_at_serial_does_not_confirm_it() {
    // Issue 43, case 5: the definition's SERIAL read fell back to this datacenter's replicas, and the server
    // confirmed what they showed, which may be behind the change (then it served a deleted sequence on).
    String ks = LocalCassandra.newKeyspace("unread");
    Allocator a1 = closer.add(Allocator.builder(closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks,
        DC1, true)))).serverName("a1").minNodeBlock(100).advanceConfirmTimeout(Duration.ofSeconds(3)).build());
    CassandraRangeStore b1Store = closer.add(CassandraRangeStore.connect(LocalCassandra.settings(ks, DC2, false)));
    Allocator b1 = closer.add(Allocator.builder(b1Store).serverName("b1").minNodeBlock(100).build());
    a1.create(new SequenceDefinition("unread", 1, Long.MAX_VALUE, 1, 1_000, 10_000));
    record(b1.allocate("unread", 100, WAIT));
    b1Store.beforeSerialRead = serial -> {
      if (serial == ConsistencyLevel.SERIAL) {
        throw new StoreUnavailableException("reading at SERIAL failed (test: dc2 cut off from dc1)");
      }
    };

    assertThatThrownBy(() -> a1.delete("unread", null, false))
        .isInstanceOfSatisfying(ChangeNotConfirmedException.class,
            e -> assertThat(e.unconfirmed()).singleElement().asString().startsWith(DC2 + "/b1"));
    record(b1.allocate("unread", 10, WAIT)); // not confirmed: b1 serves what it holds

    b1Store.beforeSerialRead = serial -> {};
    assertThatThrownBy(() -> a1.delete("unread", null, false)).as("the same call again completes it")
        .isInstanceOf(SequenceDeletedException.class);
    assertThatThrownBy(() -> b1.allocate("unread", 1, WAIT)).isInstanceOf(SequenceDeletedException.class);
  }
}
