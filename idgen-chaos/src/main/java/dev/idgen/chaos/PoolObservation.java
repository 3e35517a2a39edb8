package dev.idgen.chaos;

import java.util.Optional;

/**
 * What the reads of one datacenter's pool row showed during a fresh-advance episode ({@link FreshAdvance}), in
 * the order they were made ({@link #see}), and what that proves ({@link #state}). Mutable, confined to the
 * episode's thread (the fault thread).
 */
final class PoolObservation {
  long reads;
  long unread;
  boolean exists;
  /** A row with the floor and nothing appended: the trim created it. */
  boolean trimCreated;
  /** After that, a block from at or below the floor in its record: a refill from before the advance. */
  boolean case1;
  /** A row without the floor that holds a block from at or below it: appended before the trim. */
  boolean appendFirst;
  /** A row with the floor, whatever else: the trim reached it. */
  boolean floorSeen;
  /** First seen with the floor and a block from below it already: the order cannot be told. */
  boolean late;

  void see(Optional<PoolWatch.PoolRow> read, long floor, long floorIndex) {
    if (read.isEmpty()) {
      unread++;
      return;
    }
    reads++;
    PoolWatch.PoolRow row = read.get();
    if (!row.exists()) {
      return;
    }
    boolean hasFloor = row.floor() != null && row.floor() >= floor;
    boolean below = row.appendedFrom(floorIndex);
    if (!exists && hasFloor && below) {
      late = true;
    }
    exists = true;
    floorSeen |= hasFloor;
    if (hasFloor && row.appended().isEmpty()) {
      trimCreated = true;
    } else if (trimCreated && hasFloor && below) {
      case1 = true;
    } else if (!hasFloor && below) {
      appendFirst = true;
    }
  }

  String state() {
    if (case1) {
      return "case1";
    }
    if (trimCreated) {
      return "trim-created";
    }
    if (appendFirst) {
      return "append-first";
    }
    if (late) {
      return "seen-late";
    }
    if (exists) {
      return floorSeen ? "floor" : "no-floor";
    }
    return reads == 0 ? "unread" : "absent";
  }
}
