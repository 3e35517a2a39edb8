package dev.idgen.core.store.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.stream.Collectors;

/**
 * Applies {@code deploy/cassandra/schema.cql} (packaged with this class) idempotently, with the
 * keyspace name and replication of the configuration: the file is the one copy of the schema.
 */
final class Schema {
  private Schema() {}

  static void apply(CqlSession session, CassandraSettings settings) {
    // The keyspace first, then its tables all at once. The driver answers a schema change only after its
    // debounced metadata refresh (a 1 s window): one after the other, the tables cost a second each; sent
    // together, one refresh answers them all. The coordinator applies its schema changes one at a time
    // either way, and each statement is IF NOT EXISTS.
    List<CompletableFuture<?>> tables = new ArrayList<>();
    for (String statement : statements(settings)) {
      SimpleStatement st = SimpleStatement.newInstance(statement).setTimeout(Duration.ofSeconds(30));
      if (statement.startsWith("CREATE KEYSPACE")) {
        session.execute(st);
      } else {
        tables.add(session.executeAsync(st).toCompletableFuture());
      }
    }
    for (CompletableFuture<?> table : tables) {
      try {
        table.join();
      } catch (CompletionException e) {
        throw e.getCause() instanceof RuntimeException r ? r : e;
      }
    }
    session.checkSchemaAgreement();
    for (String upgrade : missingColumns(session, settings)) {
      session.execute(SimpleStatement.newInstance(upgrade).setTimeout(Duration.ofSeconds(30)));
      session.checkSchemaAgreement();
    }
  }

  /**
   * Columns added since 0.1 to tables that {@code CREATE TABLE IF NOT EXISTS} leaves as they are, by
   * table: the record of blocks appended to a pool (0.2), which makes appends idempotent, and the fence
   * and ordering of strict sequences (0.2), how long a server's client leases may still be used (0.3),
   * which lets an advance wait only for those, the server's lease, which lets an advance judge by the
   * announcement's heartbeat whether the server still serves, not by a TTL timed on the nodes' clocks, and
   * a sequence's version and deletion (0.4: UpdateSequence, DeleteSequence).
   */
  private static final List<String[]> ADDED_COLUMNS = List.of(
      new String[] {"dc_pools", "appended", "appended frozen<list<bigint>>, appended_below bigint"},
      new String[] {"dc_pools", "owner_epoch", "owner_epoch bigint"},
      new String[] {"sequences", "ordering", "ordering text, home_dc text"},
      new String[] {"servers", "leases_ms", "leases_ms bigint"},
      new String[] {"servers", "lease_ms", "lease_ms bigint"},
      new String[] {"sequences", "version",
          "version bigint, deleted_at timestamp, expires_at timestamp, purged boolean"});

  /**
   * The statements that add what a keyspace made by an older version lacks, or none if nothing is missing
   * (or the table does not exist yet, which the schema's own statements handle).
   */
  static List<String> missingColumns(CqlSession session, CassandraSettings settings) {
    List<String> out = new ArrayList<>();
    var ks = session.getMetadata().getKeyspace(settings.keyspace());
    for (String[] added : ADDED_COLUMNS) {
      var table = ks.flatMap(k -> k.getTable(added[0]));
      if (table.isPresent() && table.get().getColumn(added[1]).isEmpty()) {
        out.add("ALTER TABLE " + settings.keyspace() + "." + added[0] + " ADD (" + added[2] + ")");
      }
    }
    return out;
  }

  /** Tables added since 0.1 that the keyspace lacks (the schema's CREATE TABLE IF NOT EXISTS adds them). */
  static List<String> missingTables(CqlSession session, CassandraSettings settings) {
    var ks = session.getMetadata().getKeyspace(settings.keyspace());
    List<String> out = new ArrayList<>();
    for (String t : List.of("floor_log", "servers", "owners", "reservation_requests", "reservations")) {
      if (ks.isEmpty() || ks.get().getTable(t).isEmpty()) {
        out.add(t);
      }
    }
    return out;
  }

  /** The schema's statements for these settings, in order. */
  static List<String> statements(CassandraSettings settings) {
    String ks = settings.keyspace();
    String replication = new TreeMap<>(settings.replication()).entrySet().stream()
        .map(e -> "'" + e.getKey() + "': " + e.getValue())
        .collect(Collectors.joining(", ", "{'class': 'NetworkTopologyStrategy', ", "}"));
    List<String> out = new ArrayList<>();
    for (String raw : stripComments(load()).split(";")) {
      String st = raw.trim();
      if (st.isEmpty()) {
        continue;
      }
      if (st.startsWith("CREATE KEYSPACE")) {
        out.add("CREATE KEYSPACE IF NOT EXISTS " + ks + " WITH replication = " + replication
            + " AND durable_writes = true");
      } else {
        out.add(st.replace("idgen.", ks + "."));
      }
    }
    return out;
  }

  private static String stripComments(String s) {
    StringBuilder b = new StringBuilder();
    for (String line : s.split("\n")) {
      int c = line.indexOf("--");
      b.append(c >= 0 ? line.substring(0, c) : line).append('\n');
    }
    return b.toString();
  }

  private static String load() {
    try (InputStream in = Schema.class.getResourceAsStream("schema.cql")) {
      if (in == null) {
        throw new IllegalStateException("schema.cql is missing from the idgen-core jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

}
