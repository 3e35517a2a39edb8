package dev.idgen.core.store.cassandra;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.IdRange;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceAlreadyExistsException;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.SequenceState;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.Ticker;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.security.KeyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link RangeStore} on Apache Cassandra lightweight transactions, in two tiers.
 *
 * <pre>
 * global_cursors (sequence, stripe)             SERIAL + QUORUM commit: the whole cluster
 *    │ DC blocks (dc_block_size IDs)            two CAS steps: take from global, then append to the pool
 *    ▼
 * dc_pools (sequence, stripe, datacenter)       LOCAL_SERIAL + LOCAL_QUORUM: that datacenter only
 *    │ node blocks ({@link #reserve})
 *    ▼
 * the allocator of one server process
 * </pre>
 *
 * <p>Rules it follows (each is why the code looks the way it does):
 * <ul>
 *   <li>One serial scope per partition: global cursors and definitions only at SERIAL, pools only at
 *       LOCAL_SERIAL and only through coordinators of their own datacenter (an advance made from another
 *       datacenter pins its statements to a node of the pool's datacenter). No plain write ever touches
 *       them. A crash between the two steps of a pool refill loses that DC block: a counted gap.
 *   <li>Every CAS writes a fresh operation id. An unknown outcome (CAS write timeout, CAS write unknown,
 *       client timeout, any failure after sending) is resolved by reading the row back at the same serial
 *       consistency — which also finishes any Paxos round in progress — before anything is handed out;
 *       if it cannot be read back, nothing is handed out and the IDs, if the write applied, stay unused.
 *   <li>Lost races re-read and retry after a random delay that grows with the attempt, up to a deadline.
 *   <li>Protocol V4, because V5 drops the connection after every CAS write timeout (Cassandra 5.0 with
 *       driver 4.19), and {@link AllNodesFailedException} is unwrapped to the real cause in messages.
 * </ul>
 *
 * <p>Threads: thread-safe; all coordination between processes happens in Cassandra. Within a process,
 * at most one refill per pool is in flight ({@link #refills}); it runs on the store's own daemon thread
 * pool, and callers that find the pool empty wait for it.
 */
@ThreadSafe
public final class CassandraRangeStore implements RangeStore {
  private static final Logger log = LoggerFactory.getLogger(CassandraRangeStore.class);

  private static final long BASE_BACKOFF_MILLIS = 2;
  private static final long MAX_BACKOFF_MILLIS = 250;

  private final CqlSession session;
  private final CassandraSettings settings;
  private final String dc;
  private final Tier globalTier = new Tier();
  private final Tier poolTier = new Tier();
  private final LongAdder idsDropped = new LongAdder();
  private final ConcurrentMap<String, CompletableFuture<Void>> refills = new ConcurrentHashMap<>();
  /** This datacenter's consumption rate per (sequence, stripe), as this process observes its pool. */
  private final ConcurrentMap<String, DcRate> rates = new ConcurrentHashMap<>();
  private final Ticker ticker = Ticker.system();
  private final ExecutorService refillExecutor;
  /** A seam for fault-injection tests: runs just before each global CAS is sent. */
  volatile Runnable beforeGlobalCas = () -> {};

  private final PreparedStatement selectDefinition;
  private final PreparedStatement insertDefinition;
  private final PreparedStatement selectNames;
  private final PreparedStatement selectGlobal;
  private final PreparedStatement insertGlobal;
  private final PreparedStatement updateGlobal;
  private final PreparedStatement selectPool;
  private final PreparedStatement insertPool;
  private final PreparedStatement updatePool;

  private CassandraRangeStore(CqlSession session, CassandraSettings settings) {
    this.session = session;
    this.settings = settings;
    this.dc = settings.localDatacenter();
    String ks = settings.keyspace();
    selectDefinition = session.prepare("SELECT name, start, max, stripes, node_block_size, dc_block_size, op"
        + " FROM " + ks + ".sequences WHERE name = ?");
    insertDefinition = session.prepare("INSERT INTO " + ks + ".sequences (name, start, max, stripes,"
        + " node_block_size, dc_block_size, created_at, op) VALUES (?, ?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS");
    selectNames = session.prepare("SELECT name FROM " + ks + ".sequences");
    selectGlobal = session.prepare("SELECT reserved, op FROM " + ks + ".global_cursors"
        + " WHERE sequence = ? AND stripe = ?");
    insertGlobal = session.prepare("INSERT INTO " + ks + ".global_cursors (sequence, stripe, reserved, op)"
        + " VALUES (?, ?, ?, ?) IF NOT EXISTS");
    updateGlobal = session.prepare("UPDATE " + ks + ".global_cursors SET reserved = ?, op = ?"
        + " WHERE sequence = ? AND stripe = ? IF op = ?");
    selectPool = session.prepare("SELECT blocks, floor, taken, op FROM " + ks + ".dc_pools"
        + " WHERE sequence = ? AND stripe = ? AND datacenter = ?");
    insertPool = session.prepare("INSERT INTO " + ks + ".dc_pools (sequence, stripe, datacenter, blocks,"
        + " floor, taken, op) VALUES (?, ?, ?, ?, ?, 0, ?) IF NOT EXISTS");
    updatePool = session.prepare("UPDATE " + ks + ".dc_pools SET blocks = ?, floor = ?, taken = ?, op = ?"
        + " WHERE sequence = ? AND stripe = ? AND datacenter = ? IF op = ?");
    AtomicInteger n = new AtomicInteger();
    refillExecutor = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "idgen-dc-pool-refill-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Connects to Cassandra, applies the schema if {@code settings.createSchema()}, and prepares the
   * statements. Throws {@link StoreUnavailableException} if Cassandra cannot be reached.
   */
  public static CassandraRangeStore connect(CassandraSettings settings) {
    return connect(settings, null);
  }

  /**
   * {@link #connect(CassandraSettings)}, with the driver reporting its own metrics (requests, errors,
   * connections, per node) into {@code micrometerRegistry}: an {@code io.micrometer.core.instrument.MeterRegistry},
   * typed {@code Object} so that the core does not depend on Micrometer. The driver's
   * {@code java-driver-metrics-micrometer} module must then be on the class path. Metric names start with
   * {@code cassandra.} (tagged with the session and, for per-node metrics, the node). Null: no driver metrics.
   */
  public static CassandraRangeStore connect(CassandraSettings settings, Object micrometerRegistry) {
    CqlSessionBuilder builder = CqlSession.builder()
        .withConfigLoader(driverConfig(settings, micrometerRegistry != null))
        .withLocalDatacenter(settings.localDatacenter());
    if (micrometerRegistry != null) {
      builder.withMetricRegistry(micrometerRegistry);
    }
    for (String cp : settings.contactPoints()) {
      int colon = cp.lastIndexOf(':');
      builder.addContactPoint(InetSocketAddress.createUnresolved(cp.substring(0, colon),
          Integer.parseInt(cp.substring(colon + 1))));
    }
    if (settings.username().isPresent()) {
      builder.withAuthCredentials(settings.username().get(), settings.password().orElseThrow());
    }
    if (settings.tls()) {
      builder.withSslContext(sslContext(settings));
    }
    CqlSession session;
    try {
      session = builder.build();
    } catch (DriverException e) {
      throw new StoreUnavailableException("cannot connect to Cassandra at " + settings.contactPoints()
          + " (local datacenter " + settings.localDatacenter() + "): " + describe(e), e);
    }
    try {
      if (settings.createSchema()) {
        Schema.apply(session, settings);
      }
      return new CassandraRangeStore(session, settings);
    } catch (RuntimeException e) {
      session.close();
      if (e instanceof DriverException de) {
        throw new StoreUnavailableException("cannot prepare idgen's statements in keyspace '"
            + settings.keyspace() + "' (is the schema applied? see idgen.cassandra.create-schema): "
            + describe(de), de);
      }
      throw e;
    }
  }

  /** The driver metrics exported when a registry is given: what an operator alerts on or debugs with. */
  private static final List<String> SESSION_METRICS = List.of("bytes-sent", "bytes-received",
      "connected-nodes", "cql-requests", "cql-client-timeouts", "throttling.delay", "throttling.errors");
  private static final List<String> NODE_METRICS = List.of("pool.open-connections", "pool.in-flight",
      "pool.available-streams", "cql-messages", "errors.request.write-timeouts",
      "errors.request.read-timeouts", "errors.request.unavailables", "errors.request.others",
      "errors.request.aborted", "errors.connection.init", "errors.connection.auth");

  private static DriverConfigLoader driverConfig(CassandraSettings s, boolean metrics) {
    var config = DriverConfigLoader.programmaticBuilder();
    if (metrics) {
      config.withString(DefaultDriverOption.METRICS_FACTORY_CLASS, "MicrometerMetricsFactory")
          .withString(DefaultDriverOption.METRICS_ID_GENERATOR_CLASS, "TaggingMetricIdGenerator")
          .withString(DefaultDriverOption.METRICS_ID_GENERATOR_PREFIX, "cassandra")
          .withStringList(DefaultDriverOption.METRICS_SESSION_ENABLED, SESSION_METRICS)
          .withStringList(DefaultDriverOption.METRICS_NODE_ENABLED, NODE_METRICS);
    }
    return config
        // V5 tears the connection down after every CAS write timeout (CASSANDRA.md, gotcha 1).
        .withString(DefaultDriverOption.PROTOCOL_VERSION, "V4")
        .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, s.requestTimeout())
        .withString(DefaultDriverOption.REQUEST_CONSISTENCY, "LOCAL_QUORUM")
        .withString(DefaultDriverOption.REQUEST_SERIAL_CONSISTENCY, "LOCAL_SERIAL")
        // A CAS is never retried blindly by the driver: we resolve its outcome ourselves.
        .withBoolean(DefaultDriverOption.REQUEST_DEFAULT_IDEMPOTENCE, false)
        // Connections to a few nodes of every other datacenter, so that an advance can trim their pools
        // through their own coordinators; LOCAL_* statements still never leave this datacenter.
        .withInt(DefaultDriverOption.LOAD_BALANCING_DC_FAILOVER_MAX_NODES_PER_REMOTE_DC, 3)
        .withBoolean(DefaultDriverOption.LOAD_BALANCING_DC_FAILOVER_ALLOW_FOR_LOCAL_CONSISTENCY_LEVELS, false)
        .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(5))
        .withDuration(DefaultDriverOption.CONTROL_CONNECTION_TIMEOUT, Duration.ofSeconds(5))
        .withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofMillis(200))
        .withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(5))
        .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(10))
        .withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(20))
        .build();
  }

  private static SSLContext sslContext(CassandraSettings s) {
    try {
      if (s.truststore().isEmpty()) {
        return SSLContext.getDefault();
      }
      KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
      try (InputStream in = java.nio.file.Files.newInputStream(s.truststore().get())) {
        ks.load(in, s.truststorePassword().map(String::toCharArray).orElse(null));
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ks);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    } catch (Exception e) {
      throw new IllegalArgumentException("idgen.cassandra.tls: cannot load truststore "
          + s.truststore().orElse(null) + ": " + e.getMessage(), e);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Definitions

  @Override
  public void create(SequenceDefinition d) {
    long deadline = deadline();
    for (int attempt = 0; ; attempt++) {
      UUID op = UUID.randomUUID();
      BoundStatement insert = global(insertDefinition.bind(d.name(), d.start(), d.max(), d.stripes(),
          d.nodeBlockSize(), d.dcBlockSize(), Instant.now(), op));
      if (cas(globalTier, insert, op, () -> serialRead(selectDefinition.bind(d.name()),
          ConsistencyLevel.SERIAL, null, "definition of '" + d.name() + "'", deadline), deadline)) {
        return;
      }
      Row existing = serialRead(selectDefinition.bind(d.name()), ConsistencyLevel.SERIAL, null,
          "definition of '" + d.name() + "'", deadline);
      if (existing != null) {
        throw new SequenceAlreadyExistsException("sequence '" + d.name() + "' already exists");
      }
      backoff(attempt, deadline, "creating sequence '" + d.name() + "'");
    }
  }

  @Override
  public Optional<SequenceDefinition> find(String name) {
    // Definitions never change once written, so a local read that finds one is authoritative; only
    // "not found" is double-checked at SERIAL, in case the creation is so recent it is still in flight.
    Row row = read(selectDefinition.bind(name), ConsistencyLevel.LOCAL_QUORUM, "definition of '" + name + "'");
    if (row == null) {
      row = serialRead(selectDefinition.bind(name), ConsistencyLevel.SERIAL, null,
          "definition of '" + name + "'", 0);
    }
    return Optional.ofNullable(row).map(CassandraRangeStore::definition);
  }

  private static SequenceDefinition definition(Row r) {
    return new SequenceDefinition(r.getString("name"), r.getLong("start"), r.getLong("max"),
        r.getInt("stripes"), r.getLong("node_block_size"), r.getLong("dc_block_size"));
  }

  @Override
  public List<SequenceDefinition> list(String afterName, int limit) {
    // The table is small (one row per sequence) and partitions are in token order, so names are
    // read whole and sorted here.
    TreeSet<String> names = new TreeSet<>();
    try {
      for (Row r : session.execute(selectNames.bind().setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM))) {
        names.add(r.getString(0));
      }
    } catch (DriverException e) {
      throw unavailable("listing sequences", e);
    }
    List<SequenceDefinition> out = new ArrayList<>();
    for (String name : names.tailSet(afterName, false)) {
      if (out.size() == limit) {
        break;
      }
      find(name).ifPresent(out::add);
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Node blocks from the DC pool

  @Override
  public IdRange reserve(SequenceDefinition d, int stripe, long size) {
    if (size < 1) {
      throw new IllegalArgumentException("size: " + size + " (expected: >= 1)");
    }
    if (stripe < 0 || stripe >= d.stripes()) {
      throw new IllegalArgumentException("stripe: " + stripe + " (expected: 0 to " + (d.stripes() - 1) + ")");
    }
    long deadline = deadline();
    for (int attempt = 0; ; attempt++) {
      PoolRow pool = readPool(d, stripe, dc, null, deadline);
      if (pool == null || pool.blocks.isEmpty()) {
        awaitRefill(d, stripe, deadline);
        continue;
      }
      long from = pool.blocks.get(0);
      long take = Math.min(size, pool.blocks.get(1) - from);
      List<Long> rest = consume(pool.blocks, take);
      UUID op = UUID.randomUUID();
      long taken = pool.taken + take;
      BoundStatement update = local(updatePool.bind(rest, pool.floor, taken, op, d.name(), stripe, dc, pool.op));
      if (cas(poolTier, update, op, () -> readPoolRow(d, stripe, dc, null, deadline), deadline)) {
        DcRate rate = rate(d, stripe);
        rate.observe(ticker.nanos(), taken);
        if (size(rest) < settings.poolRefillThreshold() * rate.blockSize(d)) {
          refillInBackground(d, stripe);
        }
        return d.range(stripe, from, from + take);
      }
      backoff(attempt, deadline, "reserving from " + dc + "'s pool of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  private void awaitRefill(SequenceDefinition d, int stripe, long deadline) {
    CompletableFuture<Void> refill = startRefill(d, stripe);
    try {
      refill.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof SequenceNotFoundException notFound) {
        throw notFound;
      }
      if (cause instanceof SequenceExhaustedException exhausted) {
        // Another server of this DC may have appended a last block meanwhile: look once more.
        PoolRow pool = readPool(d, stripe, dc, null, deadline);
        if (pool == null || pool.blocks.isEmpty()) {
          throw exhausted;
        }
        return;
      }
      if (cause instanceof StoreUnavailableException u) {
        throw new StoreUnavailableException("sequence '" + d.name() + "' stripe " + stripe + ": datacenter "
            + dc + "'s pool is empty and it cannot be refilled: " + u.getMessage(), u);
      }
      throw new StoreUnavailableException("sequence '" + d.name() + "' stripe " + stripe
          + ": refilling " + dc + "'s pool failed: " + cause, cause);
    } catch (TimeoutException e) {
      throw new StoreUnavailableException("sequence '" + d.name() + "' stripe " + stripe + ": datacenter "
          + dc + "'s pool is empty and its refill from the global cursor did not finish in time"
          + " (are the other datacenters reachable?)");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException("interrupted while refilling a pool", e);
    }
  }

  private void refillInBackground(SequenceDefinition d, int stripe) {
    startRefill(d, stripe).whenComplete((v, e) -> {
      if (e != null && !(e instanceof SequenceExhaustedException)) {
        log.warn("background refill of datacenter {}'s pool of sequence '{}' stripe {} failed: {}",
            dc, d.name(), stripe, e.getMessage());
      }
    });
  }

  /** Starts a refill of this DC's pool, or joins the one this process already has in flight. */
  private CompletableFuture<Void> startRefill(SequenceDefinition d, int stripe) {
    String key = d.name() + '\u0000' + stripe;
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> running = refills.putIfAbsent(key, mine);
    if (running != null) {
      return running;
    }
    try {
      refillExecutor.execute(() -> {
        try {
          refillPool(d, stripe);
          mine.complete(null);
        } catch (Throwable t) {
          mine.completeExceptionally(t);
        } finally {
          refills.remove(key, mine);
        }
      });
    } catch (RuntimeException e) {
      refills.remove(key, mine);
      mine.completeExceptionally(new StoreUnavailableException("the store is closed", e));
    }
    return mine;
  }

  /** Moves one DC block from the global cursor to this datacenter's pool: two CAS steps. */
  private void refillPool(SequenceDefinition d, int stripe) {
    long deadline = deadline();
    long[] block = takeFromGlobal(d, stripe, rate(d, stripe).blockSize(d), deadline);
    try {
      appendToPool(d, stripe, block[0], block[1], deadline());
    } catch (RuntimeException e) {
      // Taken from the global cursor but not in the pool: nobody will ever hand it out. A gap.
      globalTier.idsLost.add(block[1] - block[0]);
      log.warn("lost a DC block of sequence '{}' stripe {} ({} IDs) between the global cursor and {}'s pool: {}",
          d.name(), stripe, block[1] - block[0], dc, e.getMessage());
      throw e;
    }
  }

  private long[] takeFromGlobal(SequenceDefinition d, int stripe, long size, long deadline) {
    long total = d.stripeSize(stripe);
    for (int attempt = 0; ; attempt++) {
      Row row = serialRead(selectGlobal.bind(d.name(), stripe), ConsistencyLevel.SERIAL, null,
          "global cursor of sequence '" + d.name() + "' stripe " + stripe, deadline);
      if (row == null) {
        requireDefinition(d); // rows are created lazily: never for a sequence that does not exist
      }
      long reserved = row == null ? 0 : row.getLong("reserved");
      if (reserved >= total) {
        throw new SequenceExhaustedException(d.name(), d.max());
      }
      long to = total - reserved <= size ? total : reserved + size;
      UUID op = UUID.randomUUID();
      BoundStatement cas = row == null
          ? global(insertGlobal.bind(d.name(), stripe, to, op))
          : global(updateGlobal.bind(to, op, d.name(), stripe, row.getUuid("op")));
      if (cas(globalTier, cas, op, () -> serialRead(selectGlobal.bind(d.name(), stripe),
          ConsistencyLevel.SERIAL, null, "global cursor of sequence '" + d.name() + "' stripe " + stripe, deadline), deadline)) {
        return new long[] {reserved, to};
      }
      backoff(attempt, deadline, "the global cursor of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  private void appendToPool(SequenceDefinition d, int stripe, long from, long to, long deadline) {
    for (int attempt = 0; ; attempt++) {
      PoolRow pool = readPool(d, stripe, dc, null, deadline);
      // An AdvanceSequence may have raised the pool's floor since the block was taken.
      long minIndex = pool == null || pool.floor == null ? 0 : d.firstIndexAbove(stripe, pool.floor);
      long keptFrom = Math.max(from, minIndex);
      if (keptFrom >= to) {
        idsDropped.add(to - from);
        return;
      }
      List<Long> blocks = new ArrayList<>(pool == null ? List.of() : pool.blocks);
      blocks.add(keptFrom);
      blocks.add(to);
      UUID op = UUID.randomUUID();
      BoundStatement cas = pool == null
          ? local(insertPool.bind(d.name(), stripe, dc, blocks, null, op))
          : local(updatePool.bind(blocks, pool.floor, pool.taken, op, d.name(), stripe, dc, pool.op));
      if (cas(poolTier, cas, op, () -> readPoolRow(d, stripe, dc, null, deadline), deadline)) {
        idsDropped.add(keptFrom - from);
        return;
      }
      backoff(attempt, deadline, "appending to " + dc + "'s pool of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Advance, floors, state

  @Override
  public void advance(SequenceDefinition d, long floor) {
    long deadline = deadline();
    for (int stripe = 0; stripe < d.stripes(); stripe++) {
      advanceGlobal(d, stripe, d.firstIndexAbove(stripe, floor), deadline);
    }
    // Then every datacenter's pools, each through a coordinator of its own datacenter (its Paxos scope).
    for (String datacenter : datacenters()) {
      Node coordinator = datacenter.equals(dc) ? null : coordinatorIn(datacenter, d);
      for (int stripe = 0; stripe < d.stripes(); stripe++) {
        trimPool(d, stripe, datacenter, coordinator, floor, deadline);
      }
    }
  }

  private void advanceGlobal(SequenceDefinition d, int stripe, long minIndex, long deadline) {
    for (int attempt = 0; ; attempt++) {
      Row row = serialRead(selectGlobal.bind(d.name(), stripe), ConsistencyLevel.SERIAL, null,
          "global cursor of sequence '" + d.name() + "' stripe " + stripe, deadline);
      if (row == null) {
        requireDefinition(d);
      }
      long reserved = row == null ? 0 : row.getLong("reserved");
      if (reserved >= minIndex) {
        return;
      }
      UUID op = UUID.randomUUID();
      BoundStatement cas = row == null
          ? global(insertGlobal.bind(d.name(), stripe, minIndex, op))
          : global(updateGlobal.bind(minIndex, op, d.name(), stripe, row.getUuid("op")));
      if (cas(globalTier, cas, op, () -> serialRead(selectGlobal.bind(d.name(), stripe),
          ConsistencyLevel.SERIAL, null, "global cursor of sequence '" + d.name() + "' stripe " + stripe, deadline), deadline)) {
        idsDropped.add(minIndex - reserved);
        return;
      }
      backoff(attempt, deadline, "advancing the global cursor of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  private void trimPool(SequenceDefinition d, int stripe, String datacenter, Node coordinator, long floor,
      long deadline) {
    for (int attempt = 0; ; attempt++) {
      PoolRow pool = readPool(d, stripe, datacenter, coordinator, deadline);
      if (pool == null) {
        return; // never refilled: whatever it gets later comes from the advanced global cursor
      }
      long newFloor = pool.floor == null ? floor : Math.max(pool.floor, floor);
      List<Long> kept = trim(pool.blocks, d.firstIndexAbove(stripe, newFloor));
      if (pool.floor != null && pool.floor >= floor && kept.equals(pool.blocks)) {
        return;
      }
      UUID op = UUID.randomUUID();
      BoundStatement cas = local(updatePool.bind(kept, newFloor, pool.taken, op, d.name(), stripe, datacenter,
          pool.op));
      if (coordinator != null) {
        cas = cas.setNode(coordinator);
      }
      if (cas(poolTier, cas, op, () -> readPoolRow(d, stripe, datacenter, coordinator, deadline), deadline)) {
        idsDropped.add(size(pool.blocks) - size(kept));
        return;
      }
      backoff(attempt, deadline, "trimming " + datacenter + "'s pool of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  private List<String> datacenters() {
    TreeSet<String> dcs = new TreeSet<>();
    dcs.add(dc);
    for (Node node : session.getMetadata().getNodes().values()) {
      if (node.getDatacenter() != null) {
        dcs.add(node.getDatacenter());
      }
    }
    return List.copyOf(dcs);
  }

  private Node coordinatorIn(String datacenter, SequenceDefinition d) {
    List<Node> up = new ArrayList<>();
    for (Node node : session.getMetadata().getNodes().values()) {
      if (datacenter.equals(node.getDatacenter()) && node.getState() == NodeState.UP
          && node.getOpenConnections() > 0) {
        up.add(node);
      }
    }
    if (up.isEmpty()) {
      throw new StoreUnavailableException("cannot advance sequence '" + d.name() + "': datacenter "
          + datacenter + " has no reachable node, and its pool must be trimmed through one of its own"
          + " coordinators; retry when it is back");
    }
    return up.get(ThreadLocalRandom.current().nextInt(up.size()));
  }

  @Override
  public long floor(SequenceDefinition d) {
    long floor = Long.MIN_VALUE;
    for (int stripe = 0; stripe < d.stripes(); stripe++) {
      Row row = read(selectPool.bind(d.name(), stripe, dc), ConsistencyLevel.LOCAL_QUORUM,
          dc + "'s pool of sequence '" + d.name() + "'");
      if (row != null && !row.isNull("floor")) {
        floor = Math.max(floor, row.getLong("floor"));
      }
    }
    return floor;
  }

  @Override
  public Duration floorRefreshInterval() {
    return settings.floorRefresh();
  }

  private void requireDefinition(SequenceDefinition d) {
    if (find(d.name()).isEmpty()) {
      throw new SequenceNotFoundException("sequence '" + d.name() + "' does not exist");
    }
  }

  @Override
  public SequenceState state(SequenceDefinition d) {
    requireDefinition(d);
    List<SequenceState.Stripe> stripes = new ArrayList<>();
    List<SequenceState.DatacenterReserve> reserves = new ArrayList<>();
    List<String> dcs = datacenters();
    for (int stripe = 0; stripe < d.stripes(); stripe++) {
      Row g = serialRead(selectGlobal.bind(d.name(), stripe), ConsistencyLevel.SERIAL, null,
          "global cursor of sequence '" + d.name() + "' stripe " + stripe, 0);
      stripes.add(new SequenceState.Stripe(stripe, g == null ? 0 : g.getLong("reserved"), d.stripeSize(stripe)));
      for (String datacenter : dcs) {
        // A plain local read: informational, and possible while other datacenters are cut off.
        Row p = read(selectPool.bind(d.name(), stripe, datacenter), ConsistencyLevel.LOCAL_QUORUM,
            datacenter + "'s pool of sequence '" + d.name() + "'");
        if (p != null) {
          reserves.add(new SequenceState.DatacenterReserve(datacenter, stripe, size(p.getList("blocks", Long.class))));
        }
      }
    }
    return new SequenceState(stripes, reserves);
  }

  /** What the two tiers' compare-and-set operations did since the store started. */
  public CasStats globalStats() {
    return globalTier.snapshot();
  }

  /** What this datacenter's pool operations did since the store started. */
  public CasStats poolStats() {
    return poolTier.snapshot();
  }

  /** IDs dropped by advances (below a floor): deliberate, not lost. */
  public long idsDropped() {
    return idsDropped.sum();
  }

  /** This server's datacenter, whose pool {@link #state} reports among the others. */
  public String localDatacenter() {
    return dc;
  }

  /** The driver session, for metrics. */
  public CqlSession session() {
    return session;
  }

  @Override
  public void close() {
    refillExecutor.shutdownNow();
    session.close();
  }

  // ---------------------------------------------------------------------------------------------
  // CAS machinery

  /**
   * Runs one CAS whose write carries {@code op}. Returns whether it applied; an unknown outcome is
   * resolved by {@code readBack} (a read at the same serial consistency), retried with back-off until
   * {@code deadline}, before this returns.
   */
  private boolean cas(Tier tier, BoundStatement statement, UUID op, Supplier<Row> readBack, long deadline) {
    if (tier == globalTier) {
      beforeGlobalCas.run();
    }
    tier.attempts.increment();
    try {
      ResultSet rs = session.execute(statement);
      if (rs.wasApplied()) {
        tier.applied.increment();
        return true;
      }
      tier.conflicts.increment();
      return false;
    } catch (DriverException e) {
      // Timeouts of any kind, CAS write unknown, a connection lost after sending: the write may have
      // applied. Reading at the same serial consistency completes any Paxos round in progress, so
      // what it shows is final.
      tier.unknown.increment();
      for (int attempt = 0; ; attempt++) {
        try {
          Row row = readBack.get();
          boolean applied = row != null && op.equals(row.getUuid("op"));
          if (applied) {
            tier.applied.increment();
            tier.resolvedApplied.increment();
          } else {
            tier.resolvedNotApplied.increment();
          }
          log.debug("unknown CAS outcome ({}) resolved: applied={}", describe(e), applied);
          return applied;
        } catch (StoreUnavailableException readFailed) {
          try {
            backoff(attempt, deadline, "resolving an unknown compare-and-set outcome");
          } catch (StoreUnavailableException gaveUp) {
            tier.unresolved.increment();
            throw new StoreUnavailableException("a compare-and-set had an unknown outcome (" + describe(e)
                + ") and reading it back kept failing; nothing was handed out: " + readFailed.getMessage(), e);
          }
        }
      }
    }
  }

  private Row read(BoundStatement s, ConsistencyLevel cl, String what) {
    try {
      return session.execute(s.setConsistencyLevel(cl)).one();
    } catch (DriverException e) {
      throw unavailable("reading the " + what + " at " + cl, e);
    }
  }

  /**
   * A read at SERIAL or LOCAL_SERIAL: sees (and completes) every Paxos round on the partition. Under
   * contention or a slow replica it may time out; then it is retried with back-off until
   * {@code deadline} ({@code 0}: one attempt only).
   */
  private Row serialRead(BoundStatement s, ConsistencyLevel serial, Node coordinator, String what, long deadline) {
    BoundStatement st = s.setConsistencyLevel(serial);
    if (coordinator != null) {
      st = st.setNode(coordinator);
    }
    for (int attempt = 0; ; attempt++) {
      try {
        return session.execute(st).one();
      } catch (DriverException e) {
        String hint = serial == ConsistencyLevel.SERIAL
            ? " (SERIAL needs a quorum of all datacenters: are the others reachable?)" : "";
        StoreUnavailableException failure = unavailable("reading the " + what + " at " + serial + hint, e);
        if (deadline == 0) {
          throw failure;
        }
        try {
          backoff(attempt, deadline, "reading the " + what);
        } catch (StoreUnavailableException gaveUp) {
          throw failure;
        }
      }
    }
  }

  private Row readPoolRow(SequenceDefinition d, int stripe, String datacenter, Node coordinator, long deadline) {
    return serialRead(selectPool.bind(d.name(), stripe, datacenter), ConsistencyLevel.LOCAL_SERIAL,
        coordinator, datacenter + "'s pool of sequence '" + d.name() + "' stripe " + stripe, deadline);
  }

  private PoolRow readPool(SequenceDefinition d, int stripe, String datacenter, Node coordinator, long deadline) {
    Row r = readPoolRow(d, stripe, datacenter, coordinator, deadline);
    if (r == null) {
      return null;
    }
    return new PoolRow(List.copyOf(r.getList("blocks", Long.class)),
        r.isNull("floor") ? null : r.getLong("floor"), r.isNull("taken") ? 0 : r.getLong("taken"),
        r.getUuid("op"));
  }

  private record PoolRow(List<Long> blocks, Long floor, long taken, UUID op) {}

  private DcRate rate(SequenceDefinition d, int stripe) {
    return rates.computeIfAbsent(d.name() + '\u0000' + stripe, k -> new DcRate(settings.dcTargetRunway()));
  }

  private static BoundStatement global(BoundStatement s) {
    return s.setSerialConsistencyLevel(ConsistencyLevel.SERIAL).setConsistencyLevel(ConsistencyLevel.QUORUM)
        .setIdempotent(false);
  }

  private static BoundStatement local(BoundStatement s) {
    // LOCAL_SERIAL must commit at LOCAL_QUORUM: with QUORUM it "times out" whenever another DC is down.
    return s.setSerialConsistencyLevel(ConsistencyLevel.LOCAL_SERIAL)
        .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM).setIdempotent(false);
  }

  private long deadline() {
    return System.nanoTime() + settings.casDeadline().toNanos();
  }

  /** Random, growing delays: servers that lost together must not retry in lock-step. */
  private static void backoff(int attempt, long deadline, String what) {
    long cap = Math.min(MAX_BACKOFF_MILLIS, BASE_BACKOFF_MILLIS << Math.min(attempt, 16));
    long delayMillis = ThreadLocalRandom.current().nextLong(cap / 2, cap + 1);
    if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis) > deadline) {
      throw new StoreUnavailableException(what + ": still losing compare-and-set races after "
          + (attempt + 1) + " attempts; giving up at the deadline");
    }
    try {
      Thread.sleep(delayMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StoreUnavailableException(what + ": interrupted", e);
    }
  }

  /** The pool's intervals without the first {@code n} IDs (taken from the first interval). */
  static List<Long> consume(List<Long> blocks, long n) {
    List<Long> rest = new ArrayList<>(blocks);
    long from = rest.get(0) + n;
    if (from >= rest.get(1)) {
      rest.remove(0);
      rest.remove(0);
    } else {
      rest.set(0, from);
    }
    return rest;
  }

  /** The intervals cut at {@code minIndex}. */
  static List<Long> trim(List<Long> blocks, long minIndex) {
    List<Long> kept = new ArrayList<>();
    for (int i = 0; i < blocks.size(); i += 2) {
      long from = Math.max(blocks.get(i), minIndex);
      long to = blocks.get(i + 1);
      if (from < to) {
        kept.add(from);
        kept.add(to);
      }
    }
    return kept;
  }

  static long size(List<Long> blocks) {
    long n = 0;
    for (int i = 0; i < blocks.size(); i += 2) {
      n += blocks.get(i + 1) - blocks.get(i);
    }
    return n;
  }

  private static StoreUnavailableException unavailable(String what, DriverException e) {
    return new StoreUnavailableException(what + " failed: " + describe(e), e);
  }

  /** The real cause: {@link AllNodesFailedException} wraps one error per node tried. */
  static String describe(Throwable e) {
    if (e instanceof AllNodesFailedException all && !all.getAllErrors().isEmpty()) {
      StringBuilder b = new StringBuilder();
      all.getAllErrors().forEach((node, errors) -> {
        for (Throwable t : errors) {
          if (b.length() > 0) {
            b.append("; ");
          }
          b.append(node.getEndPoint()).append(": ").append(describe(t));
        }
      });
      return b.toString();
    }
    return e.getClass().getSimpleName() + ": " + e.getMessage();
  }

  /** Counters of one tier. */
  private static final class Tier {
    final LongAdder attempts = new LongAdder();
    final LongAdder applied = new LongAdder();
    final LongAdder conflicts = new LongAdder();
    final LongAdder unknown = new LongAdder();
    final LongAdder resolvedApplied = new LongAdder();
    final LongAdder resolvedNotApplied = new LongAdder();
    final LongAdder unresolved = new LongAdder();
    final LongAdder idsLost = new LongAdder();

    CasStats snapshot() {
      return new CasStats(attempts.sum(), applied.sum(), conflicts.sum(), unknown.sum(),
          resolvedApplied.sum(), resolvedNotApplied.sum(), unresolved.sum(), idsLost.sum());
    }
  }
}
