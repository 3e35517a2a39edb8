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
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.Confirmations;
import dev.idgen.core.FloorLog;
import dev.idgen.core.IdRange;
import dev.idgen.core.OwnerRecord;
import dev.idgen.core.RangeStore;
import dev.idgen.core.Reservation;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceState;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.core.StoredSequence;
import dev.idgen.core.WallClock;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
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
 * <p>Where things live: this class is the facade, and it owns the connection (connecting, the schema
 * checks, preparing the statements, closing). The work is done in rooms of this package, one concern each:
 * {@link CasOutcomes} (reads, compare-and-set attempts and the resolution of unknown outcomes, back-off,
 * counters), {@link PoolTier} (the DC pools: reserve, refill, the append record, give-back, heal, trim),
 * {@link GlobalTier} (the global cursors), {@link Definitions}, {@link OwnerTable} (owners of strict
 * sequences), {@link FloorLogTable} (floor logs, announcements, confirmations), {@link ReservationTable}
 * (ranges reserved for one caller) and {@link Datacenters}
 * (which datacenters hold the keyspace, and their coordinators). Each says how it is thread-safe.
 *
 * <p>Threads: thread-safe; all coordination between processes happens in Cassandra. Within a process,
 * at most one refill per pool is in flight; it runs on the pool tier's own daemon thread pool, and callers
 * that find the pool empty wait for it. The connection is made on the driver's threads and one connector
 * thread of the store's; it is published through a volatile field, read by every room at each call.
 */
@ThreadSafe
public final class CassandraRangeStore implements RangeStore {
  private static final Logger log = LoggerFactory.getLogger(CassandraRangeStore.class);

  private final CassandraSettings settings;
  private final String dc;
  private final CasOutcomes outcomes;
  private final Datacenters datacenters;
  private final Definitions definitions;
  private final GlobalTier globalTier;
  private final PoolTier pools;
  private final OwnerTable owners;
  private final FloorLogTable floorLogs;
  private final ReservationTable reservationTable;
  /** A seam for fault-injection tests: runs just before each global CAS is sent. */
  volatile Runnable beforeGlobalCas = () -> {};
  /** A seam for fault-injection tests: how each CAS statement is sent, and what follows a read-back. */
  volatile CasExecutor casExecutor = CasExecutor.DIRECT;
  /**
   * A seam for fault-injection tests: runs before each read at SERIAL or LOCAL_SERIAL, given which; may throw
   * (a read that fails, as when this datacenter is cut off from the others).
   */
  volatile Consumer<ConsistencyLevel> beforeSerialRead = serial -> {};
  /** A seam for tests: the wall clock of the announcements' write timestamps (a clock stepped ahead). */
  volatile WallClock announceClock = WallClock.system();

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
    outcomes = new CasOutcomes(settings, this::st, () -> casExecutor, () -> beforeGlobalCas, () -> beforeSerialRead);
    datacenters = new Datacenters(settings, outcomes);
    definitions = new Definitions(settings, outcomes, datacenters);
    globalTier = new GlobalTier(outcomes, definitions);
    pools = new PoolTier(settings, outcomes, globalTier);
    owners = new OwnerTable(settings, outcomes);
    floorLogs = new FloorLogTable(settings, outcomes, datacenters, () -> announceClock);
    reservationTable = new ReservationTable(outcomes, globalTier);
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
          : new StoreUnavailableException("cannot connect to Cassandra: " + CasOutcomes.describe(e), e);
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
            + settings.localDatacenter() + "): " + CasOutcomes.describe(cause), cause);
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
              + " applied? see idgen.cassandra.create-schema): " + CasOutcomes.describe(de)
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
  // Definitions (Definitions)

  @Override
  public void create(SequenceDefinition d) {
    definitions.create(d);
  }

  @Override
  public Optional<SequenceDefinition> find(String name) {
    return findStored(name).map(StoredSequence::definition);
  }

  @Override
  public Optional<StoredSequence> findStored(String name) {
    return definitions.findStored(name);
  }

  @Override
  public Optional<StoredSequence> findCurrent(String name) {
    return definitions.findCurrent(name);
  }

  /**
   * The definition row first (compare-and-set at SERIAL on its op id, the version checked), then an entry in
   * every datacenter's floor log, each through a coordinator of its own datacenter, as an advance appends
   * its floor, with the definition's new version: a server that reads the entry reads the definition again
   * ({@code findCurrent}, at SERIAL) and confirms only once it shows that version. A datacenter
   * with no reachable node fails the call ({@link dev.idgen.core.StoreUnavailableException}); the change is
   * then in force in the definition, and the same change again (the row already shows it) logs it.
   */
  @Override
  public AdvanceReceipt redefine(StoredSequence expected, StoredSequence next) {
    long deadline = outcomes.deadline();
    definitions.replace(expected, next, deadline);
    SequenceDefinition d = next.definition();
    Map<String, Long> versions = new TreeMap<>();
    for (String datacenter : datacenters.toCover()) {
      Node coordinator = datacenter.equals(dc) ? null : datacenters.coordinatorIn(datacenter, d);
      versions.put(datacenter, floorLogs.appendDefinitionChange(datacenter, coordinator, d.name(), next.version(),
          deadline));
    }
    return new AdvanceReceipt(versions);
  }

  @Override
  public List<SequenceDefinition> list(String afterName, int limit) {
    return listStored(afterName, limit).stream().map(StoredSequence::definition).toList();
  }

  @Override
  public List<StoredSequence> listStored(String afterName, int limit) {
    return definitions.listStored(afterName, limit);
  }

  // ---------------------------------------------------------------------------------------------
  // Node blocks from the DC pool (PoolTier)

  @Override
  public IdRange reserve(SequenceDefinition d, int stripe, long size) {
    return pools.reserve(d, stripe, size, PoolTier.NOT_STRICT);
  }

  /**
   * A strict sequence's pool is written only by its owner of the highest epoch: every write is conditioned
   * on the row's op, so a fence (a write of a higher epoch) between an owner's read and its write makes the
   * write fail, and the next read shows the higher epoch ({@link dev.idgen.core.NotOwnerException}). Appends
   * check the same way ({@code PoolTier.appendToPool}). Nothing is given back to a strict pool, so it only
   * ever holds blocks above everything taken from it.
   */
  @Override
  public IdRange reserveStrict(SequenceDefinition d, long epoch, long size) {
    if (!d.strict() || !d.homeDatacenter().equals(dc)) {
      throw new IllegalArgumentException("sequence '" + d.name() + "' is not a strict sequence of " + dc);
    }
    if (epoch < 1) {
      throw new IllegalArgumentException("epoch: " + epoch + " (expected: >= 1)");
    }
    return pools.reserve(d, 0, size, epoch);
  }

  /** See {@code PoolTier.giveBack}: an addition, retried only after a definite "not applied". */
  @Override
  public long giveBack(SequenceDefinition d, int stripe, List<IdRange> ranges) {
    return pools.giveBack(d, stripe, ranges);
  }

  // ---------------------------------------------------------------------------------------------
  // Ranges reserved for one caller (ReservationTable, GlobalTier)

  /**
   * Taken from the global cursor, the top of the sequence for every datacenter: see {@code ReservationTable}
   * and docs/design.md, "Reserving a contiguous range".
   */
  @Override
  public Reservation reserveRange(SequenceDefinition d, long count, String requestId, String reservedBy) {
    if (count < 1) {
      throw new IllegalArgumentException("count: " + count + " (expected: >= 1)");
    }
    return reservationTable.reserve(d, count, requestId, reservedBy);
  }

  @Override
  public List<Reservation> reservations(SequenceDefinition d, long afterFirst, int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit: " + limit + " (expected: >= 1)");
    }
    return reservationTable.page(d, afterFirst, limit);
  }

  /**
   * Records a reservation made by another store (a move off the embedded store), with its request id, so that
   * listings show it and a retry of its request returns it. It takes no IDs: the caller first advances the
   * sequence past {@code r.last()}. Returns the record the request id holds, which is another one if the
   * request id was already used in this keyspace.
   */
  public Reservation importReservation(Reservation r) {
    return reservationTable.importRecord(r);
  }

  // ---------------------------------------------------------------------------------------------
  // Owners of strict sequences (OwnerTable)

  @Override
  public Optional<OwnerRecord> owner(SequenceDefinition d) {
    return owners.owner(d);
  }

  @Override
  public boolean replaceOwner(SequenceDefinition d, @Nullable OwnerRecord expected, OwnerRecord next) {
    return owners.replaceOwner(d, expected, next);
  }

  @Override
  public String datacenter() {
    return dc;
  }

  // ---------------------------------------------------------------------------------------------
  // Advance (GlobalTier, then every datacenter's PoolTier rows and FloorLogTable), floors, state

  @Override
  public AdvanceReceipt advance(SequenceDefinition d, long floor) {
    long deadline = outcomes.deadline();
    for (int stripe = 0; stripe < d.stripes(); stripe++) {
      globalTier.advance(d, stripe, d.firstIndexAbove(stripe, floor), deadline);
    }
    // Then every datacenter's pools, each through a coordinator of its own datacenter (its Paxos scope),
    // and last its floor log: a server that has read the log entry reserves only from trimmed pools.
    Map<String, Long> versions = new TreeMap<>();
    for (String datacenter : datacenters.toCover()) {
      Node coordinator = datacenter.equals(dc) ? null : datacenters.coordinatorIn(datacenter, d);
      for (int stripe = 0; stripe < d.stripes(); stripe++) {
        pools.trimPool(d, stripe, datacenter, coordinator, floor, deadline);
      }
      versions.put(datacenter, floorLogs.append(datacenter, coordinator, d.name(), floor, deadline));
    }
    return new AdvanceReceipt(versions);
  }

  @Override
  public FloorLog floorLog(long afterVersion) {
    return floorLogs.floorLog(afterVersion);
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease) {
    announce(server, incarnation, appliedVersion, lease, null);
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease,
      @Nullable Duration leasesOutstanding) {
    floorLogs.announce(server, incarnation, appliedVersion, lease, lease, leasesOutstanding);
  }

  @Override
  public void announce(String server, UUID incarnation, long appliedVersion, Duration lease, Duration keep,
      Duration leasesOutstanding) {
    floorLogs.announce(server, incarnation, appliedVersion, lease, keep, leasesOutstanding);
  }

  @Override
  public void withdraw(String server, UUID incarnation) {
    floorLogs.withdraw(server, incarnation);
  }

  @Override
  public List<String> unconfirmed(AdvanceReceipt receipt) {
    return confirmations(receipt).pending();
  }

  @Override
  public Confirmations confirmations(AdvanceReceipt receipt) {
    return floorLogs.confirmations(receipt);
  }

  @Override
  public long floor(SequenceDefinition d) {
    return pools.floor(d);
  }

  @Override
  public Duration floorRefreshInterval() {
    return settings.floorRefresh();
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
      definitions.require(d);
    }
    List<SequenceState.Stripe> stripes = new ArrayList<>();
    List<SequenceState.DatacenterReserve> reserves = new ArrayList<>();
    List<String> dcs = datacenters.all();
    List<String> unread = new ArrayList<>();
    for (int stripe = 0; stripe < d.stripes(); stripe++) {
      String what = "global cursor of sequence '" + d.name() + "' stripe " + stripe;
      Row g;
      try {
        g = serial ? outcomes.serialRead(outcomes.st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.SERIAL, null, what, 0)
            : outcomes.read(outcomes.st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.LOCAL_QUORUM, what);
      } catch (StoreUnavailableException e) {
        if (!serial) {
          throw e;
        }
        // Cut off from the other datacenters: answer from this one's replicas, and say so.
        g = outcomes.read(outcomes.st().selectGlobal.bind(d.name(), stripe), ConsistencyLevel.LOCAL_QUORUM, what);
        unread.add("the " + what + " at SERIAL (shown as " + dc + "'s replicas have it): " + e.getMessage());
      }
      stripes.add(new SequenceState.Stripe(stripe, g == null ? 0 : g.getLong("reserved"), d.stripeSize(stripe)));
      for (String datacenter : dcs) {
        // A plain local read: informational, and possible while other datacenters are cut off.
        Row p = outcomes.read(outcomes.st().selectPool.bind(d.name(), stripe, datacenter), ConsistencyLevel.LOCAL_QUORUM,
            datacenter + "'s pool of sequence '" + d.name() + "'");
        // A row an advance created at its floor before the datacenter ever refilled holds nothing, ever.
        if (p != null && !(p.getLong("taken") == 0 && p.getList("blocks", Long.class).isEmpty())) {
          reserves.add(new SequenceState.DatacenterReserve(datacenter, stripe, Blocks.size(p.getList("blocks", Long.class))));
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
    return serial ? outcomes.serialReads.sum() : outcomes.plainReads.sum();
  }

  /** What the two tiers' compare-and-set operations did since the store started. */
  public CasStats globalStats() {
    return outcomes.globalTier.snapshot();
  }

  /** What this datacenter's pool operations did since the store started. */
  public CasStats poolStats() {
    return outcomes.poolTier.snapshot();
  }

  /** IDs dropped by advances (below a floor): deliberate, not lost. */
  public long idsDropped() {
    return outcomes.idsDropped.sum();
  }

  /**
   * This datacenter's consumption rate of a sequence, in IDs per second over all its stripes, as this
   * process measured it to size the pools ({@code DcRate}); negative while no stripe has a measurement.
   * No store I/O.
   */
  public double datacenterRate(SequenceDefinition d) {
    return pools.datacenterRate(d);
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
    pools.close();
    CompletableFuture<CqlSession> session = pendingSession;
    // Still connecting: cancelling stops the driver's attempts (and it closes what it opened). Connected:
    // close the session (a prepare in flight on the connector finds `closed` and stops).
    if (session != null && !session.cancel(false)) {
      CompletableFuture<?> unusedClosed = session.thenAccept(CqlSession::close);
    }
    ready.completeExceptionally(new StoreUnavailableException("the Cassandra store was closed"));
  }


  /** What a compare-and-set is for: named in logs, and seen by the fault-injection seam. */
  enum CasKind {
    CREATE, DEFINITION, GLOBAL_TAKE, GLOBAL_ADVANCE, POOL_APPEND, POOL_RESERVE, POOL_TRIM, POOL_GIVE_BACK, POOL_HEAL,
    FLOOR_LOG, POOL_FENCE, OWNER, GLOBAL_RESERVE, RESERVATION
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
}
