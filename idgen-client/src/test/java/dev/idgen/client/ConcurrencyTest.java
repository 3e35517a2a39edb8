package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.api.v1.Ordering;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many threads over several sources of two clients, each client balancing over two in-process
 * servers of one cluster, with the clients' real background executors. Tiny leases force thousands
 * of lease changes while threads race on them; in the second test the servers also make every range
 * expire a few milliseconds after it was requested, on the real clock, so that expiry tasks race
 * with the threads too. The third test is a strict sequence: every caller's request is a call of its
 * own, and the IDs of a request are above those of every request that returned before it began.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConcurrencyTest {
  private static final String[] SEQUENCES = {"alpha", "beta", "striped"};
  private static final int THREADS = 6;
  private static final int ROUNDS = 15_000;

  @Test
  void should_never_hand_out_an_id_twice_across_threads_sources_and_clients() throws Exception {
    run(null);
  }

  @Test
  void should_never_hand_out_an_id_twice_while_leases_expire() throws Exception {
    run(Duration.ofMillis(3));
  }

  private static void run(Duration validFor) throws Exception {
    try (FakeCluster cluster = new FakeCluster()) {
      cluster.backend.create("alpha").create("beta").create("striped", 1_000, 3, Long.MAX_VALUE);
      FakeCluster.FakeServer one = cluster.server();
      FakeCluster.FakeServer two = cluster.server();
      two.service().splitInto(3);
      one.service().validFor(validFor);
      two.service().validFor(validFor);
      IdGenClient[] clients = {client("one", one, two), client("two", two, one)};
      IdSource[][] sources = new IdSource[2][SEQUENCES.length];
      for (int c = 0; c < 2; c++) {
        for (int s = 0; s < SEQUENCES.length; s++) {
          sources[c][s] = clients[c].sequence(SEQUENCES[s]);
        }
      }

      // ids[thread][sequence] holds what that thread got; counts[thread][sequence] how many.
      long[][][] ids = new long[THREADS][SEQUENCES.length][ROUNDS * 7];
      int[][] counts = new int[THREADS][SEQUENCES.length];
      CyclicBarrier start = new CyclicBarrier(THREADS);
      ExecutorService threads = Executors.newFixedThreadPool(THREADS);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        int thread = t;
        done.add(threads.submit(() -> {
          IdSource[] mine = sources[thread % 2];
          long[] bulk = new long[7];
          start.await();
          for (int k = 0; k < ROUNDS; k++) {
            int s = (thread + k) % SEQUENCES.length;
            long[] out = ids[thread][s];
            if (k % 10 == 0) {
              mine[s].fill(bulk, 0, 7);
              System.arraycopy(bulk, 0, out, counts[thread][s], 7);
              counts[thread][s] += 7;
            } else {
              out[counts[thread][s]++] = mine[s].next();
            }
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(100, TimeUnit.SECONDS);
      }
      threads.shutdown();

      long[] servedPerClient = new long[2];
      for (int c = 0; c < 2; c++) {
        for (IdSource source : sources[c]) {
          servedPerClient[c] += source.stats().idsServed();
        }
      }
      long[] collectedPerClient = new long[2];
      for (int s = 0; s < SEQUENCES.length; s++) {
        int total = 0;
        for (int t = 0; t < THREADS; t++) {
          total += counts[t][s];
          collectedPerClient[t % 2] += counts[t][s];
        }
        long[] all = new long[total];
        int pos = 0;
        for (int t = 0; t < THREADS; t++) {
          System.arraycopy(ids[t][s], 0, all, pos, counts[t][s]);
          pos += counts[t][s];
        }
        Arrays.sort(all);
        List<FakeBackend.Leased> leased = cluster.backend.leased(SEQUENCES[s]);
        for (int i = 0; i < all.length; i++) {
          if (i > 0 && all[i] == all[i - 1]) {
            throw new AssertionError(SEQUENCES[s] + ": ID " + all[i] + " handed out twice");
          }
          if (!FakeBackend.contains(leased, all[i])) {
            throw new AssertionError(SEQUENCES[s] + ": ID " + all[i] + " was never leased by a server");
          }
        }
        assertThat(all.length).isGreaterThan(THREADS * ROUNDS / SEQUENCES.length);
        assertThat(cluster.backend.leasedIds(SEQUENCES[s])).isGreaterThanOrEqualTo(all.length);
      }
      assertThat(servedPerClient).containsExactly(collectedPerClient);
      assertThat(one.service().calls.get() + two.service().calls.get()).as("leases").isGreaterThan(1_000);
      if (validFor != null) {
        // Idle now, each source lets what it holds expire (and renews it): the drops are counted.
        Await.until("IDs dropped by expiry are counted", () -> {
          long expired = 0;
          for (IdSource[] mine : sources) {
            for (IdSource source : mine) {
              expired += source.stats().idsExpired();
            }
          }
          return expired > 0;
        });
      }
      for (IdGenClient client : clients) {
        client.close();
      }
    }
  }

  /** What one caller's request got, and when (System.nanoTime()) it began and returned. */
  private record Request(long began, long returned, long min, long max) {}

  @Test
  void should_order_the_ids_of_a_strict_sequence_after_every_request_that_returned_before() throws Exception {
    int rounds = 1_500;
    try (FakeCluster cluster = new FakeCluster()) {
      cluster.backend.create("strict");
      FakeCluster.FakeServer one = cluster.server();
      FakeCluster.FakeServer two = cluster.server();
      for (FakeCluster.FakeServer server : List.of(one, two)) {
        // Held: the threads start before the sources know the ordering, and wait for the first answers.
        server.service().ordering(Ordering.ORDERING_STRICT).splitInto(2).hold();
      }
      IdGenClient[] clients = {client("one", one, two), client("two", two, one)};
      IdSource[] sources = {clients[0].sequence("strict"), clients[1].sequence("strict")};
      Request[][] requests = new Request[THREADS][rounds];
      CyclicBarrier start = new CyclicBarrier(THREADS + 1);
      ExecutorService threads = Executors.newFixedThreadPool(THREADS);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        int thread = t;
        done.add(threads.submit(() -> {
          IdSource mine = sources[thread % 2];
          long[] bulk = new long[5];
          start.await();
          for (int k = 0; k < rounds; k++) {
            long began = System.nanoTime();
            long min;
            long max;
            switch ((thread + k) % 3) {
              case 0 -> {
                mine.fill(bulk, 0, 5);
                min = Arrays.stream(bulk).min().getAsLong();
                max = Arrays.stream(bulk).max().getAsLong();
              }
              case 1 -> min = max = mine.nextAsync().get(30, TimeUnit.SECONDS);
              default -> min = max = mine.next();
            }
            requests[thread][k] = new Request(began, System.nanoTime(), min, max);
          }
          return null;
        }));
      }
      start.await();
      Thread.sleep(20);
      one.service().release();
      two.service().release();
      for (Future<?> f : done) {
        f.get(100, TimeUnit.SECONDS);
      }
      threads.shutdown();

      List<Request> all = new ArrayList<>();
      for (Request[] mine : requests) {
        all.addAll(Arrays.asList(mine));
      }
      all.sort(Comparator.comparingLong(Request::returned));
      long[] maxReturnedBy = new long[all.size()]; // the largest ID of the requests returned up to i
      for (int i = 0; i < all.size(); i++) {
        maxReturnedBy[i] = Math.max(i == 0 ? Long.MIN_VALUE : maxReturnedBy[i - 1], all.get(i).max());
      }
      long[] returned = all.stream().mapToLong(Request::returned).toArray();
      for (Request r : all) {
        int before = Arrays.binarySearch(returned, r.began());
        int last = (before >= 0 ? before : -before - 1) - 1; // the last request that returned before r began
        if (last >= 0 && maxReturnedBy[last] >= r.min()) {
          throw new AssertionError("a request that began after one returned " + maxReturnedBy[last]
              + " got " + r.min());
        }
      }
      long calls = (long) one.service().calls.get() + two.service().calls.get();
      assertThat(calls).as("one call per request, plus each source's first").isEqualTo(2 + THREADS * rounds);
      for (IdSource source : sources) {
        assertThat(source.stats().strictOrdering()).isTrue();
        assertThat(source.stats().idsHeld()).isZero();
      }
      long ids = 0;
      for (Request r : all) {
        ids += r.max() - r.min() + 1; // dense IDs: each request's are consecutive
      }
      // A nextAsync()'s ID counts as served once its future took it: just after complete() returned, on
      // the client's thread, which may be a moment after the caller saw the future complete.
      long expected = ids;
      Await.until("every ID handed out is counted", () -> served(sources) >= expected);
      assertThat(served(sources)).isEqualTo(ids);
      for (IdGenClient client : clients) {
        client.close();
      }
    }
  }

  private static long served(IdSource[] sources) {
    long served = 0;
    for (IdSource source : sources) {
      served += source.stats().idsServed();
    }
    return served;
  }

  private static IdGenClient client(String name, FakeCluster.FakeServer first, FakeCluster.FakeServer second) {
    return IdGenClient.builder()
        .name(name)
        .channel(first.channel())
        .channel(second.channel())
        .minLeaseSize(1)
        .maxLeaseSize(64)
        .leaseLifetime(Duration.ofMillis(1))
        .waitDeadline(Duration.ofSeconds(30))
        .build();
  }
}
