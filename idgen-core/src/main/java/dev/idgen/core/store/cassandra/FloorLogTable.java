package dev.idgen.core.store.cassandra;

import static dev.idgen.core.store.cassandra.CasOutcomes.backoff;
import static dev.idgen.core.store.cassandra.CasOutcomes.local;
import static dev.idgen.core.store.cassandra.CasOutcomes.unavailable;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.core.AdvanceReceipt;
import dev.idgen.core.Confirmations;
import dev.idgen.core.FloorLog;
import dev.idgen.core.WallClock;
import dev.idgen.core.store.cassandra.CasOutcomes.Attempts;
import dev.idgen.core.store.cassandra.CasOutcomes.CasResult;
import dev.idgen.core.store.cassandra.CassandraRangeStore.CasKind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How an advance reaches every server: each datacenter's floor log (table {@code floor_log}, one row per
 * datacenter, in that datacenter's Paxos scope), the servers' announcements of the log version they applied
 * (table {@code servers}, plain writes with a TTL of {@code keep}: garbage collection only, liveness is the
 * heartbeat's), and the confirmations an advance reads back from them.
 *
 * <p>Each process announces in a row of its own, keyed {@code name#incarnation}: announcements are plain writes
 * whose timestamps come from this process's wall clock, and a process whose clock ran ahead (stepped, then put
 * back) leaves cells, live or expired into tombstones, that would shadow every later write to the same row
 * until the real time catches up. Had a restart under the same name written there, its announcements would
 * vanish and an advance would not wait for a server that serves. Within one process the timestamps only rise,
 * so a step back of its own clock hides nothing. A process's first announcement retires the rows of earlier
 * processes of its name, each deleted at its own timestamp ({@link #retireEarlier}), so that advances do not
 * wait a lease for a process that crashed and came back. Rows of older versions, keyed by the name alone,
 * are read, and retired, the same way.
 * Why an advance waits for them: docs/design.md, "Existing IDs and AdvanceSequence".
 *
 * <p>Threads: thread-safe. Appends to a log race in Cassandra (compare-and-set on the row's op id, retried
 * with back-off; appending twice is harmless, floors only rise). The process state is {@link #announcedAt}
 * and {@link #retired}, concurrent: a server's announcements come from its one announcing thread, and a
 * withdrawal deletes with the timestamp of this process's last announcement (which may be ahead of the
 * clock, if the clock was stepped back since).
 */
@ThreadSafe
final class FloorLogTable {
  private static final Logger log = LoggerFactory.getLogger(FloorLogTable.class);
  /** The newest changes a floor log keeps; a server further behind re-reads every floor it holds. */
  static final int FLOOR_LOG_CAPACITY = 256;

  private final String dc;
  private final CasOutcomes outcomes;
  private final Datacenters datacenters;
  /** The write timestamp of this process's last announcement per row: the next one is above it. */
  private final ConcurrentMap<String, Long> announcedAt = new ConcurrentHashMap<>();
  /** This process's rows that have retired the rows of earlier processes of their name. */
  private final Set<String> retired = ConcurrentHashMap.newKeySet();
  /** The wall clock the announcements' write timestamps come from. */
  private final Supplier<WallClock> wall;

  FloorLogTable(CassandraSettings settings, CasOutcomes outcomes, Datacenters datacenters, Supplier<WallClock> wall) {
    this.dc = settings.localDatacenter();
    this.outcomes = outcomes;
    this.datacenters = datacenters;
    this.wall = wall;
  }

  /** The row of one process's announcements: its own, whatever another process of the same name wrote. */
  static String rowKey(String server, UUID incarnation) {
    return server + "#" + incarnation;
  }

  /**
   * Appends "sequence's floor is now floor" to a datacenter's floor log; returns its version. Appending
   * twice after an ambiguous outcome is harmless (floors only rise), so this simply retries.
   */
  long append(String datacenter, Node coordinator, String sequence, long floor, long deadline) {
    return append(datacenter, coordinator, sequence, floor, 0, deadline);
  }

  /**
   * {@link #append(String, Node, String, long, long)} of "the sequence's definition changed to version
   * {@code definitionVersion}" ({@link FloorLog#DEFINITION_CHANGED}). The entry is {@code "v floor name
   * definitionVersion"}: names hold no space, and entries of three fields (an advance, or a change logged before
   * versions were) read as before. Appending twice is harmless too: a server reads the definition again.
   */
  long appendDefinitionChange(String datacenter, Node coordinator, String sequence, long definitionVersion,
      long deadline) {
    return append(datacenter, coordinator, sequence, FloorLog.DEFINITION_CHANGED, definitionVersion, deadline);
  }

  private long append(String datacenter, Node coordinator, String sequence, long floor, long definitionVersion,
      long deadline) {
    Attempts<Long> attempts = new Attempts<>();
    for (int attempt = 0; ; attempt++) {
      Row row = outcomes.serialRead(outcomes.st().selectLog.bind(datacenter), ConsistencyLevel.LOCAL_SERIAL,
          coordinator, datacenter + "'s floor log", deadline);
      UUID current = row == null ? null : row.getUuid("op");
      if (attempts.mine(current)) {
        return attempts.effect(current);
      }
      long version = row == null ? 1 : row.getLong("version") + 1;
      List<String> changes = new ArrayList<>(row == null ? List.of() : row.getList("changes", String.class));
      changes.add(entry(new FloorLog.Change(version, sequence, floor, definitionVersion)));
      while (changes.size() > FLOOR_LOG_CAPACITY) {
        changes.remove(0);
      }
      UUID op = attempts.next(version, current);
      BoundStatement cas = row == null
          ? local(outcomes.st().insertLog.bind(datacenter, version, changes, op))
          : local(outcomes.st().updateLog.bind(version, changes, op, datacenter, current));
      if (coordinator != null) {
        cas = cas.setNode(coordinator);
      }
      CasResult result = outcomes.cas(outcomes.poolTier, CasKind.FLOOR_LOG, cas, op, current, attempts,
          () -> outcomes.serialRead(outcomes.st().selectLog.bind(datacenter), ConsistencyLevel.LOCAL_SERIAL,
              coordinator, datacenter + "'s floor log", deadline), deadline);
      if (result.applied()) {
        return attempts.effect(result.op());
      }
      backoff(attempt, deadline, "appending to " + datacenter + "'s floor log");
    }
  }

  /**
   * A change as the log row keeps it: {@code "version floor name"}, and a definition change's version after
   * them when it has one (names hold no space).
   */
  static String entry(FloorLog.Change c) {
    return c.version() + " " + c.floor() + " " + c.sequence()
        + (c.definitionVersion() > 0 ? " " + c.definitionVersion() : "");
  }

  /** {@link #entry}, read back; an entry of three fields has no definition version (0). */
  static FloorLog.Change change(String entry) {
    String[] f = entry.split(" ", 4);
    return new FloorLog.Change(Long.parseLong(f[0]), f[2], Long.parseLong(f[1]),
        f.length == 4 ? Long.parseLong(f[3]) : 0);
  }

  FloorLog floorLog(long afterVersion) {
    // A plain local read of a LOCAL_SERIAL row: it may miss a commit in progress, which the next read
    // shows; what it reports as applied is then only lower, never wrong.
    Row row = outcomes.read(outcomes.st().selectLog.bind(dc), ConsistencyLevel.LOCAL_QUORUM, dc + "'s floor log");
    if (row == null) {
      return new FloorLog(0, List.of(), true);
    }
    long version = row.getLong("version");
    List<FloorLog.Change> changes = new ArrayList<>();
    long oldest = Long.MAX_VALUE;
    for (String entry : row.getList("changes", String.class)) {
      FloorLog.Change c = change(entry);
      oldest = Math.min(oldest, c.version());
      if (c.version() > afterVersion) {
        changes.add(c);
      }
    }
    boolean complete = afterVersion >= version || oldest <= afterVersion + 1;
    return new FloorLog(Math.max(version, afterVersion), changes, complete);
  }

  /**
   * Writes the announcement with a TTL of {@code keep}, the lease in {@code lease_ms}, and a write timestamp
   * above this process's previous one for the name: the heartbeat that {@link #confirmations} reads back.
   */
  void announce(String server, UUID incarnation, long appliedVersion, Duration lease, Duration keep,
      @Nullable Duration leasesOutstanding) {
    String row = rowKey(server, incarnation);
    long micros = Math.max(wall.get().millis() * 1000, announcedAt.getOrDefault(row, 0L) + 1);
    // Rounded up: the advance waits that long from its read, which comes after this write.
    Long leasesMs = leasesOutstanding == null ? null
        : leasesOutstanding.toMillis() + (leasesOutstanding.toNanosPart() % 1_000_000 == 0 ? 0 : 1);
    try {
      outcomes.st().session.execute(outcomes.st().announce.bind(dc, row, incarnation, appliedVersion, leasesMs,
          lease.toMillis(), (int) Math.min(Integer.MAX_VALUE, Math.max(1, keep.toSeconds())), micros)
          .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM));
    } catch (DriverException e) {
      throw unavailable("announcing server " + server + " in " + dc, e);
    }
    announcedAt.put(row, micros);
    if (!retired.contains(row)) {
      retireEarlier(server, row);
      retired.add(row);
    }
  }

  /**
   * Deletes the rows of this name's earlier processes (and the row of an older version, keyed by the name
   * alone), each at its own write timestamp, which may be ahead of every clock: a name is unique among live
   * servers, so they are gone, and this process's announcements cover their client leases (a process starts
   * with a whole client lease lifetime of its own). Without this, an advance would wait for a crashed
   * process's row until its heartbeat had stood still for a whole lease, however soon it came back.
   * A failure is thrown, and the next announcement tries again.
   */
  private void retireEarlier(String server, String row) {
    try {
      for (Row r : outcomes.st().session.execute(outcomes.st().selectServers.bind(dc)
          .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM))) {
        String key = r.getString("server");
        if (key.equals(row) || !(key.equals(server) || isProcessOf(key, server))) {
          continue;
        }
        long written = Math.max(r.isNull("beat") ? 0 : r.getLong("beat"),
            r.isNull("lease_written") ? 0 : r.getLong("lease_written"));
        if (written > 0) {
          outcomes.st().session.execute(outcomes.st().withdraw.bind(written, dc, key)
              .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM));
          log.info("server {}: retired the announcement of an earlier process of the same name ({})", server, key);
        }
      }
    } catch (DriverException e) {
      throw unavailable("retiring the announcements of earlier processes of server " + server + " in " + dc, e);
    }
  }

  /** Whether {@code key} is the row of a process named {@code server}: the name, '#', an incarnation. */
  static boolean isProcessOf(String key, String server) {
    if (key.length() != server.length() + 37 || !key.startsWith(server) || key.charAt(server.length()) != '#') {
      return false; // another name, such as "server#2", is another server's
    }
    try {
      UUID unused = UUID.fromString(key.substring(server.length() + 1));
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  void withdraw(String server, UUID incarnation) {
    String row = rowKey(server, incarnation);
    Long micros = announcedAt.remove(row);
    if (micros == null) {
      return;
    }
    try {
      outcomes.st().session.execute(outcomes.st().withdraw.bind(micros, dc, row)
          .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM));
    } catch (DriverException e) {
      throw unavailable("withdrawing server " + server + " in " + dc, e);
    }
  }

  /**
   * The servers of each datacenter of the receipt that have not applied its version, the longest client lease
   * time the others announced, and every announcement's heartbeat: its incarnation and write timestamp, with
   * the lease written by the same announcement (a row last written by an older version that does not write
   * {@code lease_ms} has none, and counts until its TTL, one lease, ends).
   */
  Confirmations confirmations(AdvanceReceipt receipt) {
    List<String> out = new ArrayList<>();
    Map<String, Confirmations.Heartbeat> heartbeats = new HashMap<>();
    long[] leasesMs = {0};
    boolean[] unknown = {false};
    receipt.versions().forEach((datacenter, version) -> {
      BoundStatement select = outcomes.st().selectServers.bind(datacenter)
          .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM);
      if (!datacenter.equals(dc)) {
        select = select.setNode(datacenters.coordinatorIn(datacenter, "confirm an advance"));
      }
      outcomes.plainReads.increment();
      try {
        for (Row r : outcomes.st().session.execute(select)) {
          String name = datacenter + "/" + r.getString("server");
          if (!r.isNull("lease_ms") && !r.isNull("beat") && r.getLong("beat") == r.getLong("lease_written")) {
            heartbeats.put(name, new Confirmations.Heartbeat(r.getUuid("incarnation") + "@" + r.getLong("beat"),
                Duration.ofMillis(r.getLong("lease_ms"))));
          }
          if (r.getLong("applied") < version) {
            out.add(name);
          } else if (r.isNull("leases_ms")) {
            unknown[0] = true; // a server of an older version: the advance waits a whole lease lifetime
          } else {
            leasesMs[0] = Math.max(leasesMs[0], r.getLong("leases_ms"));
          }
        }
      } catch (DriverException e) {
        throw unavailable("reading the servers of " + datacenter, e);
      }
    });
    return new Confirmations(out, unknown[0] ? Optional.empty() : Optional.of(Duration.ofMillis(leasesMs[0])),
        heartbeats);
  }
}
