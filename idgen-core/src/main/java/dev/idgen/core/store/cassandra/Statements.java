package dev.idgen.core.store.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.google.errorprone.annotations.ThreadSafe;

/**
 * A connected session and idgen's statements, prepared on it: what the store has once it is connected.
 * Immutable (the session and prepared statements are thread-safe).
 */
@ThreadSafe
final class Statements {
  final CqlSession session;
  final PreparedStatement selectDefinition;
  final PreparedStatement insertDefinition;
  final PreparedStatement updateDefinition;
  final PreparedStatement selectNames;
  final PreparedStatement selectGlobal;
  final PreparedStatement insertGlobal;
  final PreparedStatement updateGlobal;
  final PreparedStatement selectPool;
  /** The keyspace's replication, where the driver has no schema metadata for it. */
  final PreparedStatement selectReplication;
  final PreparedStatement insertPool;
  final PreparedStatement updatePool;
  final PreparedStatement appendPool;
  final PreparedStatement healPool;
  final PreparedStatement selectLog;
  final PreparedStatement insertLog;
  final PreparedStatement updateLog;
  final PreparedStatement announce;
  final PreparedStatement withdraw;
  final PreparedStatement selectServers;
  final PreparedStatement fencePool;
  final PreparedStatement insertFencedPool;
  final PreparedStatement selectOwner;
  final PreparedStatement insertOwner;
  final PreparedStatement updateOwner;
  final PreparedStatement selectReservationRequest;
  final PreparedStatement insertReservationRequest;
  final PreparedStatement insertReservation;
  final PreparedStatement selectReservations;

  /** Prepares every statement on {@code session}, in keyspace {@code ks}; throws the driver's exceptions. */
  Statements(CqlSession session, String ks) {
    this.session = session;
    selectDefinition = session.prepare("SELECT name, start, max, stripes, node_block_size, dc_block_size, created_at, op,"
        + " ordering, home_dc, version, deleted_at, expires_at, purged"
        + " FROM " + ks + ".sequences WHERE name = ?");
    updateDefinition = session.prepare("UPDATE " + ks + ".sequences SET max = ?, node_block_size = ?,"
        + " dc_block_size = ?, version = ?, deleted_at = ?, expires_at = ?, purged = ?, op = ? WHERE name = ?"
        + " IF op = ?");
    insertDefinition = session.prepare("INSERT INTO " + ks + ".sequences (name, start, max, stripes,"
        + " node_block_size, dc_block_size, created_at, op, ordering, home_dc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        + " IF NOT EXISTS");
    selectNames = session.prepare("SELECT name FROM " + ks + ".sequences");
    selectGlobal = session.prepare("SELECT reserved, op FROM " + ks + ".global_cursors"
        + " WHERE sequence = ? AND stripe = ?");
    insertGlobal = session.prepare("INSERT INTO " + ks + ".global_cursors (sequence, stripe, reserved, op)"
        + " VALUES (?, ?, ?, ?) IF NOT EXISTS");
    updateGlobal = session.prepare("UPDATE " + ks + ".global_cursors SET reserved = ?, op = ?"
        + " WHERE sequence = ? AND stripe = ? IF op = ?");
    selectReplication = session.prepare("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?");
    selectPool = session.prepare("SELECT blocks, floor, taken, appended, appended_below, owner_epoch, op FROM " + ks
        + ".dc_pools WHERE sequence = ? AND stripe = ? AND datacenter = ?");
    insertPool = session.prepare("INSERT INTO " + ks + ".dc_pools (sequence, stripe, datacenter, blocks,"
        + " floor, taken, appended, appended_below, op) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?) IF NOT EXISTS");
    // Removals (reserve, trim) leave the record of appended blocks as it is.
    updatePool = session.prepare("UPDATE " + ks + ".dc_pools SET blocks = ?, floor = ?, taken = ?, op = ?"
        + " WHERE sequence = ? AND stripe = ? AND datacenter = ? IF op = ?");
    selectLog = session.prepare("SELECT version, changes, op FROM " + ks + ".floor_log WHERE datacenter = ?");
    insertLog = session.prepare("INSERT INTO " + ks + ".floor_log (datacenter, version, changes, op)"
        + " VALUES (?, ?, ?, ?) IF NOT EXISTS");
    updateLog = session.prepare("UPDATE " + ks + ".floor_log SET version = ?, changes = ?, op = ?"
        + " WHERE datacenter = ? IF op = ?");
    announce = session.prepare("INSERT INTO " + ks + ".servers (datacenter, server, incarnation, applied,"
        + " leases_ms, lease_ms) VALUES (?, ?, ?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?");
    withdraw = session.prepare("DELETE FROM " + ks + ".servers USING TIMESTAMP ? WHERE datacenter = ?"
        + " AND server = ?");
    // The write timestamp of applied is the heartbeat (every announcement writes it, with a timestamp that
    // rises within a process); lease_ms counts only if the same announcement wrote it.
    selectServers = session.prepare("SELECT server, incarnation, applied, leases_ms, lease_ms,"
        + " writetime(applied) AS beat, writetime(lease_ms) AS lease_written FROM " + ks
        + ".servers WHERE datacenter = ?");
    appendPool = session.prepare("UPDATE " + ks + ".dc_pools SET blocks = ?, appended = ?, appended_below = ?,"
        + " op = ? WHERE sequence = ? AND stripe = ? AND datacenter = ? IF op = ?");
    // A pool that forgot acknowledged writes: emptied, its taken put back, its record closed.
    // The fence of a strict sequence: a new owner's epoch, before it takes anything from the pool.
    fencePool = session.prepare("UPDATE " + ks + ".dc_pools SET owner_epoch = ?, op = ?"
        + " WHERE sequence = ? AND stripe = ? AND datacenter = ? IF op = ?");
    insertFencedPool = session.prepare("INSERT INTO " + ks + ".dc_pools (sequence, stripe, datacenter, blocks,"
        + " taken, appended, appended_below, owner_epoch, op) VALUES (?, 0, ?, [], 0, [], ?, ?, ?) IF NOT EXISTS");
    selectOwner = session.prepare("SELECT server, incarnation, target, epoch, op FROM " + ks + ".owners"
        + " WHERE sequence = ?");
    insertOwner = session.prepare("INSERT INTO " + ks + ".owners (sequence, server, incarnation, target, epoch, op)"
        + " VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS");
    updateOwner = session.prepare("UPDATE " + ks + ".owners SET server = ?, incarnation = ?, target = ?, epoch = ?,"
        + " op = ? WHERE sequence = ? IF op = ?");
    selectReservationRequest = session.prepare("SELECT first, last, reserved_by, reserved_at, op FROM " + ks
        + ".reservation_requests WHERE sequence = ? AND request_id = ?");
    insertReservationRequest = session.prepare("INSERT INTO " + ks + ".reservation_requests (sequence, request_id,"
        + " first, last, reserved_by, reserved_at, op) VALUES (?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS");
    insertReservation = session.prepare("INSERT INTO " + ks + ".reservations (sequence, first, last, request_id,"
        + " reserved_by, reserved_at) VALUES (?, ?, ?, ?, ?, ?)");
    selectReservations = session.prepare("SELECT first, last, request_id, reserved_by, reserved_at FROM " + ks
        + ".reservations WHERE sequence = ? AND first > ? LIMIT ?");
    healPool = session.prepare("UPDATE " + ks + ".dc_pools SET blocks = ?, taken = ?, appended = ?,"
        + " appended_below = ?, op = ? WHERE sequence = ? AND stripe = ? AND datacenter = ? IF op = ?");
  }
}
