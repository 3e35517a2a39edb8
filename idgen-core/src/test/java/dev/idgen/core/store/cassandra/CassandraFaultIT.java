package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.LocalCassandra.DC1;
import static dev.idgen.core.store.cassandra.LocalCassandra.DC2;
import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.Allocator;
import dev.idgen.core.IdRange;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.testing.CassandraExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Real faults on the real cluster: dc2's node is frozen with SIGSTOP (and always resumed with SIGCONT
 * in a {@code finally}), which makes SERIAL compare-and-sets time out with unknown outcomes and cuts dc1
 * off from the global cursor, while LOCAL_SERIAL in dc1 keeps working.
 */
@ExtendWith(CassandraExtension.class)
@Isolated // it freezes dc2 for everyone: no other class runs meanwhile
class CassandraFaultIT {
  private String keyspace;
  private final List<CassandraRangeStore> stores = new ArrayList<>();
  private final List<Allocator> allocators = new ArrayList<>();

  @BeforeEach
  void schema() {
    keyspace = LocalCassandra.newKeyspace("fault");
    CassandraRangeStore.connect(LocalCassandra.settings(keyspace, DC1, true)).close();
  }

  @AfterEach
  void close() {
    LocalCassandra.resume(DC2); // whatever happened, never leave a node frozen
    allocators.forEach(Allocator::close);
    stores.forEach(CassandraRangeStore::close);
  }

  private Allocator server(CassandraRangeStore store) {
    Allocator a = Allocator.builder(store).minNodeBlock(10).build();
    allocators.add(a);
    return a;
  }

  private CassandraRangeStore store(String dc) {
    CassandraRangeStore s = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, dc, false));
    stores.add(s);
    return s;
  }

  private CassandraRangeStore store(String dc, Duration casDeadline) {
    CassandraRangeStore s = CassandraRangeStore.connect(LocalCassandra.settings(keyspace, dc, casDeadline));
    stores.add(s);
    return s;
  }

  private static void record(List<IdRange> ranges, Set<Long> seen, AtomicLong duplicates) {
    for (IdRange r : ranges) {
      for (long k = 0; k < r.count(); k++) {
        if (!seen.add(r.get(k))) {
          duplicates.incrementAndGet();
        }
      }
    }
  }

  @Test
  @Tag("full")
  void should_resolve_every_unknown_cas_outcome_and_never_hand_out_an_id_twice() throws Exception {
    CassandraRangeStore s1 = store(DC1);
    CassandraRangeStore s2 = store(DC1);
    List<Allocator> servers = List.of(server(s1), server(s2));
    // Tiny DC blocks: the global cursor (SERIAL, needs dc2) is hit every few node blocks.
    servers.get(0).create(new SequenceDefinition("ambiguous", 1, Long.MAX_VALUE, 1, 10, 40));

    // Freeze dc2 just as a global CAS is about to be sent, three times, each for 3 s: the CAS reaches
    // dc1's replica but never a quorum, so the client cannot know whether it applied.
    ScheduledExecutorService resumer = Executors.newSingleThreadScheduledExecutor();
    AtomicInteger pausesLeft = new AtomicInteger(3);
    AtomicBoolean paused = new AtomicBoolean();
    Runnable freezeOnCas = () -> {
      if (pausesLeft.get() > 0 && paused.compareAndSet(false, true)) {
        pausesLeft.decrementAndGet();
        LocalCassandra.pause(DC2);
        resumer.schedule(() -> {
          LocalCassandra.resume(DC2);
          paused.set(false);
        }, 3, TimeUnit.SECONDS);
      }
    };

    Set<Long> seen = ConcurrentHashMap.newKeySet();
    AtomicLong duplicates = new AtomicLong();
    AtomicLong failures = new AtomicLong();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService threads = Executors.newFixedThreadPool(4);
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      Allocator server = servers.get(t % 2);
      futures.add(threads.submit(() -> {
        while (!stop.get()) {
          try {
            record(server.allocate("ambiguous", 3, Duration.ofSeconds(5)), seen, duplicates);
          } catch (StoreUnavailableException e) {
            failures.incrementAndGet(); // expected while dc2 is frozen
          }
        }
        return null;
      }));
    }
    try {
      awaitIds(seen, 300);
      s1.beforeGlobalCas = freezeOnCas;
      s2.beforeGlobalCas = freezeOnCas;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (pausesLeft.get() > 0 || paused.get()) {
        assertThat(System.nanoTime()).as("three freezes during CAS traffic").isLessThan(deadline);
        TimeUnit.MILLISECONDS.sleep(50);
      }
      long before = seen.size();
      awaitIds(seen, before + 300); // and it recovers without a restart
    } finally {
      stop.set(true);
      resumer.shutdown();
      resumer.awaitTermination(10, TimeUnit.SECONDS);
      LocalCassandra.resume(DC2);
      for (Future<?> f : futures) {
        f.get(2, TimeUnit.MINUTES);
      }
      threads.shutdown();
    }

    CasStats global = sum(s1.globalStats(), s2.globalStats());
    System.out.printf("unknown-outcome run: ids=%d failedCalls=%d global=%s pool=%s%n", seen.size(),
        failures.get(), global, sum(s1.poolStats(), s2.poolStats()));
    assertThat(duplicates.get()).isZero();
    assertThat(global.unknown()).as("CAS sent into a frozen quorum have unknown outcomes").isGreaterThanOrEqualTo(3);
    assertThat(global.unresolved()).as("every unknown outcome was read back").isZero();
    assertThat(global.resolvedApplied() + global.resolvedNotApplied() + global.resolvedAmbiguous()
        + global.unresolved()).isEqualTo(global.unknown());
  }

  @Test
  void should_keep_allocating_from_the_dc_pool_while_cut_off_then_fail_unavailable_then_recover() throws Exception {
    // A CAS deadline shorter than the callers' wait: the store's own failure, naming what is
    // unreachable, reaches the caller.
    CassandraRangeStore s1 = store(DC1, Duration.ofSeconds(4));
    // Node reservations of 200 (min-node-block 100 plus a step of 100, within node_block_size 200): before
    // any rate is measured, the pool is kept at ten of them, i.e. at its cap of 2,000 (at least 1,600).
    Allocator a = Allocator.builder(s1).minNodeBlock(100).build();
    Allocator b = Allocator.builder(store(DC1, Duration.ofSeconds(4))).minNodeBlock(100).build();
    allocators.add(a);
    allocators.add(b);
    a.create(new SequenceDefinition("cutoff", 1, Long.MAX_VALUE, 1, 200, 2_000));
    Set<Long> seen = ConcurrentHashMap.newKeySet();
    AtomicLong duplicates = new AtomicLong();
    record(a.allocate("cutoff", 10, Duration.ofSeconds(10)), seen, duplicates);
    record(b.allocate("cutoff", 10, Duration.ofSeconds(10)), seen, duplicates);
    awaitPoolAtLeast(s1, "cutoff", 1_000);

    long servedWhileCutOff = 0;
    StoreUnavailableException unavailable = null;
    LocalCassandra.pause(DC2);
    try {
      for (int i = 0; i < 10_000 && unavailable == null; i++) {
        Allocator server = i % 2 == 0 ? a : b;
        try {
          List<IdRange> got = server.allocate("cutoff", 10, Duration.ofSeconds(10));
          record(got, seen, duplicates);
          servedWhileCutOff += 10;
        } catch (StoreUnavailableException e) {
          unavailable = e;
        }
      }
    } finally {
      LocalCassandra.resume(DC2);
    }

    assertThat(servedWhileCutOff).as("dc1 kept allocating from its own pool").isGreaterThanOrEqualTo(1_000);
    assertThat(unavailable).as("and failed once the pool was used up").isNotNull();
    assertThat(unavailable.getMessage()).contains("cutoff").contains("global cursor");

    // After SIGCONT: back without a restart (bounded wait for the cluster to answer again).
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    List<IdRange> after = null;
    while (after == null && System.nanoTime() < deadline) {
      try {
        after = a.allocate("cutoff", 10, Duration.ofSeconds(10));
      } catch (StoreUnavailableException e) {
        TimeUnit.MILLISECONDS.sleep(500);
      }
    }
    assertThat(after).as("allocation resumed after dc2 came back").isNotNull();
    record(after, seen, duplicates);
    assertThat(duplicates.get()).isZero();
  }

  private static void awaitIds(Set<Long> seen, long atLeast) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (seen.size() < atLeast) {
      assertThat(System.nanoTime()).as("waiting for %d IDs", atLeast).isLessThan(deadline);
      TimeUnit.MILLISECONDS.sleep(50);
    }
  }

  private static void awaitPoolAtLeast(CassandraRangeStore store, String sequence, long ids)
      throws InterruptedException {
    SequenceDefinition d = store.find(sequence).orElseThrow();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      long pooled = store.state(d).datacenterReserves().stream()
          .filter(r -> r.datacenter().equals(DC1)).mapToLong(r -> r.ids()).sum();
      if (pooled >= ids) {
        return;
      }
      assertThat(System.nanoTime()).as("dc1's pool never reached %d IDs", ids).isLessThan(deadline);
      TimeUnit.MILLISECONDS.sleep(100);
    }
  }

  private static CasStats sum(CasStats a, CasStats b) {
    return a.plus(b);
  }
}
