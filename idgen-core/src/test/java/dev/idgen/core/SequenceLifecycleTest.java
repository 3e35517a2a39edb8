package dev.idgen.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idgen.core.store.embedded.EmbeddedRangeStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sequence's life after its creation, between allocators that share a store: an update, a delete, an
 * undelete and a purge reach every live server (through the floor log) before the call returns, and every
 * refusal says why.
 */
class SequenceLifecycleTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final InMemoryRangeStore store = new InMemoryRangeStore().shared(Duration.ofMillis(50));
  private final List<Allocator> allocators = new ArrayList<>();
  private final Set<Long> handedOut = new HashSet<>();

  @AfterEach
  void closeAll() {
    allocators.forEach(Allocator::close);
  }

  private Allocator server(String name) {
    return server(name, Allocator.builder(store));
  }

  private Allocator server(String name, AllocatorBuilder b) {
    Allocator a = b.serverName(name).minNodeBlock(100).build();
    allocators.add(a);
    return a;
  }

  /** Allocates, checking that no ID is handed out twice in the whole test. */
  private List<IdRange> allocate(Allocator a, String sequence, long count) {
    List<IdRange> got = a.allocate(sequence, count, WAIT);
    for (IdRange r : got) {
      for (long i = 0; i < r.count(); i++) {
        assertThat(handedOut.add(r.get(i))).as("ID %d handed out twice", r.get(i)).isTrue();
      }
    }
    return got;
  }

  /** Allocates until the sequence is exhausted on this server; bounded. */
  private void exhaust(Allocator a, String sequence) {
    for (int i = 0; i < 1_000; i++) {
      try {
        allocate(a, sequence, 50);
      } catch (SequenceExhaustedException e) {
        for (IdRange r : e.delivered()) {
          for (long k = 0; k < r.count(); k++) {
            assertThat(handedOut.add(r.get(k))).isTrue();
          }
        }
        return;
      }
    }
    throw new AssertionError("sequence '" + sequence + "' not exhausted after 1,000 calls");
  }

  @Test
  void a_raised_max_serves_again_on_every_server_as_soon_as_the_update_returns() {
    Allocator a = server("a");
    Allocator b = server("b");
    a.create(new SequenceDefinition("orders", 1, 2_000, 1, 300, 1_000_000));
    allocate(b, "orders", 10); // b holds a reserve of the old definition
    exhaust(a, "orders");
    exhaust(b, "orders");
    assertThat(handedOut).hasSize(2_000); // every ID of [1, 2000], once

    StoredSequence updated = a.update("orders", null, SequenceUpdate.NONE.withMax(5_000));

    assertThat(updated.definition().max()).isEqualTo(5_000);
    assertThat(updated.version()).isEqualTo(2);
    // No wait: the update returned once b had applied it.
    assertThat(allocate(b, "orders", 100)).allSatisfy(r -> assertThat(r.first()).isGreaterThan(2_000));
    assertThat(allocate(a, "orders", 100)).allSatisfy(r -> assertThat(r.last()).isLessThanOrEqualTo(5_000));
    assertThat(a.describe("orders").definition().max()).isEqualTo(5_000);
    assertThat(b.describe("orders").stored().etag()).isEqualTo("2");
  }

  @Test
  void a_server_whose_local_read_is_behind_a_change_it_applied_loads_the_new_definition() {
    // findStored stands for a store's local read (a Cassandra replica that missed the change's commit for a
    // while); findCurrent for the read where changes are decided.
    AtomicBoolean behind = new AtomicBoolean();
    InMemoryRangeStore lagging = new InMemoryRangeStore() {
      private volatile StoredSequence old;

      @Override
      public java.util.Optional<StoredSequence> findStored(String name) {
        java.util.Optional<StoredSequence> now = super.findStored(name);
        if (!behind.get()) {
          old = now.orElse(null);
          return now;
        }
        return java.util.Optional.ofNullable(old);
      }

      @Override
      public java.util.Optional<StoredSequence> findCurrent(String name) {
        return super.findStored(name);
      }
    }.shared(Duration.ofMillis(50));
    Allocator a = server("a", Allocator.builder(lagging));
    Allocator b = server("b", Allocator.builder(lagging));
    a.create(new SequenceDefinition("lag", 1, 1_000, 1, 100, 1_000_000));
    exhaust(b, "lag");
    behind.set(true);

    a.update("lag", null, SequenceUpdate.NONE.withMax(2_000));

    // b applied the change (its runtime unloaded); its next load reads locally, behind the change.
    assertThat(allocate(b, "lag", 100)).allSatisfy(r -> assertThat(r.first()).isGreaterThan(1_000));
  }

  @Test
  void new_caps_reach_every_server_without_changing_what_was_handed_out() {
    Allocator a = server("a");
    Allocator b = server("b");
    a.create(new SequenceDefinition("caps", 1, Long.MAX_VALUE, 1, 10_000, 1_000_000));
    allocate(b, "caps", 1);
    a.update("caps", null, SequenceUpdate.NONE.withNodeBlockSize(500).withDcBlockSize(5_000));

    assertThat(b.sequenceStats()).noneMatch(s -> s.definition().name().equals("caps")); // b gave its reserve back
    allocate(b, "caps", 1);
    assertThat(b.sequenceStats()).singleElement().satisfies(s -> {
      assertThat(s.definition().nodeBlockSize()).isEqualTo(500);
      assertThat(s.held()).isLessThanOrEqualTo(500);
    });
  }

  @Test
  void refuses_what_cannot_change_and_says_why() {
    Allocator a = server("a");
    a.create(new SequenceDefinition("r", 10, 1_000_000, 2, 1_000, 1_000_000));

    assertThatThrownBy(() -> a.update("r", null, SequenceUpdate.NONE.withMax(999_999)))
        .isInstanceOfSatisfying(ChangeRefusedException.class,
            e -> assertThat(e.kind()).isEqualTo(ChangeRefusedException.Kind.MAX_DECREASE))
        .hasMessageContaining("max 999999 is below its current max 1000000");
    assertThatThrownBy(() -> a.update("r", null, SequenceUpdate.NONE.withStripes(4)))
        .isInstanceOfSatisfying(ChangeRefusedException.class, e -> {
          assertThat(e.kind()).isEqualTo(ChangeRefusedException.Kind.FIELD_IMMUTABLE);
          assertThat(e.field()).isEqualTo("stripes");
        })
        .hasMessageContaining("stripes cannot change (asked: 4, current: 2)");
    assertThatThrownBy(() -> a.update("r", null, SequenceUpdate.NONE.withStart(1)))
        .isInstanceOf(ChangeRefusedException.class).hasMessageContaining("start cannot change");
    assertThatThrownBy(() -> a.update("r", null, SequenceUpdate.NONE.withNodeBlockSize(2_000_000)))
        .isInstanceOfSatisfying(InvalidRequestException.class, e -> assertThat(e.field()).isEqualTo("dc_block_size"));
    assertThatThrownBy(() -> a.update("r", "7", SequenceUpdate.NONE.withMax(2_000_000)))
        .isInstanceOfSatisfying(SequenceChangedException.class, e -> assertThat(e.currentEtag()).isEqualTo("1"))
        .hasMessageContaining("etag '7' is not its current one ('1')");
    assertThatThrownBy(() -> a.update("missing", null, SequenceUpdate.NONE.withMax(5)))
        .isInstanceOf(SequenceNotFoundException.class);
    // Nothing of the above changed it.
    assertThat(store.findStored("r").orElseThrow().version()).isEqualTo(1);

    // The same immutable values, and the etag read, are fine.
    StoredSequence changed = a.update("r", "1", SequenceUpdate.NONE.withStripes(2).withStart(10).withMax(2_000_000));
    assertThat(changed.version()).isEqualTo(2);
    assertThat(changed.definition().max()).isEqualTo(2_000_000);
    // An update that changes nothing changes nothing (but completes an earlier one).
    assertThat(a.update("r", null, SequenceUpdate.NONE).version()).isEqualTo(2);
  }

  @Test
  void a_deleted_sequence_serves_nowhere_and_an_undelete_continues_above_what_it_handed_out() throws Exception {
    Allocator a = server("a");
    Allocator b = server("b");
    a.create(new SequenceDefinition("gone", 1, Long.MAX_VALUE, 1, 1_000, 1_000_000));
    allocate(b, "gone", 10);
    long givenBackBefore = store.givenBack;

    StoredSequence deleted = a.delete("gone", "1", false);

    assertThat(deleted.deleted()).isTrue();
    assertThat(deleted.expireTime().orElseThrow())
        .isEqualTo(deleted.deleteTime().orElseThrow().plus(Allocator.DEFAULT_UNDELETE_WINDOW));
    // Given back on a thread of b's own, after b dropped it (so that no floor sync waits for the store write).
    assertThat(store.awaitGivenBackAbove(givenBackBefore, WAIT)).as("b gave its reserve back").isTrue();
    assertThat(b.isLoaded("gone")).isFalse();
    assertThatThrownBy(() -> b.allocate("gone", 1, WAIT)).isInstanceOfSatisfying(SequenceDeletedException.class,
        e -> assertThat(e.purged()).isFalse())
        .hasMessageContaining("sequence 'gone' was deleted at")
        .hasMessageContaining("UndeleteSequence restores it until");
    assertThatThrownBy(() -> a.advance("gone", 100)).isInstanceOf(SequenceDeletedException.class);
    assertThatThrownBy(() -> a.update("gone", null, SequenceUpdate.NONE.withMax(5)))
        .isInstanceOf(SequenceDeletedException.class);
    assertThatThrownBy(() -> a.delete("gone", null, false)).isInstanceOf(SequenceDeletedException.class);
    // Get still shows it; a listing only when asked.
    assertThat(b.describe("gone").stored().deleteTime()).isPresent();
    assertThat(a.listStored("", 10, false)).isEmpty();
    assertThat(a.listStored("", 10, true)).singleElement().satisfies(s -> assertThat(s.deleted()).isTrue());
    // Its name is never reused.
    assertThatThrownBy(() -> a.create(new SequenceDefinition("gone", 1, Long.MAX_VALUE, 1, 1_000, 1_000_000)))
        .isInstanceOf(SequenceAlreadyExistsException.class)
        .hasMessageContaining("it was deleted at")
        .hasMessageContaining("never used again");

    StoredSequence back = b.undelete("gone", deleted.etag());

    assertThat(back.deleted()).isFalse();
    assertThat(back.version()).isEqualTo(3);
    allocate(a, "gone", 2_000); // no ID of before again (allocate checks)
    allocate(b, "gone", 2_000);
    assertThatThrownBy(() -> a.undelete("gone", null))
        .isInstanceOfSatisfying(ChangeRefusedException.class,
            e -> assertThat(e.kind()).isEqualTo(ChangeRefusedException.Kind.NOT_DELETED))
        .hasMessageContaining("is not deleted");
  }

  @Test
  void a_purge_waits_for_the_expire_time_and_keeps_the_name_taken() {
    long[] now = {1_000_000};
    Allocator a = server("a", Allocator.builder(store).wallClock(() -> now[0]).undeleteWindow(Duration.ofHours(1)));
    a.create(new SequenceDefinition("old", 1, Long.MAX_VALUE, 1, 1_000, 1_000_000));

    assertThatThrownBy(() -> a.delete("old", null, true))
        .isInstanceOfSatisfying(ChangeRefusedException.class,
            e -> assertThat(e.kind()).isEqualTo(ChangeRefusedException.Kind.NOT_DELETED));
    a.delete("old", null, false);
    now[0] += Duration.ofMinutes(59).toMillis();
    assertThatThrownBy(() -> a.delete("old", null, true))
        .isInstanceOfSatisfying(ChangeRefusedException.class,
            e -> assertThat(e.kind()).isEqualTo(ChangeRefusedException.Kind.PURGE_BEFORE_EXPIRY))
        .hasMessageContaining("can be purged from");
    now[0] += Duration.ofMinutes(1).toMillis();

    assertThat(a.delete("old", null, true).purged()).isTrue();

    assertThatThrownBy(() -> a.describe("old")).isInstanceOfSatisfying(SequenceDeletedException.class,
        e -> assertThat(e.purged()).isTrue()).hasMessageContaining("purged");
    assertThatThrownBy(() -> a.undelete("old", null)).isInstanceOf(SequenceDeletedException.class);
    assertThat(a.listStored("", 10, true)).isEmpty();
    assertThatThrownBy(() -> a.create(new SequenceDefinition("old", 1, Long.MAX_VALUE, 1, 1_000, 1_000_000)))
        .isInstanceOf(SequenceAlreadyExistsException.class).hasMessageContaining("purged");
  }

  @Test
  void reserve_range_refuses_a_deleted_sequence_lists_its_reservations_until_a_purge_and_sees_a_raised_max(
      @TempDir Path dir) {
    long[] now = {1_000_000};
    RangeStore embedded = EmbeddedRangeStore.open(dir, () -> now[0]);
    Allocator a = Allocator.builder(embedded).serverName("a").minNodeBlock(100).wallClock(() -> now[0])
        .undeleteWindow(Duration.ofHours(1)).build();
    try {
      a.create(new SequenceDefinition("bulk", 1, 1_000, 1, 100, 1_000));
      assertThat(a.reserveRange("bulk", 500, "import-1", "alice").first()).isEqualTo(1);
      assertThatThrownBy(() -> a.reserveRange("bulk", 1_000, "import-2", "alice"))
          .isInstanceOf(RangeAboveMaxException.class);

      a.update("bulk", null, SequenceUpdate.NONE.withMax(5_000));
      Reservation raised = a.reserveRange("bulk", 1_000, "import-2", "alice");
      assertThat(raised.last()).as("above the old max").isGreaterThan(1_000).isLessThanOrEqualTo(5_000);

      a.delete("bulk", null, false);
      assertThatThrownBy(() -> a.reserveRange("bulk", 10, "import-3", "alice"))
          .isInstanceOfSatisfying(SequenceDeletedException.class, e -> assertThat(e.purged()).isFalse())
          .hasMessageContaining("was deleted at");
      assertThatThrownBy(() -> a.reserveRange("bulk", 500, "import-1", "alice"))
          .as("a retry of a reservation made before").isInstanceOf(SequenceDeletedException.class);
      assertThat(a.reservations("bulk", Long.MIN_VALUE, 10)).extracting(Reservation::requestId)
          .containsExactly("import-1", "import-2");

      a.undelete("bulk", null);
      assertThat(a.reserveRange("bulk", 500, "import-1", "bob").replayed()).isTrue();
      assertThat(a.reserveRange("bulk", 10, "import-3", "alice").first()).isGreaterThan(raised.last());

      a.delete("bulk", null, false);
      now[0] += Duration.ofHours(1).toMillis();
      a.delete("bulk", null, true);
      assertThatThrownBy(() -> a.reservations("bulk", Long.MIN_VALUE, 10))
          .isInstanceOfSatisfying(SequenceDeletedException.class, e -> assertThat(e.purged()).isTrue());
    } finally {
      a.close();
      embedded.close();
    }
  }

  @Test
  void a_change_that_a_live_server_did_not_apply_in_time_fails_and_the_same_call_again_completes_it()
      throws Exception {
    Allocator a = server("a", Allocator.builder(store).advanceConfirmTimeout(Duration.ofMillis(300)));
    Allocator b = server("b");
    a.create(new SequenceDefinition("slow", 1, 1_000, 1, 100, 1_000_000));
    exhaust(b, "slow");
    Stall stall = new Stall().arm();
    b.beforeFloorSync(stall::here); // a poller stuck on a slow store read
    assertThat(stall.awaitStalled()).isTrue();

    assertThatThrownBy(() -> a.update("slow", null, SequenceUpdate.NONE.withMax(3_000)))
        .isInstanceOfSatisfying(ChangeNotConfirmedException.class,
            e -> assertThat(e.unconfirmed()).containsExactly("local/b"))
        .hasMessageContaining("its new definition is in force in the store")
        .hasMessageContaining("make the same call again");
    assertThat(store.findStored("slow").orElseThrow().definition().max()).as("in force in the store").isEqualTo(3_000);

    stall.release();
    assertThat(a.update("slow", null, SequenceUpdate.NONE.withMax(3_000)).version()).isEqualTo(2);
    allocate(b, "slow", 100);
  }

  @Test
  void a_call_waiting_for_a_refill_when_a_change_unloads_its_runtime_gets_exactly_what_it_asked_for()
      throws Exception {
    Stall stall = new Stall();
    InMemoryRangeStore slow = new InMemoryRangeStore() {
      @Override
      protected void beforeReserve(SequenceDefinition d, int stripe, long size) {
        stall.here(); // one refill, stuck on a slow store until released
      }
    }.shared(Duration.ofMillis(50));
    Allocator a = server("a", Allocator.builder(slow));
    a.create(new SequenceDefinition("busy", 1, Long.MAX_VALUE, 1, 100, 1_000_000));
    allocate(a, "busy", 10); // a node block of 100: 90 left in memory
    stall.arm();
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      // Takes what the pool holds, then waits for the stuck refill for the rest.
      Future<List<IdRange>> call = threads.submit(() -> a.allocate("busy", 150, WAIT));
      assertThat(stall.awaitStalled()).isTrue();
      // The change unloads the runtime under the call, which goes on with the sequence loaded anew.
      Future<StoredSequence> change = threads.submit(
          () -> a.update("busy", null, SequenceUpdate.NONE.withNodeBlockSize(200)));

      List<IdRange> got = call.get(WAIT.toSeconds(), TimeUnit.SECONDS);

      assertThat(got.stream().mapToLong(IdRange::count).sum()).as("IDs of a call of 150: %s", got).isEqualTo(150);
      stall.release();
      assertThat(change.get(WAIT.toSeconds(), TimeUnit.SECONDS).definition().nodeBlockSize()).isEqualTo(200);
    } finally {
      stall.release();
      threads.shutdownNow();
    }
  }

  @Test
  void a_load_that_read_the_store_before_a_delete_was_applied_here_does_not_serve_after_the_delete()
      throws Exception {
    // Found by the full ChaosIT (seed -7150607335844139643): a call loading the sequence had read its
    // definition before the delete's floor-log entry was applied on its server, and put its runtime in the
    // map after that entry had found none to unload: the server served the deleted sequence until the runtime
    // went idle.
    Stall stall = new Stall();
    InMemoryRangeStore slow = new InMemoryRangeStore() {
      @Override
      public long floor(SequenceDefinition d) {
        stall.here(); // one load, stuck between its definition read and its runtime's start
        return super.floor(d);
      }
    }.shared(Duration.ofMillis(50));
    Allocator a = server("a", Allocator.builder(slow));
    a.create(new SequenceDefinition("racing", 1, Long.MAX_VALUE, 1, 100, 1_000_000));
    stall.arm();
    ExecutorService threads = Executors.newFixedThreadPool(1);
    try {
      Future<List<IdRange>> loading = threads.submit(() -> a.allocate("racing", 1, WAIT));
      assertThat(stall.awaitStalled()).isTrue();
      a.delete("racing", null, false); // applied here at once: nothing loaded yet to unload
      stall.release();
      try {
        loading.get(WAIT.toSeconds(), TimeUnit.SECONDS); // started before the delete: it may be served
      } catch (ExecutionException e) {
        assertThat(e.getCause()).isInstanceOf(SequenceDeletedException.class);
      }

      assertThatThrownBy(() -> a.allocate("racing", 1, WAIT)).as("a call that starts after the delete returned")
          .isInstanceOf(SequenceDeletedException.class);
    } finally {
      stall.release();
      threads.shutdownNow();
    }
  }

  /**
   * A store of {@code store} whose definition reads show {@code behind} while it is set: replicas that missed a
   * change, as Cassandra's read once showed when it fell back from SERIAL to this datacenter's replicas.
   */
  private RangeStore behind(AtomicReference<StoredSequence> behind) {
    return new ForwardingRangeStore(store) {
      @Override
      public Optional<StoredSequence> findStored(String name) {
        StoredSequence old = behind.get();
        return old != null && old.definition().name().equals(name) ? Optional.of(old) : super.findStored(name);
      }

      @Override
      public Optional<StoredSequence> findCurrent(String name) {
        return findStored(name);
      }
    };
  }

  @Test
  void a_server_whose_read_is_behind_a_change_does_not_confirm_it_until_it_reads_it() {
    // Issue 43, case 5: b read the definition from replicas behind the delete, kept its runtime and confirmed;
    // the delete returned OK while b went on serving the deleted sequence.
    AtomicReference<StoredSequence> stale = new AtomicReference<>();
    Allocator a = server("a", Allocator.builder(store).advanceConfirmTimeout(Duration.ofMillis(300)));
    Allocator b = server("b", Allocator.builder(behind(stale)));
    a.create(new SequenceDefinition("lagged", 1, Long.MAX_VALUE, 1, 100, 1_000_000));
    allocate(b, "lagged", 1);
    stale.set(store.findStored("lagged").orElseThrow());

    assertThatThrownBy(() -> a.delete("lagged", null, false))
        .isInstanceOfSatisfying(ChangeNotConfirmedException.class,
            e -> assertThat(e.unconfirmed()).containsExactly("local/b"))
        .hasMessageContaining("make the same call again");
    assertThat(store.findStored("lagged").orElseThrow().deleted()).as("in force in the store").isTrue();

    stale.set(null); // b's reads show the change now
    assertThatThrownBy(() -> a.delete("lagged", null, false)).as("the same call again completes it")
        .isInstanceOf(SequenceDeletedException.class);
    assertThat(b.isLoaded("lagged")).isFalse();
    assertThatThrownBy(() -> b.allocate("lagged", 1, WAIT)).isInstanceOf(SequenceDeletedException.class);
  }

  @Test
  void a_load_that_reads_only_versions_older_than_one_applied_here_answers_unavailable() {
    // Issue 43, case 6: a store that shows an older version than the one this server applied (restored from a
    // snapshot, or read from replicas behind it) made Runtimes.load call itself until StackOverflowError.
    AtomicReference<StoredSequence> restored = new AtomicReference<>();
    Allocator a = server("a");
    Allocator b = server("b", Allocator.builder(behind(restored)));
    a.create(new SequenceDefinition("restored", 1, 1_000, 1, 100, 1_000_000));
    allocate(b, "restored", 1);
    StoredSequence v1 = store.findStored("restored").orElseThrow();
    a.update("restored", null, SequenceUpdate.NONE.withMax(2_000)); // b applied version 2, and unloaded
    restored.set(v1);

    assertThatThrownBy(() -> b.allocate("restored", 1, WAIT))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("sequence 'restored'")
        .hasMessageContaining("version 2")
        .hasMessageContaining("version 1");

    restored.set(null);
    assertThat(allocate(b, "restored", 1)).singleElement().satisfies(r -> assertThat(r.last()).isLessThanOrEqualTo(2_000));
  }

  @Test
  void a_give_back_stuck_on_the_store_holds_up_no_change_or_advance_on_its_server() throws Exception {
    // Issue 43, case 8d: the give-back of the old definition's reserve ran inside the floor sync's cycle, so a
    // slow store write held up every change and advance that needed this server's confirmation.
    Stall stall = new Stall();
    InMemoryRangeStore slow = new InMemoryRangeStore() {
      @Override
      public long giveBack(SequenceDefinition d, int stripe, List<IdRange> ranges) {
        stall.here(); // one give-back, stuck on a slow store until released
        return super.giveBack(d, stripe, ranges);
      }
    }.shared(Duration.ofMillis(50));
    Allocator a = server("a", Allocator.builder(slow).advanceConfirmTimeout(Duration.ofSeconds(2)));
    Allocator b = server("b", Allocator.builder(slow).advanceConfirmTimeout(Duration.ofSeconds(2)));
    a.create(new SequenceDefinition("held", 1, Long.MAX_VALUE, 1, 100, 1_000_000));
    allocate(b, "held", 1); // b holds a reserve of the old definition
    stall.arm();
    try {
      assertThat(a.update("held", null, SequenceUpdate.NONE.withNodeBlockSize(50)).version()).isEqualTo(2);
      assertThat(stall.awaitStalled()).as("b's give-back reached the store").isTrue();
      assertThat(b.isLoaded("held")).isFalse();

      // While that give-back is still stuck: an advance through b, and another change.
      b.advance("held", 5_000);
      assertThat(a.update("held", null, SequenceUpdate.NONE.withDcBlockSize(500_000)).version()).isEqualTo(3);
      assertThat(stall.isHeld()).as("the give-back was still stuck").isTrue();
    } finally {
      stall.release();
    }
    allocate(b, "held", 10); // b serves the new definition (no ID twice: allocate checks)
  }

  /**
   * One thread held at a point of a slow store or server: the first {@link #here()} after {@link #arm()} says so
   * ({@link #awaitStalled()}) and waits for {@link #release()}, at most {@code WAIT}; later calls pass.
   */
  private static final class Stall {
    private final AtomicBoolean armed = new AtomicBoolean();
    private final CountDownLatch stalled = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);
    private volatile boolean held;

    Stall arm() {
      armed.set(true);
      return this;
    }

    void here() {
      if (armed.getAndSet(false)) {
        held = true;
        stalled.countDown();
        try {
          released.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } finally {
          held = false;
        }
      }
    }

    boolean awaitStalled() throws InterruptedException {
      return stalled.await(5, TimeUnit.SECONDS);
    }

    void release() {
      released.countDown();
    }

    /** Whether a thread is held here now. */
    boolean isHeld() {
      return held;
    }
  }
}
