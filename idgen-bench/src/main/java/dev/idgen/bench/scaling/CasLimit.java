package dev.idgen.bench.scaling;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code cas-limit}: how many compare-and-sets per second Cassandra completes on a few rows, the limit behind
 * SCALING.md's capacity: T threads, each looping on its row {@code i mod P} (P partitions) with {@code UPDATE … SET
 * v = v + 1, op = new IF op = last} at LOCAL_SERIAL, committed at LOCAL_QUORUM, as idgen's pools are written. A
 * thread that loses takes the row's current {@code op} from the answer and tries again at once (no back-off: the
 * raw limit of the partition). Each measurement follows {@code --warmup} seconds of the same load. Prints one CSV line per (T, P): successful and attempted CAS/s, the share of
 * attempts lost, and the p50 and p99 of the time to win (from the first attempt to the successful one).
 */
@Command(name = "cas-limit", mixinStandardHelpOptions = true,
    description = "Measure compare-and-sets/s on P partitions from T threads (a keyspace idgen_caslimit is created).")
final class CasLimit implements Callable<Integer> {

  @Option(names = "--contact", defaultValue = "127.0.0.1:9042") String contact;
  @Option(names = "--datacenter", defaultValue = "dc1") String datacenter;
  @Option(names = "--threads", split = ",", defaultValue = "1,10") int[] threads;
  @Option(names = "--partitions", split = ",", defaultValue = "1,5") int[] partitions;
  @Option(names = "--seconds", defaultValue = "15") int seconds;
  @Option(names = "--warmup", defaultValue = "5", description = "Seconds of the same load before each measurement.")
  int warmup;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    String[] hostPort = contact.split(":");
    DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
        .withString(DefaultDriverOption.PROTOCOL_VERSION, "V4")
        .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(5))
        .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(30))
        .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(10))
        .build();
    try (CqlSession session = CqlSession.builder()
        .addContactPoint(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])))
        .withLocalDatacenter(datacenter).withConfigLoader(config).build()) {
      session.execute("CREATE KEYSPACE IF NOT EXISTS idgen_caslimit WITH replication = "
          + "{'class': 'NetworkTopologyStrategy', '" + datacenter + "': 1}");
      session.execute("CREATE TABLE IF NOT EXISTS idgen_caslimit.rows (k int PRIMARY KEY, v bigint, op uuid)");
      PreparedStatement insert = session.prepare(
          "INSERT INTO idgen_caslimit.rows (k, v, op) VALUES (?, 0, ?) IF NOT EXISTS");
      PreparedStatement read = session.prepare("SELECT op FROM idgen_caslimit.rows WHERE k = ?");
      PreparedStatement update = session.prepare(
          "UPDATE idgen_caslimit.rows SET v = v + 1, op = ? WHERE k = ? IF op = ?");
      out.println("threads,partitions,seconds,successful_per_s,attempts_per_s,lost_share,win_p50_ms,win_p99_ms,errors");
      for (int t : threads) {
        for (int p : partitions) {
          out.println(run(session, insert, read, update, t, p));
          out.flush();
        }
      }
    }
    return 0;
  }

  private String run(CqlSession session, PreparedStatement insert, PreparedStatement read, PreparedStatement update,
      int threadCount, int partitionCount) throws InterruptedException {
    int base = (int) (System.nanoTime() & 0xffffff) * 100; // fresh rows for each run
    for (int k = 0; k < partitionCount; k++) {
      session.execute(insert.bind(base + k, UUID.randomUUID())
          .setSerialConsistencyLevel(ConsistencyLevel.LOCAL_SERIAL)
          .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM));
    }
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicBoolean measuring = new AtomicBoolean(false);
    long[] wins = new long[threadCount];
    long[] attempts = new long[threadCount];
    long[] errors = new long[threadCount];
    Histogram[] win = new Histogram[threadCount];
    List<Thread> workers = new ArrayList<>();
    for (int i = 0; i < threadCount; i++) {
      int me = i;
      int k = base + i % partitionCount;
      win[i] = new Histogram(TimeUnit.MINUTES.toNanos(1), 3);
      Thread w = new Thread(() -> {
        Row row = session.execute(read.bind(k).setConsistencyLevel(ConsistencyLevel.LOCAL_SERIAL)).one();
        UUID last = row.getUuid("op");
        long started = System.nanoTime();
        while (running.get()) {
          boolean counted = measuring.get();
          try {
            if (counted) {
              attempts[me]++;
            }
            UUID next = UUID.randomUUID();
            ResultSet rs = session.execute(update.bind(next, k, last)
                .setSerialConsistencyLevel(ConsistencyLevel.LOCAL_SERIAL)
                .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM).setIdempotent(false));
            boolean applied = rs.wasApplied(); // before one(): the driver reads it from the first row
            Row answer = rs.one();
            if (applied) {
              long now = System.nanoTime();
              if (counted) {
                wins[me]++;
                win[me].recordValue(Math.min(now - started, win[me].getHighestTrackableValue()));
              }
              started = now;
              last = next;
            } else {
              last = answer.getUuid("op");
            }
          } catch (DriverException e) {
            if (counted) {
              errors[me]++;
            }
            last = session.execute(read.bind(k).setConsistencyLevel(ConsistencyLevel.LOCAL_SERIAL)).one()
                .getUuid("op");
          }
        }
      }, "cas-" + i);
      workers.add(w);
    }
    workers.forEach(Thread::start);
    Thread.sleep(warmup * 1000L); // the driver's and the node's JIT, connections
    long t0 = System.nanoTime();
    measuring.set(true);
    Thread.sleep(seconds * 1000L);
    running.set(false);
    for (Thread w : workers) {
      w.join(30_000);
    }
    double s = (System.nanoTime() - t0) / 1e9;
    long w = 0;
    long a = 0;
    long e = 0;
    Histogram all = new Histogram(TimeUnit.MINUTES.toNanos(1), 3);
    for (int i = 0; i < threadCount; i++) {
      w += wins[i];
      a += attempts[i];
      e += errors[i];
      all.add(win[i]);
    }
    return String.format(Locale.ROOT, "%d,%d,%.1f,%.0f,%.0f,%.2f,%.2f,%.2f,%d", threadCount, partitionCount, s, w / s,
        a / s, a == 0 ? 0 : 1 - (double) w / a, all.getValueAtPercentile(50) / 1e6,
        all.getValueAtPercentile(99) / 1e6, e);
  }
}
