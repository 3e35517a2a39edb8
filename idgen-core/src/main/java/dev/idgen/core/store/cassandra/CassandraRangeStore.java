package dev.idgen.core.store.cassandra;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.Confirmations;
import dev.idgen.core.FloorLog;
import dev.idgen.core.IdRange;
import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.NotOwnerException;
import dev.idgen.core.Ordering;
import dev.idgen.core.OwnerRecord;
import dev.idgen.core.RangeStore;
import dev.idgen.core.SequenceAlreadyExistsException;
import dev.idgen.core.RunwayPolicy;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.SequenceState;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.StoredSequence;
import dev.idgen.core.Ticker;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import javax.annotation.Nullable;
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
 *       driver 4.19), and {@link AllNodesFailedException} is unwrapped to the real cause in messages. The
 *       driver's options that these rules depend on are pinned ({@code DriverConfig}); the others come
 *       from idgen's configuration, its {@code datastax-java-driver} block included.
 *   <li>Connected in the background ({@link #open}): the store exists at once and answers once connected
 *       ({@link #ready()}), so that a server started before Cassandra waits instead of exiting.
 * </ul>
 *
 * <p>Threads: thread-safe; all coordination between processes happens in Cassandra. Within a process,
 * at most one refill per pool is in flight ({@link #refills}); it runs on the store's own daemon thread
 * pool, and callers that find the pool empty wait for it. The connection is made on the driver's threads
 * and one connector thread of the store's; it is published through a volatile field.
 */
@ThreadSafe
public final class CassandraRangeStore implements RangeStore {
  private static final Logger log = LoggerFactory.getLogger(CassandraRangeStore.class);

  private static final long BASE_BACKOFF_MILLIS = 2;
  private static final long MAX_BACKOFF_MILLIS = 250;

  private final CassandraSettings settings;
  private final String dc;
  private final Tier globalTier = new Tier();
  private final Tier poolTier = new Tier();
  private final LongAdder idsDropped = new LongAdder();
  private final LongAdder plainReads = new LongAdder();
  private final LongAdder serialReads = new LongAdder();
  private final ConcurrentMap<String, CompletableFuture<Void>> refills = new ConcurrentHashMap<>();
  /** This datacenter's consumption rate per (sequence, stripe), as this process observes its pool. */
  private final ConcurrentMap<String, DcRate> rates = new ConcurrentHashMap<>();
  private final Ticker ticker = Ticker.system();
  private final ExecutorService refillExecutor;
  /** A seam for fault-injection tests: runs just before each global CAS is sent. */
  volatile Runnable beforeGlobalCas = () -> {};
  /** A seam for fault-injection tests: how each CAS statement is sent, and what follows a read-back. */
  volatile CasExecutor casExecutor = CasExecutor.DIRECT;
  /** The write timestamp of this process's last announcement per server name: a withdrawal deletes
   *  only what it wrote, never a newer incarnation's row. */
  private final ConcurrentMap<String, Long> announcedAt = new ConcurrentHashMap<>();

  // The connection, made in the background (see open): until it is, every operation fails with
  // StoreUnavailableException and ready() is incomplete.

  /** The session and idgen's prepared statements; null until connected. */
  private volatile Statements statements;
  /** Complete once {@link #statements} is set; failed if the connection was given up. */
  private final CompletableFuture<Void> ready = new CompletableFuture<>();
  /** The driver's session being built (it reconnects until it reaches a node, with reconnect-on-init). */
  private volatile CompletableFuture<CqlSession> pendingSession;
  /** Applies or checks the schema and prepares the statements once the driver connected; retries them. */
  private final ScheduledExecutorService connector;
  /** Whether a failure to connect or to prepare is retried (the driver's advanced.reconnect-on-init). */
  private final boolean waitForCassandra;
  /** Why the store is not connected yet, for the messages of the operations that fail meanwhile. */
  private volatile String notConnected = "the driver is trying to reach a contact point";
  private volatile boolean closed;

  private CassandraRangeStore(CassandraSettings settings, boolean waitForCassandra) {
    this.settings = settings;
    this.dc = settings.localDatacenter();
    this.waitForCassandra = waitForCassandra;
    AtomicInteger n = new AtomicInteger();
    refillExecutor = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "idgen-dc-pool-refill-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    connector = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "idgen-cassandra-connect");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Connects to Cassandra (see {@link #open}) and waits until the store answers: the schema applied if
   * {@code settings.createSchema()}, the statements prepared. With the driver's
   * {@code advanced.reconnect-on-init} (idgen's default) it waits for as long as Cassandra is unreachable.
   *
   * @throws StoreUnavailableException if the connection was given up
   */
  public static CassandraRangeStore connect(CassandraSettings settings) {
    return connect(settings, null);
  }

  /** {@link #connect(CassandraSettings)}, with the driver's metrics (see {@link #open}). */
  public static CassandraRangeStore connect(CassandraSettings settings, @Nullable Object micrometerRegistry) {
    CassandraRangeStore store = open(settings, micrometerRegistry);
    try {
      store.ready.join();
      return store;
    } catch (CompletionException | CancellationException e) {
      store.close();
      throw e.getCause() instanceof StoreUnavailableException u ? u
          : new StoreUnavailableException("cannot connect to Cassandra: " + describe(e), e);
    }
  }

  /**
   * A store that connects to Cassandra in the background and answers once it is connected: until then
   * every operation fails with {@link StoreUnavailableException} and {@link #ready()} is incomplete. With
   * the driver's {@code advanced.reconnect-on-init} (idgen's default, see {@code DriverConfig}) the driver
   * keeps trying to reach a contact point (logging each failure), and a keyspace that cannot be used yet
   * (tables missing, the schema not agreed) is tried again, so that a server started before Cassandra, or
   * before its schema, waits for it instead of exiting; without it, the first failure is final and
   * {@link #ready()} fails.
   *
   * <p>{@code micrometerRegistry}: the driver reports its own metrics (requests, errors, connections, per
   * node) into it, an {@code io.micrometer.core.instrument.MeterRegistry} typed {@code Object} so that the
   * core does not depend on Micrometer. The driver's {@code java-driver-metrics-micrometer} module must then
   * be on the class path. Metric names start with {@code cassandra.} (tagged with the session and, for
   * per-node metrics, the node). Null: no driver metrics.
   */
  public static CassandraRangeStore open(CassandraSettings settings, @Nullable Object micrometerRegistry) {
    DriverConfigLoader config = DriverConfig.loader(settings, micrometerRegistry != null);
    boolean waitForCassandra = config.getInitialConfig().getDefaultProfile()
        .getBoolean(DefaultDriverOption.RECONNECT_ON_INIT);
    CqlSessionBuilder builder = CqlSession.builder()
        .withConfigLoader(config)
        .withLocalDatacenter(settings.localDatacenter());
    if (micrometerRegistry != null) {
      builder.withMetricRegistry(micrometerRegistry);
    }
    for (String cp : settings.contactPoints()) {
      int colon = cp.lastIndexOf(':');
      builder.addContactPoint(InetSocketAddress.createUnresolved(cp.substring(0, colon),
          Integer.parseInt(cp.substring(colon + 1))));
    }
    CassandraRangeStore store = new CassandraRangeStore(settings, waitForCassandra);
    log.info("connecting to Cassandra at {} (local datacenter {}, keyspace {}){}", settings.contactPoints(),
        settings.localDatacenter(), settings.keyspace(),
        waitForCassandra ? "; the store answers once connected" : "");
    CompletableFuture<CqlSession> session = builder.buildAsync().toCompletableFuture();
    store.pendingSession = session;
    CompletableFuture<?> unusedConnected = session.whenComplete((s, error) -> {
      if (error != null) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        store.giveUp("cannot connect to Cassandra at " + settings.contactPoints() + " (local datacenter "
            + settings.localDatacenter() + "): " + describe(cause), cause);
      } else {
        store.prepareLater(s, 0);
      }
    });
    return store;
  }

  /**
   * Complete once the store answers (connected, schema checked, statements prepared); failed if the
   * connection was given up ({@link StoreUnavailableException}), or if the store was closed before.
   */
  @Override
  public CompletionStage<Void> ready() {
    return ready.copy();
  }

  /** Runs {@link #prepare} on the connector thread after {@code attempt} failures (none: at once). */
  private void prepareLater(CqlSession session, int attempt) {
    long delayMillis = attempt == 0 ? 0 : Math.min(30_000, 1_000L << Math.min(attempt - 1, 5));
    try {
      Future<?> unused = connector.schedule(() -> prepare(session, attempt), delayMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      session.close(); // closed meanwhile
    }
  }

  /** Applies or checks the schema, checks the cluster's settings and prepares the statements. */
  private void prepare(CqlSession session, int attempt) {
    if (closed) {
      session.close();
      return;
    }
    try {
      // Schema metadata disabled, or the keyspace filtered out in a datastax-java-driver block: the
      // driver cannot check the schema, and the datacenters to cover come from system_schema instead.
      boolean schemaKnown = session.getMetadata().getKeyspace(settings.keyspace()).isPresent();
      if (settings.createSchema()) {
        Schema.apply(session, settings);
      } else if (schemaKnown) {
        List<String> upgrade = Schema.missingColumns(session, settings);
        if (!upgrade.isEmpty()) {
          throw new StoreUnavailableException("keyspace '" + settings.keyspace() + "' was made by an older"
              + " idgen and lacks columns of this version (idempotent pool appends, strict ordering); run this"
              + " once (cqlsh), or start one server with idgen.cassandra.create-schema = true: "
              + String.join("; ", upgrade));
        }
        List<String> tables = Schema.missingTables(session, settings);
        if (!tables.isEmpty()) {
          throw new StoreUnavailableException("keyspace '" + settings.keyspace() + "' lacks the tables "
              + tables + " (not created yet, or made by an older idgen?): apply deploy/cassandra/schema.cql"
              + " (its CREATE TABLE IF NOT EXISTS statements add them), or start one server with"
              + " idgen.cassandra.create-schema = true");
        }
      }
      CassandraChecks.warnAboutUnsafeSettings(session, settings);
      statements = new Statements(session, settings.keyspace());
      if (session.getMetadata().getKeyspace(settings.keyspace()).isEmpty()) {
        log.warn("the driver has no schema metadata for keyspace {} (advanced.metadata.schema disabled, or the"
            + " keyspace filtered out of it): the schema checks at start were skipped, and the datacenters that"
            + " an AdvanceSequence must cover are read from system_schema.keyspaces at each advance (it fails,"
            + " saying why, if they cannot be read)", settings.keyspace());
      }
    } catch (RuntimeException e) {
      String why = e instanceof DriverException de
          ? "cannot prepare idgen's statements in keyspace '" + settings.keyspace() + "' (is the schema"
              + " applied? see idgen.cassandra.create-schema): " + describe(de)
          : e.getMessage();
      if (closed || !waitForCassandra) {
        session.close();
        giveUp(why, e);
        return;
      }
      notConnected = why;
      log.warn("Cassandra answers, but the store cannot use it yet (attempt {}; trying again): {}", attempt + 1, why);
      prepareLater(session, attempt + 1);
      return;
    }
    log.info("connected to Cassandra at {} (local datacenter {}, keyspace {})", settings.contactPoints(),
        settings.localDatacenter(), settings.keyspace());
    ready.complete(null);
    if (closed) {
      session.close(); // closed while preparing
    }
  }

  private void giveUp(String why, Throwable cause) {
    notConnected = why;
    ready.completeExceptionally(cause instanceof StoreUnavailableException u ? u
        : new StoreUnavailableException(why, cause));
  }

  /** The session and statements, or {@link StoreUnavailableException} while the store is not connected. */
  private Statements st() {
    Statements s = statements;
    if (s == null) {
      throw new StoreUnavailableException("not connected to Cassandra at " + settings.contactPoints()
          + " (local datacenter " + settings.localDatacenter() + ") yet: " + notConnected);
    }
    return s;
  }

  // ---------------------------------------------------------------------------------------------
  // Definitions

  @Override
  public void create(SequenceDefinition d) {
    if (d.strict() && !datacenters().contains(d.homeDatacenter())) {
      throw InvalidRequestException.ofField("home_datacenter", "sequence '" + d.name() + "': home datacenter '"
          + d.homeDatacenter() + "' holds no replica of keyspace '" + settings.keyspace() + "' (expected one of "
          + datacenters() + ")");
    }
    long deadline = deadline();
    Attempts<Void> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      UUID op = attempts.next(null, null);
      BoundStatement insert = global(st().insertDefinition.bind(d.name(), d.start(), d.max(), d.stripes(),
          d.nodeBlockSize(), d.dcBlockSize(), Instant.now(), op, d.ordering().name(), d.strict() ? d.homeDatacenter() : null));
      if (cas(globalTier, CasKind.CREATE, insert, op, null, attempts, () -> serialRead(
          st().selectDefinition.bind(d.name()), ConsistencyLevel.SERIAL, null, "definition of '" + d.name() + "'",
          deadline), deadline).applied()) {
        return;
      }
      Row existing = serialRead(st().selectDefinition.bind(d.name()), ConsistencyLevel.SERIAL, null,
          "definition of '" + d.name() + "'", deadline);
      if (existing != null) {
        if (attempts.mine(existing.getUuid("op"))) {
          return; // an earlier attempt of ours applied after all
        }
        throw new SequenceAlreadyExistsException("sequence '" + d.name() + "' already exists");
      }
      backoff(attempt, deadline, "creating sequence '" + d.name() + "'");
    }
  }

  @Override
  public Optional<SequenceDefinition> find(String name) {
    return findStored(name).map(StoredSequence::definition);
  }

  @Override
  public Optional<StoredSequence> findStored(String name) {
    // Definitions never change once written, so a local read that finds one is authoritative; only
    // "not found" is double-checked at SERIAL, in case the creation is so recent it is still in flight.
    Row row = read(st().selectDefinition.bind(name), ConsistencyLevel.LOCAL_QUORUM, "definition of '" + name + "'");
    if (row == null) {
      try {
        row = serialRead(st().selectDefinition.bind(name), ConsistencyLevel.SERIAL, null,
            "definition of '" + name + "'", 0);
      } catch (StoreUnavailableException e) {
        // Cut off from the other datacenters: this datacenter's answer stands (a sequence created
        // elsewhere moments ago may not be here yet).
        log.debug("could not double-check at SERIAL that sequence '{}' does not exist: {}", name, e.getMessage());
      }
    }
    return Optional.ofNullable(row)
        .map(r -> new StoredSequence(definition(r), Optional.ofNullable(r.getInstant("created_at"))));
  }

  private static SequenceDefinition definition(Row r) {
    // Rows written before 0.2 have no ordering: PER_SERVER.
    Ordering ordering = r.isNull("ordering") ? Ordering.PER_SERVER : Ordering.valueOf(r.getString("ordering"));
    return new SequenceDefinition(r.getString("name"), r.getLong("start"), r.getLong("max"),
        r.getInt("stripes"), r.getLong("node_block_size"), r.getLong("dc_block_size"), ordering,
        ordering == Ordering.STRICT ? r.getString("home_dc") : "");
  }

  @Override
  public List<SequenceDefinition> list(String afterName, int limit) {
    return listStored(afterName, limit).stream().map(StoredSequence::definition).toList();
  }

  @Override
  public List<StoredSequence> listStored(String afterName, int limit) {
    // The table is small (one row per sequence) and partitions are in token order, so names are
    // read whole and sorted here.
    TreeSet<String> names = new TreeSet<>();
    try {
      plainReads.increment();
      for (Row r : st().session.execute(st().selectNames.bind().setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM))) {
        names.add(r.getString(0));
      }
    } catch (DriverException e) {
      throw unavailable("listing sequences", e);
    }
    List<StoredSequence> out = new ArrayList<>();
    for (String name : names.tailSet(afterName, false)) {
      if (out.size() == limit) {
        break;
      }
      findStored(name).ifPresent(out::add);
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Node blocks from the DC pool

  @Override
  public IdRange reserve(SequenceDefinition d, int stripe, long size) {
    return reserve(d, stripe, size, NOT_STRICT);
  }

  /**
   * A strict sequence's pool is written only by its owner of the highest epoch: every write is conditioned
   * on the row's op, so a fence (a write of a higher epoch) between an owner's read and its write makes the
   * write fail, and the next read shows the higher epoch ({@link NotOwnerException}). Appends check the
   * same way ({@link #appendToPool}). Nothing is given back to a strict pool, so it only ever holds blocks
   * above everything taken from it.
   */
  @Override
  public IdRange reserveStrict(SequenceDefinition d, long epoch, long size) {
    if (!d.strict() || !d.homeDatacenter().equals(dc)) {
      throw new IllegalArgumentException("sequence '" + d.name() + "' is not a strict sequence of " + dc);
    }
    if (epoch < 1) {
      throw new IllegalArgumentException("epoch: " + epoch + " (expected: >= 1)");
    }
    return reserve(d, 0, size, epoch);
  }

  /** The epoch argument of a sequence that is not strict: its pool has no fence. */
  private static final long NOT_STRICT = 0;

  private IdRange reserve(SequenceDefinition d, int stripe, long size, long epoch) {
    if (size < 1) {
      throw new IllegalArgumentException("size: " + size + " (expected: >= 1)");
    }
    if (stripe < 0 || stripe >= d.stripes()) {
      throw new IllegalArgumentException("stripe: " + stripe + " (expected: 0 to " + (d.stripes() - 1) + ")");
    }
    long deadline = deadline();
    rate(d, stripe).request(size);
    // Taking IDs out of the pool is a removal: after an ambiguous outcome it may be tried again (the
    // worst case is a gap, counted when this returns), and an earlier attempt found applied is ours.
    Attempts<long[]> attempts = new Attempts<>();
    long[] got = null;
    long ambiguousHeal = 0;
    try {
      for (int attempt = 0; ; attempt++) {
        PoolRow pool = readPool(d, stripe, dc, null, deadline);
        if (pool != null && attempts.mine(pool.op)) {
          got = attempts.effect(pool.op);
          poolTier.recovered.increment();
          return reserved(d, stripe, got, pool.taken, pool.blocks, epoch);
        }
        if (epoch != NOT_STRICT && (pool == null || pool.ownerEpoch != epoch)) {
          checkFence(d, pool, epoch);
          fence(d, pool, epoch, deadline);
          continue;
        }
        if (pool != null) {
          long seen = poolTier.highWater.above(stripeKey(d, stripe), pool.taken);
          if (ambiguousHeal > 0) {
            // A heal whose outcome was ambiguous: the row no longer below what this server saw means it
            // applied (its blocks dropped); still below, it did not, and the heal below is tried again.
            if (seen == Long.MIN_VALUE) {
              countHealed(d, stripe, ambiguousHeal);
              log.error("{}'s pool of sequence '{}' stripe {} was repaired by a heal whose outcome had looked"
                  + " ambiguous: its {} IDs were dropped as a gap (Cassandra had forgotten acknowledged writes)",
                  dc, d.name(), stripe, ambiguousHeal);
            }
            ambiguousHeal = 0;
          }
          if (seen != Long.MIN_VALUE) {
            ambiguousHeal = healPool(d, stripe, pool, seen, deadline);
            continue;
          }
          poolTier.highWater.note(stripeKey(d, stripe), pool.taken); // a serial read: the store held that much
        }
        if (pool != null && pool.floor != null && !trim(pool.blocks, PoolRow.minIndex(pool, d, stripe)).equals(pool.blocks)) {
          // Below the pool's own floor: appended without it (a writer older than the floor rules). Never taken.
          log.warn("{}'s pool of sequence '{}' stripe {} holds IDs at or below its floor {}: trimming them before"
              + " reserving", dc, d.name(), stripe, pool.floor);
          trimPool(d, stripe, dc, null, pool.floor, deadline);
          continue;
        }
        attempts.seen(pool == null ? null : pool.op, r -> pool != null && overlaps(pool.blocks, r[0], r[1]));
        if (pool == null || pool.blocks.isEmpty()) {
          awaitRefill(d, stripe, 0, deadline, epoch);
          continue;
        }
        long from = pool.blocks.get(0);
        long take = Math.min(size, pool.blocks.get(1) - from);
        List<Long> rest = consume(pool.blocks, take);
        long taken = pool.taken + take;
        UUID op = attempts.next(new long[] {from, from + take}, pool.op);
        BoundStatement update = local(st().updatePool.bind(rest, pool.floor, taken, op, d.name(), stripe, dc, pool.op));
        CasResult result = cas(poolTier, CasKind.POOL_RESERVE, update, op, pool.op, attempts,
            () -> readPoolRow(d, stripe, dc, null, deadline), deadline);
        if (result.applied()) {
          got = attempts.effect(result.op());
          return reserved(d, stripe, got, result.op().equals(op) ? taken : pool.taken, rest, epoch);
        }
        backoff(attempt, deadline, "reserving from " + dc + "'s pool of sequence '" + d.name() + "' stripe " + stripe);
      }
    } finally {
      countLost(poolTier, attempts, got, "a node block of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  /**
   * A reservation that applied: note the DC's rate, and refill the pool as soon as it holds less than the
   * isolation runway at that rate, so that the runway is there when the datacenter is cut off.
   */
  private IdRange reserved(SequenceDefinition d, int stripe, long[] range, long taken, List<Long> rest,
      long epoch) {
    poolTier.highWater.note(stripeKey(d, stripe), taken);
    DcRate rate = rate(d, stripe);
    rate.observe(ticker.nanos(), taken);
    long held = size(rest);
    if (held < rate.lowWater(d)) {
      refillInBackground(d, stripe, held, epoch);
    }
    return d.range(stripe, range[0], range[1]);
  }

  /** Refuses an owner whose epoch a successor's fence superseded. */
  private static void checkFence(SequenceDefinition d, PoolRow pool, long epoch) {
    if (pool != null && pool.ownerEpoch > epoch) {
      throw new NotOwnerException(d.name(), null, Duration.ZERO, "sequence '" + d.name() + "': owner epoch "
          + epoch + " was superseded by epoch " + pool.ownerEpoch + " (another server took the sequence over)");
    }
  }

  /**
   * Records a new owner's epoch in the pool before it takes anything from it. Idempotent (it writes the
   * epoch, not an increment), so an unknown outcome is simply read again by the caller.
   */
  private void fence(SequenceDefinition d, PoolRow pool, long epoch, long deadline) {
    Attempts<Void> attempts = new Attempts<>();
    UUID op = attempts.next(null, pool == null ? null : pool.op);
    BoundStatement cas = pool == null
        ? local(st().insertFencedPool.bind(d.name(), dc, Long.MIN_VALUE, epoch, op))
        : local(st().fencePool.bind(epoch, op, d.name(), 0, dc, pool.op));
    cas(poolTier, CasKind.POOL_FENCE, cas, op, pool == null ? null : pool.op, attempts,
        () -> readPoolRow(d, 0, dc, null, deadline), deadline);
  }

  /**
   * A pool row that shows fewer IDs taken than this process saw taken from it ({@code seen}) forgot
   * acknowledged writes ({@link HighWater}): reservations, and maybe appends. Its blocks may hold IDs that were handed out, so
   * all of them are dropped (a counted gap), its {@code taken} is put back, and its record of appended blocks
   * is closed at the global cursor as it stands, so that no block taken from it before now (one appended in
   * the forgotten writes, then consumed, say) is ever appended again. The pool then refills from the global
   * cursor, with IDs nobody holds. A removal: repeated until the row shows it, whatever the outcomes.
   */
  private long healPool(SequenceDefinition d, int stripe, PoolRow pool, long seen, long deadline) {
    Row global = serialRead(st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.SERIAL, null,
        "global cursor of sequence '" + d.name() + "' stripe " + stripe
            + " (to repair " + dc + "'s pool, which forgot acknowledged writes)", deadline);
    long below = Math.max(pool.appended.below(), global == null ? 0 : global.getLong("reserved"));
    Attempts<Void> attempts = new Attempts<>();
    UUID op = attempts.next(null, pool.op);
    BoundStatement heal = local(st().healPool.bind(List.of(), seen, List.of(), below, op, d.name(), stripe, dc,
        pool.op));
    CasResult result = cas(poolTier, CasKind.POOL_HEAL, heal, op, pool.op, attempts,
        () -> readPoolRow(d, stripe, dc, null, deadline), deadline);
    long dropped = size(pool.blocks);
    if (result.outcome() == Outcome.AMBIGUOUS) {
      return dropped; // the caller's next read tells whether it applied
    }
    if (result.applied()) {
      countHealed(d, stripe, dropped);
      log.error("{}'s pool of sequence '{}' stripe {} showed {} IDs taken, but this server saw {} taken from it:"
          + " Cassandra forgot writes it had acknowledged (a replica that crashed in commitlog_sync: periodic?"
          + " see docs/operations.md). Its {} IDs were dropped as a gap and it refills from the global cursor,"
          + " so that nothing it handed out before is handed out again", dc, d.name(), stripe, pool.taken, seen,
          dropped);
    }
    // Not applied: the caller reads the row again and decides anew.
    return 0;
  }

  private void countHealed(SequenceDefinition d, int stripe, long dropped) {
    poolTier.regressions.increment();
    poolTier.idsLost.add(dropped);
  }

  /**
   * Counts, as a gap, every attempt of a removal whose outcome stayed open: it may have taken its IDs
   * out of the row (so nobody will hand them out) without this process ever learning it.
   */
  private void countLost(Tier tier, Attempts<long[]> attempts, long[] used, String what) {
    for (long[] r : attempts.open()) {
      if (r != used) {
        tier.idsLost.add(r[1] - r[0]);
        log.warn("counted {} IDs of {} as lost: the compare-and-set that took them had an unknown outcome"
            + " that could not be settled (an upper bound: another holder may have taken them)", r[1] - r[0], what);
      }
    }
  }

  /**
   * Puts IDs this server reserved and never handed out back at the front of its datacenter's pool, so
   * that the next reservations take them. An addition that cannot be recorded the way DC blocks are (a
   * returned range may be consumed again before a read-back sees it), so it is retried only after a
   * definite "not applied" from Cassandra. After an unknown outcome the row decides: it carries this
   * operation's op id, or still holds some of the returned IDs (nobody else can have put them there:
   * this server held them alone), and then they are back; otherwise they are counted lost, never
   * appended again.
   */
  @Override
  public long giveBack(SequenceDefinition d, int stripe, List<IdRange> ranges) {
    List<Long> mine = new ArrayList<>();
    for (IdRange r : ranges) {
      long from = d.indexOf(stripe, r.first());
      mine.add(from);
      mine.add(from + r.count());
    }
    long total = size(mine);
    long deadline = deadline();
    Attempts<Void> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      PoolRow pool;
      try {
        pool = readPool(d, stripe, dc, null, deadline);
      } catch (StoreUnavailableException e) {
        return lostGivingBack(d, stripe, total, e.getMessage());
      }
      // An AdvanceSequence may have raised the floor since these IDs were reserved.
      List<Long> kept = trim(mine, PoolRow.minIndex(pool, d, stripe));
      if (kept.isEmpty()) {
        idsDropped.add(total);
        return 0;
      }
      List<Long> blocks = merge(pool == null ? List.of() : pool.blocks, kept);
      UUID op = attempts.next(null, pool == null ? null : pool.op);
      BoundStatement cas = pool == null
          ? local(st().insertPool.bind(d.name(), stripe, dc, blocks, null, List.of(), Long.MIN_VALUE, op))
          : local(st().updatePool.bind(blocks, pool.floor, pool.taken, op, d.name(), stripe, dc, pool.op));
      CasResult result;
      try {
        result = cas(poolTier, CasKind.POOL_GIVE_BACK, cas, op, pool == null ? null : pool.op, attempts,
            () -> readPoolRow(d, stripe, dc, null, deadline), deadline);
      } catch (StoreUnavailableException e) {
        return lostGivingBack(d, stripe, total, e.getMessage());
      }
      if (result.applied()) {
        idsDropped.add(total - size(kept));
        return size(kept);
      }
      if (result.resolved()) {
        // Unknown outcome, not found applied: look once more, then never repeat it.
        try {
          PoolRow now = readPool(d, stripe, dc, null, deadline);
          if (now != null && (attempts.mine(now.op) || overlaps(now.blocks, kept))) {
            poolTier.recovered.increment();
            idsDropped.add(total - size(kept));
            return size(kept);
          }
        } catch (StoreUnavailableException e) {
          // counted lost below
        }
        return lostGivingBack(d, stripe, total, "its compare-and-set had an unknown outcome");
      }
      try {
        backoff(attempt, deadline, "giving back to " + dc + "'s pool of sequence '" + d.name() + "' stripe " + stripe);
      } catch (StoreUnavailableException e) {
        return lostGivingBack(d, stripe, total, e.getMessage());
      }
    }
  }

  private long lostGivingBack(SequenceDefinition d, int stripe, long n, String why) {
    poolTier.idsLost.add(n);
    log.warn("could not give back {} IDs of sequence '{}' stripe {} to {}'s pool; they are a counted gap: {}",
        n, d.name(), stripe, dc, why);
    return 0;
  }

  /** Whether the intervals hold any index of the other intervals. */
  static boolean overlaps(List<Long> blocks, List<Long> other) {
    for (int i = 0; i < other.size(); i += 2) {
      if (overlaps(blocks, other.get(i), other.get(i + 1))) {
        return true;
      }
    }
    return false;
  }

  /** Two disjoint interval lists as one, in index order (returned IDs come first: they are the lowest). */
  static List<Long> merge(List<Long> a, List<Long> b) {
    List<long[]> all = new ArrayList<>();
    for (List<Long> list : List.of(a, b)) {
      for (int i = 0; i < list.size(); i += 2) {
        all.add(new long[] {list.get(i), list.get(i + 1)});
      }
    }
    all.sort((x, y) -> Long.compare(x[0], y[0]));
    List<Long> out = new ArrayList<>();
    for (long[] r : all) {
      int n = out.size();
      if (n > 0 && out.get(n - 1) == r[0]) {
        out.set(n - 1, r[1]); // adjacent: one interval
      } else {
        out.add(r[0]);
        out.add(r[1]);
      }
    }
    return out;
  }

  private void awaitRefill(SequenceDefinition d, int stripe, long held, long deadline, long epoch) {
    CompletableFuture<Void> refill = startRefill(d, stripe, held, epoch);
    try {
      refill.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof SequenceNotFoundException notFound) {
        throw notFound;
      }
      if (cause instanceof NotOwnerException notOwner) {
        throw notOwner;
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

  private void refillInBackground(SequenceDefinition d, int stripe, long held, long epoch) {
    startRefill(d, stripe, held, epoch).whenComplete((v, e) -> {
      if (e != null && !(e instanceof SequenceExhaustedException)) {
        log.warn("background refill of datacenter {}'s pool of sequence '{}' stripe {} failed: {}",
            dc, d.name(), stripe, e.getMessage());
      }
    });
  }

  /**
   * Starts a refill of this DC's pool, which held {@code held} IDs when last read, or joins the one this
   * process already has in flight.
   */
  private CompletableFuture<Void> startRefill(SequenceDefinition d, int stripe, long held, long epoch) {
    String key = stripeKey(d, stripe);
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> running = refills.putIfAbsent(key, mine);
    if (running != null) {
      return running;
    }
    try {
      refillExecutor.execute(() -> {
        try {
          refillPool(d, stripe, held, epoch);
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
  private void refillPool(SequenceDefinition d, int stripe, long held, long epoch) {
    long deadline = deadline();
    long[] block = takeFromGlobal(d, stripe, rate(d, stripe).refillSize(d, held), deadline);
    try {
      appendToPool(d, stripe, block[0], block[1], deadline(), epoch);
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
    // A removal, like reserve: retried after an ambiguous outcome; open attempts are counted as gaps.
    Attempts<long[]> attempts = new Attempts<>();
    long[] got = null;
    try {
      for (int attempt = 0; ; attempt++) {
        Row row = serialRead(st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.SERIAL, null,
            "global cursor of sequence '" + d.name() + "' stripe " + stripe, deadline);
        if (row == null) {
          requireDefinition(d); // rows are created lazily: never for a sequence that does not exist
        }
        UUID current = row == null ? null : row.getUuid("op");
        if (attempts.mine(current)) {
          globalTier.recovered.increment();
          got = attempts.effect(current);
          countSkip(d, stripe, got);
          globalTier.highWater.note(stripeKey(d, stripe), got[1]);
          return got;
        }
        long stored = row == null ? 0 : row.getLong("reserved");
        // A cursor below what this process saw it at forgot acknowledged writes (HighWater): it takes from
        // what it saw, and the IDs in between are a counted gap (they may have been handed out).
        long reserved = Math.max(stored, globalTier.highWater.above(stripeKey(d, stripe), stored));
        // The cursor only grows: an attempt whose end is still above it never applied.
        attempts.seen(current, r -> stored < r[1]);
        if (reserved >= total) {
          throw new SequenceExhaustedException(d.name(), d.max());
        }
        // A sequence with a max is never reserved far ahead: at most a small fraction of what is left.
        long to = reserved + RunwayPolicy.boundedByRemaining(size, total - reserved);
        // The effect carries the cursor as read: an attempt that skipped past forgotten writes is counted
        // when it is known to have applied, by whichever read learns it.
        UUID op = attempts.next(new long[] {reserved, to, stored}, current);
        BoundStatement cas = row == null
            ? global(st().insertGlobal.bind(d.name(), stripe, to, op))
            : global(st().updateGlobal.bind(to, op, d.name(), stripe, current));
        CasResult result = cas(globalTier, CasKind.GLOBAL_TAKE, cas, op, current, attempts,
            () -> serialRead(st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.SERIAL, null,
                "global cursor of sequence '" + d.name() + "' stripe " + stripe, deadline), deadline);
        if (result.applied()) {
          got = attempts.effect(result.op());
          countSkip(d, stripe, got);
          globalTier.highWater.note(stripeKey(d, stripe), got[1]);
          return got;
        }
        backoff(attempt, deadline, "the global cursor of sequence '" + d.name() + "' stripe " + stripe);
      }
    } finally {
      countLost(globalTier, attempts, got, "a DC block of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  /**
   * Counts the gap of a take that applied after skipping a cursor that forgot acknowledged writes
   * ({@code got}: from, to, the cursor as read), whether its own write or an earlier attempt's applied.
   */
  private void countSkip(SequenceDefinition d, int stripe, long[] got) {
    long skipped = got[0] - got[2];
    if (skipped > 0) {
      globalTier.regressions.increment();
      globalTier.idsLost.add(skipped);
      log.error("the global cursor of sequence '{}' stripe {} showed {} IDs reserved, but this server saw {}:"
          + " Cassandra forgot writes it had acknowledged (see docs/operations.md); it was moved past them,"
          + " a gap of {} IDs", d.name(), stripe, got[2], got[0], skipped);
    }
  }

  /**
   * Appends a block taken from the global cursor to this datacenter's pool. An addition: it must never
   * be repeated after an outcome that may have applied, so the pool row records the blocks appended to
   * it ({@link Appended}) and every attempt first looks there. A block the record can no longer vouch for
   * is never appended: it is counted lost instead.
   */
  private void appendToPool(SequenceDefinition d, int stripe, long from, long to, long deadline, long epoch) {
    Attempts<Void> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      PoolRow pool = readPool(d, stripe, dc, null, deadline);
      Appended appended = pool == null ? Appended.EMPTY : pool.appended;
      if (appended.contains(from, to)) {
        if (attempt > 0) {
          poolTier.recovered.increment(); // an attempt whose outcome looked open had applied
        }
        return;
      }
      if (epoch != NOT_STRICT && (pool == null || pool.ownerEpoch != epoch)) {
        // A successor fenced the pool after this owner took the block from the global cursor: appending it
        // now would put it below the successor's blocks. It is never appended (a counted gap).
        checkFence(d, pool, epoch);
        throw new NotOwnerException(d.name(), null, Duration.ZERO, "sequence '" + d.name() + "': the pool is"
            + " not fenced at owner epoch " + epoch);
      }
      if (appended.mayContain(from, to)) {
        poolTier.idsLost.add(to - from);
        log.warn("counted a DC block of sequence '{}' stripe {} ({} IDs) as lost: whether it reached {}'s pool"
            + " is no longer recorded, so it is never appended again", d.name(), stripe, to - from, dc);
        return;
      }
      // An AdvanceSequence may have raised the pool's floor since the block was taken.
      long keptFrom = Math.max(from, PoolRow.minIndex(pool, d, stripe));
      if (keptFrom >= to) {
        idsDropped.add(to - from);
        return;
      }
      List<Long> blocks = new ArrayList<>(pool == null ? List.of() : pool.blocks);
      blocks.add(keptFrom);
      blocks.add(to);
      Appended record = appended.with(from, to);
      UUID op = attempts.next(null, pool == null ? null : pool.op);
      BoundStatement cas = pool == null
          ? local(st().insertPool.bind(d.name(), stripe, dc, blocks, null, record.pairs(), record.below(), op))
          : local(st().appendPool.bind(blocks, record.pairs(), record.below(), op, d.name(), stripe, dc, pool.op));
      if (cas(poolTier, CasKind.POOL_APPEND, cas, op, pool == null ? null : pool.op, attempts,
          () -> readPoolRow(d, stripe, dc, null, deadline), deadline).applied()) {
        idsDropped.add(keptFrom - from);
        return;
      }
      // Not applied, or open: the next read of the record decides.
      backoff(attempt, deadline, "appending to " + dc + "'s pool of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Owners of strict sequences

  @Override
  public Optional<OwnerRecord> owner(SequenceDefinition d) {
    String what = "owner of sequence '" + d.name() + "'";
    Row r = d.homeDatacenter().equals(dc)
        ? serialRead(st().selectOwner.bind(d.name()), ConsistencyLevel.LOCAL_SERIAL, null, what, 0)
        // From another datacenter: its own replicas' copy, only to learn where to forward (the owner
        // itself refuses calls it no longer owns).
        : read(st().selectOwner.bind(d.name()), ConsistencyLevel.LOCAL_QUORUM, what);
    return Optional.ofNullable(r).map(CassandraRangeStore::ownerRecord);
  }

  private static OwnerRecord ownerRecord(Row r) {
    return new OwnerRecord(r.getString("server"), r.getUuid("incarnation"), r.getString("target"),
        r.getLong("epoch"), r.getUuid("op"));
  }

  @Override
  public boolean replaceOwner(SequenceDefinition d, @Nullable OwnerRecord expected, OwnerRecord next) {
    if (!d.strict() || !d.homeDatacenter().equals(dc)) {
      throw new IllegalArgumentException("sequence '" + d.name() + "' is not a strict sequence of " + dc);
    }
    long deadline = System.nanoTime() + Math.min(settings.casDeadline().toNanos(), TimeUnit.SECONDS.toNanos(2));
    Attempts<Void> attempts = new Attempts<>();
    // The new row's op is next.version: a read-back that finds it knows the write applied.
    attempts.next(next.version(), null, expected == null ? null : expected.version());
    BoundStatement cas = expected == null
        ? local(st().insertOwner.bind(d.name(), next.server(), next.incarnation(), next.target(), next.epoch(),
            next.version()))
        : local(st().updateOwner.bind(next.server(), next.incarnation(), next.target(), next.epoch(),
            next.version(), d.name(), expected.version()));
    return cas(poolTier, CasKind.OWNER, cas, next.version(), expected == null ? null : expected.version(),
        attempts, () -> serialRead(st().selectOwner.bind(d.name()), ConsistencyLevel.LOCAL_SERIAL, null,
            "owner of sequence '" + d.name() + "'", deadline), deadline).applied();
  }

  @Override
  public String datacenter() {
    return dc;
  }

  // ---------------------------------------------------------------------------------------------
  // Advance, floors, state

  @Override
  public AdvanceReceipt advance(SequenceDefinition d, long floor) {
    long deadline = deadline();
    for (int stripe = 0; stripe < d.stripes(); stripe++) {
      advanceGlobal(d, stripe, d.firstIndexAbove(stripe, floor), deadline);
    }
    // Then every datacenter's pools, each through a coordinator of its own datacenter (its Paxos scope),
    // and last its floor log: a server that has read the log entry reserves only from trimmed pools.
    Map<String, Long> versions = new TreeMap<>();
    for (String datacenter : datacenters()) {
      Node coordinator = datacenter.equals(dc) ? null : coordinatorIn(datacenter, d);
      for (int stripe = 0; stripe < d.stripes(); stripe++) {
        trimPool(d, stripe, datacenter, coordinator, floor, deadline);
      }
      versions.put(datacenter, appendToFloorLog(datacenter, coordinator, d.name(), floor, deadline));
    }
    return new AdvanceReceipt(versions);
  }

  /** The newest changes a floor log keeps; a server further behind re-reads every floor it holds. */
  static final int FLOOR_LOG_CAPACITY = 256;

  /**
   * Appends "sequence's floor is now floor" to a datacenter's floor log; returns its version. Appending
   * twice after an ambiguous outcome is harmless (floors only rise), so this simply retries.
   */
  private long appendToFloorLog(String datacenter, Node coordinator, String sequence, long floor, long deadline) {
    Attempts<Long> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      Row row = serialRead(st().selectLog.bind(datacenter), ConsistencyLevel.LOCAL_SERIAL, coordinator,
          datacenter + "'s floor log", deadline);
      UUID current = row == null ? null : row.getUuid("op");
      if (attempts.mine(current)) {
        return attempts.effect(current);
      }
      long version = row == null ? 1 : row.getLong("version") + 1;
      List<String> changes = new ArrayList<>(row == null ? List.of() : row.getList("changes", String.class));
      changes.add(version + " " + floor + " " + sequence);
      while (changes.size() > FLOOR_LOG_CAPACITY) {
        changes.remove(0);
      }
      UUID op = attempts.next(version, current);
      BoundStatement cas = row == null
          ? local(st().insertLog.bind(datacenter, version, changes, op))
          : local(st().updateLog.bind(version, changes, op, datacenter, current));
      if (coordinator != null) {
        cas = cas.setNode(coordinator);
      }
      CasResult result = cas(poolTier, CasKind.FLOOR_LOG, cas, op, current, attempts,
          () -> serialRead(st().selectLog.bind(datacenter), ConsistencyLevel.LOCAL_SERIAL, coordinator,
              datacenter + "'s floor log", deadline), deadline);
      if (result.applied()) {
        return attempts.effect(result.op());
      }
      backoff(attempt, deadline, "appending to " + datacenter + "'s floor log");
    }
  }

  @Override
  public FloorLog floorLog(long afterVersion) {
    // A plain local read of a LOCAL_SERIAL row: it may miss a commit in progress, which the next read
    // shows; what it reports as applied is then only lower, never wrong.
    Row row = read(st().selectLog.bind(dc), ConsistencyLevel.LOCAL_QUORUM, dc + "'s floor log");
    if (row == null) {
      return new FloorLog(0, List.of(), true);
    }
    long version = row.getLong("version");
    List<FloorLog.Change> changes = new ArrayList<>();
    long oldest = Long.MAX_VALUE;
    for (String entry : row.getList("changes", String.class)) {
      String[] f = entry.split(" ", 3);
      long v = Long.parseLong(f[0]);
      oldest = Math.min(oldest, v);
      if (v > afterVersion) {
        changes.add(new FloorLog.Change(v, f[2], Long.parseLong(f[1])));
      }
    }
    boolean complete = afterVersion >= version || oldest <= afterVersion + 1;
    return new FloorLog(Math.max(version, afterVersion), changes, complete);
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease) {
    announce(server, incarnation, appliedVersion, lease, null);
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease,
      @Nullable Duration leasesOutstanding) {
    long micros = Math.max(System.currentTimeMillis() * 1000, announcedAt.getOrDefault(server, 0L) + 1);
    // Rounded up: the advance waits that long from its read, which comes after this write.
    Long leasesMs = leasesOutstanding == null ? null
        : leasesOutstanding.toMillis() + (leasesOutstanding.toNanosPart() % 1_000_000 == 0 ? 0 : 1);
    try {
      st().session.execute(st().announce.bind(dc, server, incarnation, appliedVersion, leasesMs,
          (int) Math.min(Integer.MAX_VALUE, Math.max(1, lease.toSeconds())), micros)
          .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM));
    } catch (DriverException e) {
      throw unavailable("announcing server " + server + " in " + dc, e);
    }
    announcedAt.put(server, micros);
  }

  @Override
  public void withdraw(String server, UUID incarnation) {
    Long micros = announcedAt.remove(server);
    if (micros == null) {
      return;
    }
    try {
      st().session.execute(st().withdraw.bind(micros, dc, server).setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM));
    } catch (DriverException e) {
      throw unavailable("withdrawing server " + server + " in " + dc, e);
    }
  }

  @Override
  public List<String> unconfirmed(AdvanceReceipt receipt) {
    return confirmations(receipt).pending();
  }

  @Override
  public Confirmations confirmations(AdvanceReceipt receipt) {
    List<String> out = new ArrayList<>();
    long[] leasesMs = {0};
    boolean[] unknown = {false};
    receipt.versions().forEach((datacenter, version) -> {
      BoundStatement select = st().selectServers.bind(datacenter).setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM);
      if (!datacenter.equals(dc)) {
        select = select.setNode(coordinatorIn(datacenter, "confirm an advance"));
      }
      plainReads.increment();
      try {
        for (Row r : st().session.execute(select)) {
          if (r.getLong("applied") < version) {
            out.add(datacenter + "/" + r.getString("server"));
          }
          if (r.isNull("leases_ms")) {
            unknown[0] = true; // a server of an older version: the advance waits a whole lease lifetime
          } else {
            leasesMs[0] = Math.max(leasesMs[0], r.getLong("leases_ms"));
          }
        }
      } catch (DriverException e) {
        throw unavailable("reading the servers of " + datacenter, e);
      }
    });
    return new Confirmations(out, unknown[0] ? Optional.empty() : Optional.of(Duration.ofMillis(leasesMs[0])));
  }

  private void advanceGlobal(SequenceDefinition d, int stripe, long minIndex, long deadline) {
    // Raising the cursor to at least minIndex: retried until the row shows it, whatever the outcomes.
    Attempts<Void> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      Row row = serialRead(st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.SERIAL, null,
          "global cursor of sequence '" + d.name() + "' stripe " + stripe, deadline);
      if (row == null) {
        requireDefinition(d);
      }
      long reserved = row == null ? 0 : row.getLong("reserved");
      if (reserved >= minIndex) {
        return;
      }
      UUID current = row == null ? null : row.getUuid("op");
      UUID op = attempts.next(null, current);
      BoundStatement cas = row == null
          ? global(st().insertGlobal.bind(d.name(), stripe, minIndex, op))
          : global(st().updateGlobal.bind(minIndex, op, d.name(), stripe, current));
      if (cas(globalTier, CasKind.GLOBAL_ADVANCE, cas, op, current, attempts, () -> serialRead(
          st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.SERIAL, null,
          "global cursor of sequence '" + d.name() + "' stripe " + stripe, deadline), deadline).applied()) {
        idsDropped.add(minIndex - reserved);
        return;
      }
      backoff(attempt, deadline, "advancing the global cursor of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  private void trimPool(SequenceDefinition d, int stripe, String datacenter, Node coordinator, long floor,
      long deadline) {
    // A removal that is idempotent in effect (cut at the floor): retried until the row shows it.
    Attempts<Void> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      PoolRow pool = readPool(d, stripe, datacenter, coordinator, deadline);
      if (pool == null) {
        // Never refilled. A refill may still have taken its block from the global cursor before the advance
        // moved it: the row is created with the floor, so that its append reads the floor and cuts at it.
        UUID op = attempts.next(null, null);
        BoundStatement insert = local(st().insertPool.bind(d.name(), stripe, datacenter, List.of(), floor,
            List.of(), Long.MIN_VALUE, op));
        if (coordinator != null) {
          insert = insert.setNode(coordinator);
        }
        if (cas(poolTier, CasKind.POOL_TRIM, insert, op, null, attempts,
            () -> readPoolRow(d, stripe, datacenter, coordinator, deadline), deadline).applied()) {
          return;
        }
        backoff(attempt, deadline, "creating " + datacenter + "'s pool of sequence '" + d.name() + "' stripe "
            + stripe + " at its floor");
        continue;
      }
      long newFloor = pool.floor == null ? floor : Math.max(pool.floor, floor);
      List<Long> kept = trim(pool.blocks, d.firstIndexAbove(stripe, newFloor));
      if (pool.floor != null && pool.floor >= floor && kept.equals(pool.blocks)) {
        return;
      }
      UUID op = attempts.next(null, pool.op);
      BoundStatement cas = local(st().updatePool.bind(kept, newFloor, pool.taken, op, d.name(), stripe, datacenter,
          pool.op));
      if (coordinator != null) {
        cas = cas.setNode(coordinator);
      }
      if (cas(poolTier, CasKind.POOL_TRIM, cas, op, pool.op, attempts,
          () -> readPoolRow(d, stripe, datacenter, coordinator, deadline), deadline).applied()) {
        idsDropped.add(size(pool.blocks) - size(kept));
        return;
      }
      backoff(attempt, deadline, "trimming " + datacenter + "'s pool of sequence '" + d.name() + "' stripe " + stripe);
    }
  }

  /**
   * The datacenters that hold the keyspace (its replication), not those that merely have nodes: a
   * datacenter with no replica has no pools to trim and no rows to read. Never a guess: an advance that
   * covered fewer datacenters than hold the keyspace would return OK while the others still serve IDs at
   * or below the floor. The driver's schema metadata may be missing (disabled, or the keyspace filtered
   * out in a {@code datastax-java-driver} block); the replication is then read from
   * {@code system_schema.keyspaces}, and if that fails too, the operation fails and says why.
   */
  private List<String> datacenters() {
    Map<String, String> replication = st().session.getMetadata().getKeyspace(settings.keyspace())
        .map(ks -> ks.getReplication()).orElse(null);
    if (replication == null) {
      Row row = read(st().selectReplication.bind(settings.keyspace()), ConsistencyLevel.LOCAL_ONE,
          "the replication of keyspace " + settings.keyspace() + " in system_schema.keyspaces (the driver has no"
              + " schema metadata for it)");
      if (row == null) {
        throw new StoreUnavailableException("keyspace " + settings.keyspace() + " is not in"
            + " system_schema.keyspaces: cannot tell which datacenters hold it, so nothing that must cover every"
            + " datacenter (AdvanceSequence) is done");
      }
      replication = row.getMap("replication", String.class, String.class);
    }
    return replicaDatacenters(replication, st().session.getMetadata().getNodes().values().stream()
        .map(Node::getDatacenter).filter(Objects::nonNull).toList(), settings.keyspace());
  }

  /**
   * The datacenters a keyspace's replication places replicas in: the named ones with a factor above 0
   * ({@code NetworkTopologyStrategy}), or every datacenter with a node ({@code SimpleStrategy}, which
   * ignores datacenters). Fails rather than return none.
   */
  static List<String> replicaDatacenters(Map<String, String> replication, Collection<String> nodeDatacenters,
      String keyspace) {
    String strategy = replication.getOrDefault("class", "");
    TreeSet<String> dcs = new TreeSet<>();
    if (strategy.endsWith("SimpleStrategy")) {
      dcs.addAll(nodeDatacenters);
    } else {
      replication.forEach((k, v) -> {
        if (!k.equals("class") && !k.equals("replication_factor") && replicas(v) > 0) {
          dcs.add(k);
        }
      });
    }
    if (dcs.isEmpty()) {
      throw new StoreUnavailableException("keyspace " + keyspace + " has no datacenter with a replica in its"
          + " replication " + replication + ": cannot tell which datacenters to cover");
    }
    return List.copyOf(dcs);
  }

  /** A replication factor as Cassandra writes it ("3", or "3/1" with transient replicas); 1 if unreadable. */
  private static int replicas(String factor) {
    try {
      int slash = factor.indexOf('/');
      return Integer.parseInt((slash < 0 ? factor : factor.substring(0, slash)).trim());
    } catch (NumberFormatException e) {
      return 1; // named, so it holds replicas: covering a datacenter too many is safe, one too few is not
    }
  }

  private Node coordinatorIn(String datacenter, SequenceDefinition d) {
    return coordinatorIn(datacenter, "advance sequence '" + d.name() + "'");
  }

  private Node coordinatorIn(String datacenter, String what) {
    List<Node> up = new ArrayList<>();
    for (Node node : st().session.getMetadata().getNodes().values()) {
      if (datacenter.equals(node.getDatacenter()) && node.getState() == NodeState.UP
          && node.getOpenConnections() > 0) {
        up.add(node);
      }
    }
    if (up.isEmpty()) {
      throw new StoreUnavailableException("cannot " + what + ": datacenter " + datacenter
          + " has no reachable node, and its rows are written only through its own coordinators; retry"
          + " when it is back");
    }
    return up.get(ThreadLocalRandom.current().nextInt(up.size()));
  }

  @Override
  public long floor(SequenceDefinition d) {
    long floor = Long.MIN_VALUE;
    for (int stripe = 0; stripe < d.stripes(); stripe++) {
      Row row = read(st().selectPool.bind(d.name(), stripe, dc), ConsistencyLevel.LOCAL_QUORUM,
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
    return state(d, true);
  }

  /** Plain reads at LOCAL_QUORUM only: no Paxos round, so gauges cost the cluster next to nothing. */
  @Override
  public SequenceState approximateState(SequenceDefinition d) {
    return state(d, false);
  }

  private SequenceState state(SequenceDefinition d, boolean serial) {
    if (serial) {
      requireDefinition(d);
    }
    List<SequenceState.Stripe> stripes = new ArrayList<>();
    List<SequenceState.DatacenterReserve> reserves = new ArrayList<>();
    List<String> dcs = datacenters();
    List<String> unread = new ArrayList<>();
    for (int stripe = 0; stripe < d.stripes(); stripe++) {
      String what = "global cursor of sequence '" + d.name() + "' stripe " + stripe;
      Row g;
      try {
        g = serial ? serialRead(st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.SERIAL, null, what, 0)
            : read(st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.LOCAL_QUORUM, what);
      } catch (StoreUnavailableException e) {
        if (!serial) {
          throw e;
        }
        // Cut off from the other datacenters: answer from this one's replicas, and say so.
        g = read(st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.LOCAL_QUORUM, what);
        unread.add("the " + what + " at SERIAL (shown as " + dc + "'s replicas have it): " + e.getMessage());
      }
      stripes.add(new SequenceState.Stripe(stripe, g == null ? 0 : g.getLong("reserved"), d.stripeSize(stripe)));
      for (String datacenter : dcs) {
        // A plain local read: informational, and possible while other datacenters are cut off.
        Row p = read(st().selectPool.bind(d.name(), stripe, datacenter), ConsistencyLevel.LOCAL_QUORUM,
            datacenter + "'s pool of sequence '" + d.name() + "'");
        // A row an advance created at its floor before the datacenter ever refilled holds nothing, ever.
        if (p != null && !(p.getLong("taken") == 0 && p.getList("blocks", Long.class).isEmpty())) {
          reserves.add(new SequenceState.DatacenterReserve(datacenter, stripe, size(p.getList("blocks", Long.class))));
        }
      }
    }
    return new SequenceState(stripes, reserves, unread);
  }

  /**
   * Reads this store sent since it started, by kind: {@code serial} (SERIAL or LOCAL_SERIAL: a Paxos round on
   * the partition) and {@code plain} (LOCAL_QUORUM). The background work of a server (floor sync, the
   * monitor) must not grow with the number of sequences; these counters are how that is checked.
   */
  public long reads(boolean serial) {
    return serial ? serialReads.sum() : plainReads.sum();
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

  /**
   * This datacenter's consumption rate of a sequence, in IDs per second over all its stripes, as this
   * process measured it to size the pools ({@code DcRate}); negative while no stripe has a measurement.
   * No store I/O.
   */
  public double datacenterRate(SequenceDefinition d) {
    double sum = 0;
    boolean measured = false;
    for (int stripe = 0; stripe < d.stripes(); stripe++) {
      DcRate r = rates.get(stripeKey(d, stripe));
      double perSecond = r == null ? -1 : r.idsPerSecond();
      if (perSecond >= 0) {
        sum += perSecond;
        measured = true;
      }
    }
    return measured ? sum : -1;
  }

  /** This server's datacenter, whose pool {@link #state} reports among the others. */
  public String localDatacenter() {
    return dc;
  }

  /** Closes the session, or stops connecting. Idempotent. */
  @Override
  public void close() {
    closed = true;
    connector.shutdownNow();
    refillExecutor.shutdownNow();
    CompletableFuture<CqlSession> session = pendingSession;
    // Still connecting: cancelling stops the driver's attempts (and it closes what it opened). Connected:
    // close the session (a prepare in flight on the connector finds `closed` and stops).
    if (session != null && !session.cancel(false)) {
      CompletableFuture<?> unusedClosed = session.thenAccept(CqlSession::close);
    }
    ready.completeExceptionally(new StoreUnavailableException("the Cassandra store was closed"));
  }

  // ---------------------------------------------------------------------------------------------
  // CAS machinery

  /**
   * Runs one attempt of an operation: a CAS whose write carries {@code op} and is conditioned on the row
   * carrying {@code conditionedOn} (null: on the row not existing). A definite answer from Cassandra is
   * final. An unknown outcome (CAS write timeout, CAS write unknown, client timeout, any failure after
   * sending) is resolved by {@code readBack}, a read at the same serial consistency that also completes
   * any Paxos round in progress, into one of three cases:
   * <ul>
   *   <li>applied: the row carries one of this operation's op ids ({@code attempts}, every attempt's —
   *       an earlier attempt may have applied late);
   *   <li>not applied: the row still carries {@code conditionedOn};
   *   <li>ambiguous: someone else wrote the row since; this attempt may or may not have applied, and it
   *       can never apply later (its condition names an op id that never comes back).
   * </ul>
   * The caller decides what an ambiguous attempt means: a removal may be tried again (a gap at worst,
   * counted), an addition never (see {@link #appendToPool}). If the row cannot be read back before
   * {@code deadline}, the attempt stays open in {@code attempts} and this throws
   * {@link StoreUnavailableException}.
   */
  private CasResult cas(Tier tier, CasKind kind, BoundStatement statement, UUID op, UUID conditionedOn,
      Attempts<?> attempts, Supplier<Row> readBack, long deadline) {
    if (tier == globalTier) {
      beforeGlobalCas.run();
    }
    tier.attempts.increment();
    DriverException failure;
    try {
      ResultSet rs = casExecutor.execute(kind, statement, st().session::execute);
      if (rs.wasApplied()) {
        tier.applied.increment();
        return new CasResult(Outcome.APPLIED, op, false);
      }
      tier.conflicts.increment();
      return CasResult.NOT_APPLIED;
    } catch (DriverException e) {
      failure = e;
    }
    tier.unknown.increment();
    attempts.open(op);
    Row row;
    for (int attempt = 0; ; attempt++) {
      try {
        row = readBack.get();
        break;
      } catch (StoreUnavailableException readFailed) {
        try {
          backoff(attempt, deadline, "resolving an unknown compare-and-set outcome");
        } catch (StoreUnavailableException gaveUp) {
          tier.unresolved.increment();
          throw new StoreUnavailableException("a compare-and-set had an unknown outcome (" + describe(failure)
              + ") and reading it back kept failing; nothing was handed out: " + readFailed.getMessage(), failure);
        }
      }
    }
    casExecutor.afterReadBack(kind);
    UUID now = row == null ? null : row.getUuid("op");
    Outcome outcome;
    if (attempts.mine(now)) {
      outcome = Outcome.APPLIED;
      attempts.settle(now);
      tier.applied.increment();
      tier.resolvedApplied.increment();
    } else if (Objects.equals(now, conditionedOn)) {
      outcome = Outcome.NOT_APPLIED;
      attempts.settle(op);
      tier.resolvedNotApplied.increment();
    } else {
      outcome = Outcome.AMBIGUOUS;
      tier.resolvedAmbiguous.increment();
    }
    log.debug("unknown outcome of a {} compare-and-set ({}) resolved: {}", kind, describe(failure), outcome);
    return outcome == Outcome.APPLIED ? new CasResult(outcome, now) : new CasResult(outcome, null);
  }

  /** What a compare-and-set is for: named in logs, and seen by the fault-injection seam. */
  enum CasKind {
    CREATE, GLOBAL_TAKE, GLOBAL_ADVANCE, POOL_APPEND, POOL_RESERVE, POOL_TRIM, POOL_GIVE_BACK, POOL_HEAL, FLOOR_LOG,
    POOL_FENCE, OWNER
  }

  /** The three ways an attempt can end. */
  enum Outcome { APPLIED, NOT_APPLIED, AMBIGUOUS }

  /** How an attempt ended, and which op id applied (possibly an earlier attempt's). */
  private record CasResult(Outcome outcome, UUID op, boolean resolved) {
    /** Cassandra said so: the condition did not hold, nothing was written. */
    static final CasResult NOT_APPLIED = new CasResult(Outcome.NOT_APPLIED, null, false);

    CasResult(Outcome outcome, UUID op) {
      this(outcome, op, true);
    }

    boolean applied() {
      return outcome == Outcome.APPLIED;
    }
  }

  /**
   * How CAS statements are sent: the session, or a test's fault injector (a timeout reported after the
   * statement applied, a statement held back and applied after the read-back).
   */
  interface CasExecutor {
    CasExecutor DIRECT = (kind, statement, session) -> session.apply(statement);

    ResultSet execute(CasKind kind, BoundStatement statement, Function<BoundStatement, ResultSet> session);

    /** Called after the read-back that resolves an unknown outcome, before the outcome is acted on. */
    default void afterReadBack(CasKind kind) {}
  }

  /**
   * The attempts of one operation, each with the op id it wrote, the op id it was conditioned on and
   * what it would do. An attempt is open from an unknown outcome until something settles it. Confined
   * to the thread that runs the operation.
   */
  private static final class Attempts<T> {
    private final Map<UUID, Attempt<T>> all = new LinkedHashMap<>();
    private final Set<UUID> open = new LinkedHashSet<>();

    private record Attempt<T>(T effect, UUID conditionedOn) {}

    /** A new attempt: its op id. */
    UUID next(T effect, UUID conditionedOn) {
      return next(UUID.randomUUID(), effect, conditionedOn);
    }

    /** A new attempt whose op id the caller chose. */
    UUID next(UUID op, T effect, UUID conditionedOn) {
      all.put(op, new Attempt<>(effect, conditionedOn));
      return op;
    }

    boolean mine(UUID op) {
      return op != null && all.containsKey(op);
    }

    T effect(UUID op) {
      return all.get(op).effect();
    }

    void open(UUID op) {
      open.add(op);
    }

    void settle(UUID op) {
      open.remove(op);
    }

    /**
     * A fresh read of the row: an open attempt whose IDs it still shows, when the row no longer carries
     * the op id that attempt was conditioned on, never applied and never will.
     */
    void seen(UUID rowOp, Predicate<T> stillThere) {
      open.removeIf(op -> {
        Attempt<T> a = all.get(op);
        return !Objects.equals(rowOp, a.conditionedOn()) && stillThere.test(a.effect());
      });
    }

    /** The effects of the attempts still open. */
    List<T> open() {
      List<T> out = new ArrayList<>();
      for (UUID op : open) {
        out.add(all.get(op).effect());
      }
      return out;
    }
  }

  /**
   * The record, in a pool row, of the DC blocks appended to it: the last {@link #CAPACITY} blocks as
   * {@code [from, to)} index pairs, and {@code below}, the highest end of any block dropped from the
   * record. A block is known appended if it is listed; a block not listed whose end is at or below
   * {@code below} may have been appended and dropped from the list, so it is never appended again.
   * Blocks come from the global cursor in nearly increasing order, so that case needs
   * {@link #CAPACITY} later blocks to be appended before an earlier one: rare, and a counted loss.
   */
  record Appended(List<Long> pairs, long below) {
    static final int CAPACITY = 32;
    static final Appended EMPTY = new Appended(List.of(), Long.MIN_VALUE);

    Appended {
      pairs = List.copyOf(pairs);
    }

    boolean contains(long from, long to) {
      for (int i = 0; i < pairs.size(); i += 2) {
        if (pairs.get(i) == from && pairs.get(i + 1) == to) {
          return true;
        }
      }
      return false;
    }

    boolean mayContain(long from, long to) {
      return to <= below;
    }

    Appended with(long from, long to) {
      List<Long> next = new ArrayList<>(pairs);
      long newBelow = below;
      while (next.size() >= 2 * CAPACITY) {
        newBelow = Math.max(newBelow, next.get(1));
        next.remove(0);
        next.remove(0);
      }
      next.add(from);
      next.add(to);
      return new Appended(next, newBelow);
    }
  }

  private Row read(BoundStatement s, ConsistencyLevel cl, String what) {
    plainReads.increment();
    try {
      return st().session.execute(s.setConsistencyLevel(cl)).one();
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
      serialReads.increment();
      try {
        return st().session.execute(st).one();
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
    return serialRead(st().selectPool.bind(d.name(), stripe, datacenter), ConsistencyLevel.LOCAL_SERIAL,
        coordinator, datacenter + "'s pool of sequence '" + d.name() + "' stripe " + stripe, deadline);
  }

  private PoolRow readPool(SequenceDefinition d, int stripe, String datacenter, Node coordinator, long deadline) {
    Row r = readPoolRow(d, stripe, datacenter, coordinator, deadline);
    if (r == null) {
      return null;
    }
    Appended appended = r.isNull("appended") ? Appended.EMPTY : new Appended(r.getList("appended", Long.class),
        r.isNull("appended_below") ? Long.MIN_VALUE : r.getLong("appended_below"));
    return new PoolRow(List.copyOf(r.getList("blocks", Long.class)),
        r.isNull("floor") ? null : r.getLong("floor"), r.isNull("taken") ? 0 : r.getLong("taken"),
        appended, r.isNull("owner_epoch") ? NOT_STRICT : r.getLong("owner_epoch"), r.getUuid("op"));
  }

  private record PoolRow(List<Long> blocks, Long floor, long taken, Appended appended, long ownerEpoch, UUID op) {
    /** The first index of the stripe above the pool's floor: what the pool may still hold. */
    static long minIndex(PoolRow pool, SequenceDefinition d, int stripe) {
      return pool == null || pool.floor == null ? 0 : d.firstIndexAbove(stripe, pool.floor);
    }
  }

  private DcRate rate(SequenceDefinition d, int stripe) {
    return rates.computeIfAbsent(stripeKey(d, stripe),
        k -> new DcRate(settings.isolationRunway(), settings.poolRefillStep()));
  }

  /** The key of a (sequence, stripe) in this process's maps of rates and refills in flight. */
  private static String stripeKey(SequenceDefinition d, int stripe) {
    return d.name() + '\u0000' + stripe;
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

  /** Whether any index of {@code [from, to)} is in the intervals. */
  static boolean overlaps(List<Long> blocks, long from, long to) {
    for (int i = 0; i < blocks.size(); i += 2) {
      if (blocks.get(i) < to && from < blocks.get(i + 1)) {
        return true;
      }
    }
    return false;
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

  /**
   * The most each row was seen holding by this process: a pool's {@code taken} (IDs taken from it, ever) and
   * the global cursor's {@code reserved} only grow, so a read that shows less means the store forgot writes it
   * acknowledged. That happens when a replica crashes in {@code commitlog_sync: periodic} (it acknowledges
   * before its commit log is synced, and replays only to the last sync marker) and no other replica holds the
   * write: a datacenter of one replica, or a quorum that crashed together; or after a restore from an older
   * backup. A row that forgot a reservation would hand the same IDs out again, so it is moved past what this
   * process saw before anything more is taken from it. A process that never saw the lost writes cannot tell:
   * this is a second line, the first is a Cassandra that keeps what it acknowledged (docs/operations.md).
   * Thread-safe; values only grow.
   */
  private static final class HighWater {
    private final ConcurrentMap<String, Long> seen = new ConcurrentHashMap<>();

    void note(String key, long value) {
      seen.merge(key, value, Math::max);
    }

    /** What this process saw {@code key} hold, if more than {@code now}; else {@link Long#MIN_VALUE}. */
    long above(String key, long now) {
      Long s = seen.get(key);
      return s != null && s > now ? s : Long.MIN_VALUE;
    }
  }

  /** Counters of one tier. */
  private static final class Tier {
    final LongAdder attempts = new LongAdder();
    final LongAdder applied = new LongAdder();
    final LongAdder conflicts = new LongAdder();
    final LongAdder unknown = new LongAdder();
    final LongAdder resolvedApplied = new LongAdder();
    final LongAdder resolvedNotApplied = new LongAdder();
    final LongAdder resolvedAmbiguous = new LongAdder();
    final LongAdder unresolved = new LongAdder();
    /** Open attempts later found applied (their IDs used after all). */
    final LongAdder recovered = new LongAdder();
    final LongAdder idsLost = new LongAdder();
    /** Rows found holding less than this process had seen them hold (see {@link HighWater}). */
    final LongAdder regressions = new LongAdder();
    /** The most each row of the tier was seen holding, by (sequence, stripe). */
    final HighWater highWater = new HighWater();

    CasStats snapshot() {
      return new CasStats(attempts.sum(), applied.sum(), conflicts.sum(), unknown.sum(),
          resolvedApplied.sum(), resolvedNotApplied.sum(), resolvedAmbiguous.sum(), unresolved.sum(),
          recovered.sum(), idsLost.sum(), regressions.sum());
    }
  }
}
