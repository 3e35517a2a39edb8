package dev.idgen.core;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What every {@link RangeStore} promises, as tests. The embedded store's test and the Cassandra store's
 * integration test ({@code CassandraRangeStoreContractIT}) extend this class (it ships in idgen-core's
 * test-jar), so it relies on nothing but the interface.
 *
 * <p>{@link #newStore()} is called before each test, and the store is closed after it. The store need
 * not be empty: every test works on sequences whose names start with a prefix unique to that test, so
 * an implementation may return new instances over one shared backend (a keyspace created once per
 * class). Sequences use the default block sizes, large enough that no store-side block boundary cuts a
 * range short in these tests.
 *
 * <p>The methods are public because subclasses live in other packages.
 */
public abstract class RangeStoreContractTest {

  /** A store for one test, closed by this class after the test. */
  protected abstract RangeStore newStore();

  protected RangeStore store;

  /** Unique to the running test: every sequence name in it starts with this. */
  protected String prefix;

  @BeforeEach
  public void openStore() {
    store = newStore();
    prefix = "t" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1) + "-";
  }

  @AfterEach
  public void closeStore() {
    if (store != null) {
      store.close();
    }
  }

  // ---- strict sequences: the owner row and the pool's fence

  @Test
  public void should_keep_a_strict_definition_with_its_home_datacenter() {
    SequenceDefinition strict = new SequenceDefinition(prefix + "strict", 1, 1_000_000, 1, 1000, 100_000)
        .withStrictOrdering(store.datacenter());
    store.create(strict);
    assertThat(store.find(strict.name())).contains(strict);
    assertThat(store.listStored(prefix, 10)).extracting(StoredSequence::definition).contains(strict);
  }

  @Test
  public void should_replace_the_owner_row_only_when_it_is_as_expected() {
    SequenceDefinition strict = new SequenceDefinition(prefix + "owned", 1, 1_000_000, 1, 1000, 100_000)
        .withStrictOrdering(store.datacenter());
    store.create(strict);
    assertThat(store.owner(strict)).isEmpty();
    OwnerRecord first = new OwnerRecord("a", java.util.UUID.randomUUID(), "a:1", 1, java.util.UUID.randomUUID());
    OwnerRecord rival = new OwnerRecord("b", java.util.UUID.randomUUID(), "b:1", 1, java.util.UUID.randomUUID());
    assertThat(store.replaceOwner(strict, null, first)).isTrue();
    assertThat(store.replaceOwner(strict, null, rival)).as("a row exists").isFalse();
    assertThat(store.owner(strict)).contains(first);
    OwnerRecord renewed = new OwnerRecord("a", first.incarnation(), "a:1", 1, java.util.UUID.randomUUID());
    assertThat(store.replaceOwner(strict, first, renewed)).isTrue();
    OwnerRecord takeOver = new OwnerRecord("b", rival.incarnation(), "b:1", 2, java.util.UUID.randomUUID());
    assertThat(store.replaceOwner(strict, first, takeOver)).as("first is no longer the row").isFalse();
    assertThat(store.replaceOwner(strict, renewed, takeOver)).isTrue();
    assertThat(store.owner(strict)).contains(takeOver);
  }

  @Test
  public void should_refuse_reservations_of_an_owner_epoch_once_a_higher_one_reserved() {
    SequenceDefinition strict = new SequenceDefinition(prefix + "fenced", 1, 1_000_000_000L, 1, 1000, 100_000)
        .withStrictOrdering(store.datacenter());
    store.create(strict);
    IdRange one = store.reserveStrict(strict, 1, 100);
    IdRange oneMore = store.reserveStrict(strict, 1, 100);
    assertThat(oneMore.first()).isGreaterThan(one.last());
    IdRange two = store.reserveStrict(strict, 2, 100);
    assertThat(two.first()).isGreaterThan(oneMore.last());
    assertThatThrownBy(() -> store.reserveStrict(strict, 1, 100)).isInstanceOf(NotOwnerException.class)
        .hasMessageContaining("superseded");
    // Many reservations of the owner go on increasing, across refills of every tier.
    long last = two.last();
    for (int i = 0; i < 50; i++) {
      IdRange r = store.reserveStrict(strict, 2, 5_000);
      assertThat(r.first()).isGreaterThan(last);
      last = r.last();
    }
  }

  // ---- definitions

  @Test
  void should_report_the_same_state_cheaply_as_authoritatively_when_nothing_changes() {
    SequenceDefinition d = created(prefix + "gauge", 1, 1_000_000, 2);
    store.reserve(d, 0, 100);
    store.reserve(d, 1, 300);
    SequenceState authoritative = store.state(d);
    SequenceState approximate = store.approximateState(d);
    assertThat(approximate.stripes()).isEqualTo(authoritative.stripes());
    assertThat(approximate.remaining()).isEqualTo(authoritative.remaining()).isLessThan(1_000_000 - 300);
    assertThat(approximate.datacenterReserves()).isEqualTo(authoritative.datacenterReserves());
  }

  @Test
  public void should_find_a_created_sequence_with_its_whole_definition() {
    SequenceDefinition definition = new SequenceDefinition(prefix + "orders", 1000, 99_999, 3, 50, 5000);

    store.create(definition);

    assertThat(store.find(definition.name())).contains(definition);
    assertThat(store.find(prefix + "unknown")).isEmpty();
  }

  @Test
  public void should_list_sequences_in_name_order_page_by_page() {
    // Created out of order; name order is String.compareTo order (names are ASCII).
    List<String> suffixes = List.of("b", "B", "a_1", "a1", "a.1", "a-1", "9", "c");
    for (String suffix : suffixes) {
      store.create(SequenceDefinition.withDefaults(prefix + suffix));
    }
    List<String> expected = suffixes.stream().map(s -> prefix + s).sorted().toList();

    List<String> seen = new ArrayList<>();
    String after = prefix; // sorts before every name that starts with the prefix
    List<SequenceDefinition> page;
    do {
      page = store.list(after, 3);
      assertThat(page).hasSizeLessThanOrEqualTo(3);
      for (SequenceDefinition d : page) {
        if (!d.name().startsWith(prefix)) {
          break; // past our names: the rest belongs to other tests
        }
        seen.add(d.name());
        after = d.name();
      }
    } while (page.size() == 3 && page.get(2).name().startsWith(prefix));

    assertThat(seen).containsExactlyElementsOf(expected);
    assertThat(store.list(expected.get(2), 2)).extracting(SequenceDefinition::name)
        .containsExactly(expected.get(3), expected.get(4));
  }

  @Test
  public void should_list_from_the_first_name_when_after_is_empty() {
    store.create(SequenceDefinition.withDefaults(prefix + "x"));
    store.create(SequenceDefinition.withDefaults(prefix + "y"));

    List<String> all = new ArrayList<>();
    String after = "";
    List<SequenceDefinition> page;
    do {
      page = store.list(after, 50);
      page.forEach(d -> all.add(d.name()));
      if (!page.isEmpty()) {
        after = page.get(page.size() - 1).name();
      }
    } while (page.size() == 50);

    assertThat(all).contains(prefix + "x", prefix + "y");
    assertThat(all).isSortedAccordingTo(String::compareTo).doesNotHaveDuplicates();
  }

  @Test
  public void should_refuse_to_create_a_sequence_that_exists_whatever_its_settings() {
    SequenceDefinition first = new SequenceDefinition(prefix + "dup", 1, 1000, 1, 10, 100);
    store.create(first);
    store.reserve(first, 0, 7);

    assertThatThrownBy(() -> store.create(new SequenceDefinition(prefix + "dup", 5, 9000, 4, 20, 200)))
        .isInstanceOf(SequenceAlreadyExistsException.class)
        .hasMessageContaining("sequence '" + prefix + "dup' already exists");

    assertThat(store.find(first.name())).contains(first);
    assertThat(store.reserve(first, 0, 1).first()).isEqualTo(8);
  }

  @Test
  public void should_report_unknown_sequences_as_not_found() {
    SequenceDefinition never = SequenceDefinition.withDefaults(prefix + "never-created");

    assertThatThrownBy(() -> store.reserve(never, 0, 1)).isInstanceOf(SequenceNotFoundException.class)
        .hasMessageContaining(never.name());
    assertThatThrownBy(() -> store.advance(never, 10)).isInstanceOf(SequenceNotFoundException.class);
    assertThatThrownBy(() -> store.state(never)).isInstanceOf(SequenceNotFoundException.class);
  }

  // ---- reserve

  @Test
  public void should_reserve_consecutive_ranges_of_the_requested_size() {
    SequenceDefinition d = created(prefix + "dense", 1, Long.MAX_VALUE, 1);

    assertThat(store.reserve(d, 0, 10)).isEqualTo(new IdRange(1, 10, 1));
    assertThat(store.reserve(d, 0, 5)).isEqualTo(new IdRange(11, 5, 1));
    assertThat(store.reserve(d, 0, 1)).isEqualTo(new IdRange(16, 1, 1));
    // A store may stop a reservation at a block boundary of its own (a Cassandra pool's first block is small
    // while its rate is unknown): fewer IDs, still consecutive, and the next reservation goes on from there.
    IdRange big = store.reserve(d, 0, 1000);
    assertThat(big.first()).isEqualTo(17);
    assertThat(big.count()).isBetween(1L, 1000L);
    assertThat(store.reserve(d, 0, 1).first()).isEqualTo(17 + big.count());
  }

  @Test
  public void should_reject_a_size_below_one_and_an_unknown_stripe() {
    SequenceDefinition d = created(prefix + "args", 1, 100, 2);

    assertThatThrownBy(() -> store.reserve(d, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> store.reserve(d, 0, -5)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> store.reserve(d, 2, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> store.reserve(d, -1, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThat(store.reserve(d, 0, 1)).isEqualTo(new IdRange(1, 1, 2)); // nothing was consumed
  }

  @Test
  public void should_give_each_stripe_its_own_ids_with_the_stripe_count_as_stride() {
    SequenceDefinition d = created(prefix + "striped", 10, Long.MAX_VALUE, 3);

    assertThat(store.reserve(d, 0, 4)).isEqualTo(new IdRange(10, 4, 3)); // 10, 13, 16, 19
    assertThat(store.reserve(d, 1, 4)).isEqualTo(new IdRange(11, 4, 3)); // 11, 14, 17, 20
    assertThat(store.reserve(d, 1, 2)).isEqualTo(new IdRange(23, 2, 3)); // stripe 1 moves alone
    assertThat(store.reserve(d, 2, 1)).isEqualTo(new IdRange(12, 1, 3));
    assertThat(store.reserve(d, 0, 2)).isEqualTo(new IdRange(22, 2, 3));
  }

  @Test
  public void should_cut_the_last_range_at_max_and_then_report_exhaustion() {
    SequenceDefinition d = created(prefix + "small", 1, 25, 1);
    store.reserve(d, 0, 10);
    store.reserve(d, 0, 10);

    assertThat(store.reserve(d, 0, 10)).isEqualTo(new IdRange(21, 5, 1));
    for (int attempt = 0; attempt < 2; attempt++) { // and it stays exhausted
      assertThatThrownBy(() -> store.reserve(d, 0, 1))
          .isInstanceOfSatisfying(SequenceExhaustedException.class, e -> {
            assertThat(e.sequence()).isEqualTo(d.name());
            assertThat(e.max()).isEqualTo(25);
          })
          .hasMessageContaining(d.name()).hasMessageContaining("25");
    }
  }

  @Test
  public void should_cut_each_stripe_at_its_own_last_id_at_or_below_max() {
    // Stripe 0: 10, 13, …, 28; stripe 1: 11, …, 29; stripe 2: 12, …, 30. Seven IDs each.
    SequenceDefinition d = created(prefix + "striped-small", 10, 30, 3);

    assertThat(store.reserve(d, 0, 100)).isEqualTo(new IdRange(10, 7, 3));
    assertThat(store.reserve(d, 2, 5)).isEqualTo(new IdRange(12, 5, 3));
    assertThat(store.reserve(d, 2, 5)).isEqualTo(new IdRange(27, 2, 3));
    assertThatThrownBy(() -> store.reserve(d, 0, 1)).isInstanceOf(SequenceExhaustedException.class);
    assertThatThrownBy(() -> store.reserve(d, 2, 1)).isInstanceOf(SequenceExhaustedException.class);
    assertThat(store.reserve(d, 1, 100)).isEqualTo(new IdRange(11, 7, 3)); // untouched by the others
  }

  @ParameterizedTest(name = "stripes = {0}")
  @ValueSource(ints = {1, 7})
  public void should_hand_out_every_id_of_a_32_bit_sequence_exactly_once_then_exhaust(int stripes) {
    long max = Integer.MAX_VALUE;
    long start = max - 2_999;
    SequenceDefinition d = created(prefix + "int32", start, max, stripes);
    Random random = new Random(42);

    BitSet seen = new BitSet(3000);
    List<Long> duplicates = new ArrayList<>();
    for (int k = 0; k < stripes; k++) {
      for (IdRange r : drain(d, k, () -> 1 + random.nextInt(97))) { // drain checks the bounds
        forEachId(r, id -> {
          if (seen.get((int) (id - start))) {
            duplicates.add(id);
          }
          seen.set((int) (id - start));
        });
      }
    }

    assertThat(duplicates).isEmpty();
    assertThat(seen.cardinality()).isEqualTo(3000);
  }

  @Test
  public void should_not_overflow_near_long_max_value() {
    long start = Long.MAX_VALUE - 20;
    SequenceDefinition d = created(prefix + "int64", start, Long.MAX_VALUE, 4);

    Set<Long> ids = new HashSet<>();
    for (int k = 0; k < 4; k++) {
      forEachId(store.reserve(d, k, 2), ids::add);
      // "Everything left": from index 2 on, index + size overflows a long.
      drain(d, k, () -> Long.MAX_VALUE).forEach(r -> forEachId(r, ids::add));
    }

    assertThat(ids).hasSize(21).allSatisfy(id -> assertThat(id).isBetween(start, Long.MAX_VALUE));
  }

  @Test
  public void should_not_overflow_when_the_sequence_spans_every_non_negative_long() {
    long floor = Long.MAX_VALUE - 3;
    SequenceDefinition d = created(prefix + "all-longs", 0, Long.MAX_VALUE, 1);
    assertThat(store.reserve(d, 0, 5)).isEqualTo(new IdRange(0, 5, 1));

    store.advance(d, floor);

    List<IdRange> rest = drain(d, 0, () -> Long.MAX_VALUE);
    assertThat(rest).isNotEmpty()
        .allSatisfy(r -> assertThat(r.first()).isGreaterThan(floor))
        .allSatisfy(r -> assertThat(r.last()).isGreaterThan(floor)); // a wrapped range would go negative
  }

  // ---- advance

  @Test
  public void should_never_reserve_an_id_at_or_below_the_floor_after_advance() {
    SequenceDefinition d = created(prefix + "advanced", 1, Long.MAX_VALUE, 3);
    store.reserve(d, 0, 2); // 1, 4

    store.advance(d, 100);

    // Stripe 0 holds 1, 4, …, 100, 103; stripe 1: …, 98, 101; stripe 2: …, 99, 102.
    assertThat(store.reserve(d, 0, 5).first()).isGreaterThan(100);
    assertThat(store.reserve(d, 1, 5)).isEqualTo(new IdRange(101, 5, 3));
    assertThat(store.reserve(d, 2, 5)).isEqualTo(new IdRange(102, 5, 3));
  }

  @Test
  public void should_not_move_a_sequence_back_when_advanced_to_a_floor_it_passed() {
    SequenceDefinition d = created(prefix + "passed", 1, Long.MAX_VALUE, 1);
    store.reserve(d, 0, 50);
    SequenceState before = store.state(d);

    store.advance(d, 10);
    store.advance(d, 0); // below start

    assertThat(store.state(d)).isEqualTo(before);
    assertThat(store.reserve(d, 0, 5)).isEqualTo(new IdRange(51, 5, 1));
  }

  @Test
  public void should_exhaust_a_sequence_advanced_to_or_beyond_its_max() {
    SequenceDefinition toMax = created(prefix + "to-max", 1, 100, 2);
    SequenceDefinition beyond = created(prefix + "beyond-max", 1, 100, 2);

    store.advance(toMax, 100);
    store.advance(beyond, Long.MAX_VALUE);

    for (SequenceDefinition d : List.of(toMax, beyond)) {
      for (int k = 0; k < 2; k++) {
        int stripe = k;
        assertThatThrownBy(() -> store.reserve(d, stripe, 1)).isInstanceOf(SequenceExhaustedException.class);
      }
      assertThat(store.state(d).remaining()).isZero();
    }
  }

  // ---- state

  @Test
  public void should_report_how_far_each_stripe_is_reserved() {
    SequenceDefinition d = created(prefix + "state", 1, 100, 2); // stripe 0: 1, 3, …, 99; stripe 1: 2, …, 100

    SequenceState fresh = store.state(d);
    assertThat(fresh.stripes()).containsExactly(
        new SequenceState.Stripe(0, 0, 50), new SequenceState.Stripe(1, 0, 50));
    assertThat(fresh.remaining()).isEqualTo(100);

    // A store with a middle tier may count more as reserved than this process took, never less.
    store.reserve(d, 0, 10); // indexes 0 to 9
    List<SequenceState.Stripe> reserved = byStripe(store.state(d));
    assertThat(reserved.get(0).reserved()).isBetween(10L, 50L);
    assertThat(reserved.get(1).reserved()).isZero();

    store.advance(d, 60); // ID 61 is index 30 of stripe 0, ID 62 index 30 of stripe 1
    SequenceState advanced = store.state(d);
    assertThat(advanced.stripes()).extracting(SequenceState.Stripe::stripe).containsExactly(0, 1);
    assertThat(advanced.stripes()).allSatisfy(s -> {
      assertThat(s.size()).isEqualTo(50);
      assertThat(s.reserved()).isBetween(30L, 50L);
    });
    assertThat(advanced.remaining()).isLessThanOrEqualTo(40);
  }

  // ---- concurrency

  @Test
  public void should_never_hand_out_an_id_twice_to_concurrent_threads() throws Exception {
    SequenceDefinition dense = created(prefix + "busy-dense", 1, Long.MAX_VALUE, 1);
    SequenceDefinition striped = created(prefix + "busy-striped", 1, Long.MAX_VALUE, 3);
    int threads = 8;
    int reservesPerThread = concurrentReservesPerThread();
    ConcurrentLinkedQueue<IdRange> denseRanges = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<IdRange> stripedRanges = new ConcurrentLinkedQueue<>();

    runConcurrently(threads, t -> {
      Random random = new Random(t);
      for (int i = 0; i < reservesPerThread; i++) {
        long size = 1 + random.nextInt(20);
        if (random.nextBoolean()) {
          denseRanges.add(store.reserve(dense, 0, size));
        } else {
          stripedRanges.add(store.reserve(striped, random.nextInt(3), size));
        }
      }
      return null;
    });

    assertThat(denseRanges.size() + stripedRanges.size()).isEqualTo(threads * reservesPerThread);
    assertThat(duplicateIds(denseRanges)).isEmpty();
    assertThat(duplicateIds(stripedRanges)).isEmpty();
  }

  @Test
  public void should_let_exactly_one_of_concurrent_creates_of_a_name_win() throws Exception {
    String name = prefix + "raced";
    int threads = 8;

    List<Object> outcomes = runConcurrently(threads, t -> {
      SequenceDefinition mine = new SequenceDefinition(name, 1 + t, 1_000_000, 1 + t, 10, 100);
      try {
        store.create(mine);
        return mine;
      } catch (SequenceAlreadyExistsException e) {
        return e;
      }
    });

    List<SequenceDefinition> winners = outcomes.stream()
        .filter(SequenceDefinition.class::isInstance).map(SequenceDefinition.class::cast).toList();
    assertThat(winners).hasSize(1);
    assertThat(outcomes).filteredOn(SequenceAlreadyExistsException.class::isInstance).hasSize(threads - 1);
    SequenceDefinition winner = winners.get(0);
    assertThat(store.find(name)).contains(winner);
    assertThat(store.state(winner).stripes()).hasSize(winner.stripes());
  }

  // ---- lifecycle

  @Test
  public void should_never_reserve_more_than_a_small_fraction_of_what_is_left_of_a_bounded_sequence() {
    SequenceDefinition int32 = created(prefix + "int32", 1, Integer.MAX_VALUE, 1);
    IdRange big = store.reserve(int32, 0, SequenceDefinition.MAX_BLOCK_SIZE);
    assertThat(big.count()).as("1 percent of a fresh 32-bit sequence").isBetween(1L, (long) Integer.MAX_VALUE / 100);

    SequenceDefinition small = created(prefix + "small", 1, 50_000, 1);
    long left = 50_000;
    for (int i = 0; i < 5; i++) {
      IdRange r = store.reserve(small, 0, 40_000);
      assertThat(r.count()).as("at most max(1,000, 1 percent of %s left)", left)
          .isBetween(1L, Math.max(RunwayPolicy.MIN_BOUNDED_RESERVATION, left / 100));
      left -= r.count();
    }
    // And every ID of the sequence can still be reserved: the bound shrinks blocks, it loses nothing.
    long total = 50_000 - left;
    for (IdRange r : drain(small, 0, () -> 40_000)) {
      total += r.count();
    }
    assertThat(total).isEqualTo(50_000);
  }

  // ---- a sequence's life: definitions changed by compare-and-set on their version, logged for every server

  @Test
  public void should_raise_max_by_compare_and_set_on_the_version_and_log_the_change() {
    SequenceDefinition d = created(prefix + "raise", 1, 3_000, 1);
    List<IdRange> before = drain(d, 0, () -> 700);
    StoredSequence v1 = store.findCurrent(d.name()).orElseThrow();
    assertThat(v1.version()).isEqualTo(1);
    long logVersion = store.floorLog(0).version();

    SequenceDefinition raised = new SequenceDefinition(d.name(), 1, 10_000, 1, 5_000, 50_000);
    AdvanceReceipt receipt = store.redefine(v1, v1.redefined(raised));

    StoredSequence v2 = store.findCurrent(d.name()).orElseThrow();
    assertThat(v2.definition()).isEqualTo(raised);
    assertThat(v2.version()).isEqualTo(2);
    assertThat(v2.createTime()).isEqualTo(v1.createTime());
    assertThat(store.findStored(d.name()).orElseThrow().definition()).isEqualTo(raised);
    assertThat(store.listStored(prefix, 10)).filteredOn(s -> s.definition().name().equals(d.name()))
        .singleElement().satisfies(s -> assertThat(s.version()).isEqualTo(2));
    assertThat(receipt.versions()).isNotEmpty();
    // Every server reads the change in its datacenter's log, after the version it had applied.
    assertThat(store.floorLog(logVersion).changes()).anySatisfy(c -> {
      assertThat(c.sequence()).isEqualTo(d.name());
      assertThat(c.definitionChanged()).isTrue();
    });
    assertThat(store.floor(raised)).as("a definition change is no floor").isEqualTo(Long.MIN_VALUE);
    // The space above the old max, and nothing of before.
    List<IdRange> after = drain(raised, 0, () -> 700);
    assertThat(after).allSatisfy(r -> assertThat(r.first()).isGreaterThan(3_000));
    List<IdRange> all = new ArrayList<>(before);
    all.addAll(after);
    assertThat(duplicateIds(all)).isEmpty();
    assertThat(all.stream().mapToLong(IdRange::count).sum()).isEqualTo(10_000);

    // A stale version changes nothing.
    assertThatThrownBy(() -> store.redefine(v1, v1.redefined(new SequenceDefinition(d.name(), 1, 20_000, 1, 5_000,
        50_000)))).isInstanceOfSatisfying(SequenceChangedException.class,
            e -> assertThat(e.currentEtag()).isEqualTo("2"));
    assertThat(store.findCurrent(d.name()).orElseThrow().definition().max()).isEqualTo(10_000);
  }

  @Test
  public void should_stop_a_server_that_has_not_applied_a_raise_at_its_own_max() {
    SequenceDefinition old = created(prefix + "stale", 1, 2_000, 1);
    drain(old, 0, () -> 500);
    StoredSequence v1 = store.findCurrent(old.name()).orElseThrow();
    SequenceDefinition raised = new SequenceDefinition(old.name(), 1, 1_000_000, 1, old.nodeBlockSize(),
        old.dcBlockSize());
    store.redefine(v1, v1.redefined(raised));
    store.reserve(raised, 0, 100); // some of the new space reserved (on Cassandra: the pool refilled above 2000)

    assertThatThrownBy(() -> store.reserve(old, 0, 100)).isInstanceOf(SequenceExhaustedException.class);
  }

  @Test
  public void should_keep_a_deleted_sequence_with_its_times_until_it_is_restored() {
    SequenceDefinition d = created(prefix + "deleted", 1, Long.MAX_VALUE, 1);
    IdRange first = store.reserve(d, 0, 100);
    StoredSequence live = store.findCurrent(d.name()).orElseThrow();
    java.time.Instant at = java.time.Instant.ofEpochMilli(1_700_000_000_000L);
    java.time.Instant expire = at.plus(java.time.Duration.ofDays(30));

    store.redefine(live, live.deletedAt(at, expire));

    StoredSequence deleted = store.findCurrent(d.name()).orElseThrow();
    assertThat(deleted.deleted()).isTrue();
    assertThat(deleted.deleteTime()).contains(at);
    assertThat(deleted.expireTime()).contains(expire);
    assertThat(deleted.purged()).isFalse();
    assertThatThrownBy(() -> store.create(d)).isInstanceOf(SequenceAlreadyExistsException.class);

    store.redefine(deleted, deleted.undeleted());
    StoredSequence back = store.findCurrent(d.name()).orElseThrow();
    assertThat(back.deleted()).isFalse();
    assertThat(back.version()).isEqualTo(3);
    assertThat(store.reserve(d, 0, 100).first()).isGreaterThan(first.last());

    store.redefine(back, back.deletedAt(at, at));
    StoredSequence again = store.findCurrent(d.name()).orElseThrow();
    store.redefine(again, again.purgedNow());
    assertThat(store.findCurrent(d.name()).orElseThrow().purged()).isTrue();
    // Logging again without a change (a retry's completion) keeps the version.
    StoredSequence purged = store.findCurrent(d.name()).orElseThrow();
    store.redefine(purged, purged);
    assertThat(store.findCurrent(d.name()).orElseThrow().version()).isEqualTo(purged.version());
  }

  @Test
  public void should_allow_closing_twice() {
    store.close();
    store.close(); // and once more after the test
  }

  // ---- helpers

  /** Creates a sequence with default block sizes. */
  /** Reservations each of the 8 threads makes in {@link #should_never_hand_out_an_id_twice_to_concurrent_threads}. */
  protected int concurrentReservesPerThread() {
    return 500;
  }

  protected SequenceDefinition created(String name, long start, long max, int stripes) {
    SequenceDefinition d = new SequenceDefinition(name, start, max, stripes,
        SequenceDefinition.DEFAULT_NODE_BLOCK_SIZE, SequenceDefinition.DEFAULT_DC_BLOCK_SIZE);
    store.create(d);
    return d;
  }

  /** Reserves from a stripe until it is exhausted; every range must lie in the stripe's bounds. */
  protected List<IdRange> drain(SequenceDefinition d, int stripe, LongSupplier size) {
    List<IdRange> ranges = new ArrayList<>();
    while (true) {
      long n = size.getAsLong();
      IdRange r;
      try {
        r = store.reserve(d, stripe, n);
      } catch (SequenceExhaustedException e) {
        return ranges;
      }
      assertThat(r.count()).isBetween(1L, n);
      assertThat(r.stride()).isEqualTo(d.stripes());
      assertThat(r.first()).isGreaterThanOrEqualTo(d.start());
      assertThat(r.last()).isLessThanOrEqualTo(d.max());
      ranges.add(r);
      assertThat(ranges.size()).as("ranges from a stripe that never runs out").isLessThan(100_000);
    }
  }

  /** Every ID that appears in more than one of the ranges (or twice in one, which a valid range cannot). */
  protected static List<Long> duplicateIds(Iterable<IdRange> ranges) {
    Set<Long> seen = new HashSet<>();
    List<Long> duplicates = new ArrayList<>();
    for (IdRange r : ranges) {
      forEachId(r, id -> {
        if (!seen.add(id)) {
          duplicates.add(id);
        }
      });
    }
    return duplicates;
  }

  /**
   * Runs {@code task(0 … threads-1)} on that many threads released at once, and returns their results
   * in thread order; the first failure fails the test.
   */
  protected static <T> List<T> runConcurrently(int threads, ThrowingFunction<T> task) throws Exception {
    ExecutorService executor = Executors.newFixedThreadPool(threads);
    try {
      CyclicBarrier start = new CyclicBarrier(threads);
      List<Future<T>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int index = t;
        futures.add(executor.submit(() -> {
          start.await();
          return task.apply(index);
        }));
      }
      List<T> results = new ArrayList<>();
      for (Future<T> f : futures) {
        results.add(f.get(120, SECONDS));
      }
      return results;
    } finally {
      executor.shutdownNow();
    }
  }

  protected static void forEachId(IdRange range, LongConsumer action) {
    for (long i = 0; i < range.count(); i++) {
      action.accept(range.get(i));
    }
  }

  @FunctionalInterface
  protected interface ThrowingFunction<T> {
    T apply(int index) throws Exception;
  }

  private static List<SequenceState.Stripe> byStripe(SequenceState state) {
    List<SequenceState.Stripe> stripes = new ArrayList<>(state.stripes());
    stripes.sort((a, b) -> Integer.compare(a.stripe(), b.stripe()));
    return Collections.unmodifiableList(stripes);
  }
}
