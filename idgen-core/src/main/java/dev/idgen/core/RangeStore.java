package dev.idgen.core;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The durable source of blocks that the {@link Allocator} serves from: sequence definitions and, per
 * sequence and stripe, how far its ID space has been reserved.
 *
 * <p>Implementations are thread-safe and may be shared by any number of threads of one process; any
 * number of processes may use one store at once (several servers on one Cassandra cluster), and no two
 * calls of {@link #reserve} — from any thread, process or datacenter — ever return overlapping ranges.
 * Everything a method returns is durable before it returns: after a crash of this process at any
 * moment, a new process never reserves an ID that was returned before.
 *
 * <p>Implementations: the embedded single-node store ({@code dev.idgen.core.store.embedded}) and the
 * Cassandra store, which reserves through compare-and-set in two tiers (global cursor, datacenter pool).
 */
public interface RangeStore extends AutoCloseable {

  /**
   * Creates a sequence, durably.
   *
   * @throws SequenceAlreadyExistsException if a sequence of that name exists, whatever its settings
   * @throws StoreUnavailableException if the store cannot be reached
   */
  void create(SequenceDefinition definition);

  /** The definition of the named sequence, if it exists. */
  Optional<SequenceDefinition> find(String name);

  /**
   * Up to {@code limit} definitions in name order, starting after {@code afterName} (empty string: from
   * the first).
   */
  List<SequenceDefinition> list(String afterName, int limit);

  /**
   * {@link #find}, with the sequence's creation time where the store recorded it. Stores that record
   * one override this (and {@link #listStored}); the default has none.
   */
  default Optional<StoredSequence> findStored(String name) {
    return find(name).map(StoredSequence::of);
  }

  /** {@link #list}, with each sequence's creation time where the store recorded it. */
  default List<StoredSequence> listStored(String afterName, int limit) {
    return list(afterName, limit).stream().map(StoredSequence::of).toList();
  }

  /**
   * {@link #findStored}, read so that it shows every change of the sequence that completed before this call
   * (Cassandra: at SERIAL). What a server reads when a definition changed, and before it changes one. Never a
   * weaker read in its place: a server confirms a change only once this read shows it.
   *
   * @throws StoreUnavailableException if the store cannot be read so (Cassandra: this datacenter cut off from
   *     the others)
   */
  default Optional<StoredSequence> findCurrent(String name) {
    return findStored(name);
  }

  /**
   * Replaces the stored sequence {@code expected} by {@code next} (its definition, its deletion), if the
   * store still holds {@code expected}'s version, then logs the change in every datacenter's floor log
   * ({@link FloorLog#DEFINITION_CHANGED}), so that every server reads the sequence again before it confirms
   * that version. {@code next} is either {@code expected} itself (nothing changes in the sequence: the log
   * entries only, so that a retry of a change whose confirmation failed completes it) or the next version.
   * Durable before it returns, like {@link #advance}; one compare-and-set on the definition (Cassandra), one
   * transaction (embedded).
   *
   * <p>The definition's ID space must stay what it was ({@code start}, {@code stripes}, {@code ordering}) and
   * {@code max} may only rise, so that every position a store or a server holds keeps its ID: callers check
   * that ({@link SequenceUpdate#applyTo}); stores refuse anything else as a programming error.
   *
   * @return the floor-log versions that servers must confirm
   * @throws SequenceChangedException if the stored version is not {@code expected}'s
   * @throws SequenceNotFoundException if the sequence does not exist
   * @throws StoreUnavailableException if the store cannot be reached; the change may or may not be in force
   *     (a read shows which), and the same call again completes it
   */
  default AdvanceReceipt redefine(StoredSequence expected, StoredSequence next) {
    throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot change definitions");
  }

  /**
   * Reserves the next IDs of one stripe for this process: a range of 1 to {@code size} IDs (fewer than
   * {@code size} where the stripe's end or a store-side block boundary is near, or where {@code size} is
   * more than {@link RunwayPolicy#boundedByRemaining} allows of what is left). No other call, anywhere,
   * ever gets any of them.
   *
   * @throws SequenceExhaustedException if the stripe has no ID left
   * @throws StoreUnavailableException if the store cannot be reached, or an outcome stays unknown; then
   *     nothing was reserved that this process could hand out
   */
  IdRange reserve(SequenceDefinition sequence, int stripe, long size);

  /**
   * For a {@link Ordering#STRICT} sequence: {@link #reserve} of its one stripe by the owner that holds
   * fencing epoch {@code epoch} ({@link OwnerRecord#epoch}). The store keeps the highest epoch that
   * reserved from the sequence's pool: a higher one is recorded first (the fence), and a lower one is
   * refused, so that a deposed owner takes nothing once its successor has. Ranges returned to one epoch,
   * and across epochs, increase: strict sequences never take IDs given back.
   *
   * @throws NotOwnerException if a higher epoch has reserved from the pool
   */
  IdRange reserveStrict(SequenceDefinition sequence, long epoch, long size);

  /**
   * The owner row of a {@link Ordering#STRICT} sequence, read with the same consistency as the writes of
   * {@link #replaceOwner} when this process is in the sequence's home datacenter (a plain read of its own
   * replicas otherwise: good enough to find where to forward to); empty if no server claimed it yet.
   */
  Optional<OwnerRecord> owner(SequenceDefinition sequence);

  /**
   * Writes {@code next} as the owner row if the row is still {@code expected} (null: there is none), by
   * one compare-and-set in the sequence's home datacenter, which must be this process's. Returns whether
   * it applied. An outcome that stays unknown is reported as not applied (the caller does not serve on
   * it; if it did apply, the row stops being renewed and is taken over after a lease).
   */
  boolean replaceOwner(SequenceDefinition sequence, @javax.annotation.Nullable OwnerRecord expected,
      OwnerRecord next);

  /** This process's datacenter: the home datacenter of the strict sequences it creates by default. */
  String datacenter();

  /**
   * Moves every stripe of the sequence past {@code floor}: once this returns, no {@link #reserve} (by
   * any process) returns an ID at or below it. IDs that the store itself held in reserve below the floor
   * are dropped. Never moves a stripe back; advancing to a floor already passed changes nothing in the
   * stripes, but is recorded in the floor log again, so that a retry can be confirmed.
   *
   * <p>Order: the stripes and reserves first, then the floor log of every datacenter. A server that has
   * read a log version therefore reserves only IDs above the floors up to that version.
   *
   * @return the floor-log versions that servers must confirm ({@link #unconfirmed})
   */
  AdvanceReceipt advance(SequenceDefinition sequence, long floor);

  /**
   * The highest floor an {@link #advance} has set for the sequence, as this process can see it;
   * {@link Long#MIN_VALUE} if none. Read when a server must re-learn every floor it holds (its place in
   * the {@link #floorLog} is gone).
   */
  default long floor(SequenceDefinition sequence) {
    return Long.MIN_VALUE;
  }

  /**
   * The floor changes of this process's datacenter after {@code afterVersion}: one read, whatever the
   * number of sequences. Stores that only one process uses return {@link FloorLog#EMPTY}.
   */
  default FloorLog floorLog(long afterVersion) {
    return FloorLog.EMPTY;
  }

  /**
   * Announces that {@code server} (incarnation {@code incarnation}) of this process's datacenter serves
   * IDs and has applied the floor log up to {@code appliedVersion}. The announcement expires after
   * {@code lease} unless renewed; a server that cannot renew it stops serving before then, so that an
   * expired announcement means "no longer serving". A restart under the same name replaces the old
   * incarnation's announcement (two live processes never share a name: it includes the port).
   */
  default void announce(String server, UUID incarnation, long appliedVersion, Duration lease) {}

  /**
   * {@link #announce}, also saying for how long, at most, client leases this server handed out before it
   * applied those floors may still be used ({@code leasesOutstanding}, counted from this call): what an
   * advance waits for after the confirmations ({@link #confirmations}). Stores that do not record it
   * announce without it (advances then wait the full client lease lifetime).
   */
  default void announce(String server, UUID incarnation, long appliedVersion, Duration lease,
      Duration leasesOutstanding) {
    announce(server, incarnation, appliedVersion, lease);
  }

  /**
   * {@link #announce(String, UUID, long, Duration, Duration)}, kept by the store for {@code keep} (at least
   * {@code lease}) rather than {@code lease}, by stores that record a heartbeat and the lease with it
   * ({@link Confirmations#heartbeats}): an advance then judges whether the server still serves by the
   * heartbeat, on its own clock, and the store keeps the announcement longer only so that a store node whose
   * clock runs ahead of the writer's does not drop it early. Stores without heartbeats keep it for
   * {@code lease}, as {@link #announce(String, UUID, long, Duration, Duration)} does.
   */
  default void announce(String server, UUID incarnation, long appliedVersion, Duration lease, Duration keep,
      Duration leasesOutstanding) {
    announce(server, incarnation, appliedVersion, lease, leasesOutstanding);
  }

  /**
   * {@link #unconfirmed}, with the longest {@code leasesOutstanding} the confirming servers announced
   * ({@link Confirmations#leasesOutstanding} is empty where a store or a server does not record it), and the
   * announcements' heartbeats where the store records them.
   */
  default Confirmations confirmations(AdvanceReceipt receipt) {
    return new Confirmations(unconfirmed(receipt), Optional.empty());
  }

  /** Withdraws this server's announcement (graceful stop), if it is still this incarnation's. */
  default void withdraw(String server, UUID incarnation) {}

  /**
   * The servers, in every datacenter of the receipt, whose announcement is live and has not applied the
   * receipt's version of their datacenter, as {@code datacenter/name}. Empty when all have confirmed.
   */
  default List<String> unconfirmed(AdvanceReceipt receipt) {
    return List.of();
  }

  /**
   * How often allocators read the {@link #floorLog} and renew their announcement;
   * {@link Duration#ZERO} for a store that only one process uses, where the allocator's own
   * {@code advance} already drops its cached IDs.
   */
  default Duration floorRefreshInterval() {
    return Duration.ZERO;
  }

  /**
   * Gives back IDs of one stripe that this process reserved and never handed out (a graceful stop), so
   * that they are handed out later instead of being a gap. The caller guarantees that nothing can hand
   * them out any more. An addition to the store: an attempt whose outcome is unknown is never repeated
   * (its IDs are then counted lost, never handed out twice).
   *
   * @return how many of the IDs are back in the store for certain; the rest are a gap
   */
  default long giveBack(SequenceDefinition sequence, int stripe, List<IdRange> ranges) {
    return 0;
  }

  /**
   * Reserves {@code count} consecutive IDs of a sequence of one stripe for one caller ({@code ReserveRange}),
   * from the top: above everything any datacenter, server or client holds or has handed out, so that no
   * {@link #reserve} by any process ever returns one of them. The reservation is recorded durably (which
   * range, {@code requestId}, {@code reservedBy}, when) before it is returned. A call with a
   * {@code requestId} that already reserved a range returns that record ({@link Reservation#replayed}) and
   * takes nothing more; two calls with one request id at once return one range.
   *
   * <p>An outcome the store cannot settle fails the call, and the range it may have taken is never
   * returned by a later call (a gap), so a range is never both reserved and handed out.
   *
   * @throws RangeAboveMaxException if fewer than {@code count} IDs are left above what the tiers hold
   * @throws ReservationRefusedException if the sequence is striped, or the request id reserved another count
   * @throws StoreUnavailableException if the store cannot be reached or an outcome stays unknown
   */
  default Reservation reserveRange(SequenceDefinition sequence, long count, String requestId, String reservedBy) {
    throw new UnsupportedOperationException(getClass().getSimpleName() + " does not reserve ranges");
  }

  /**
   * Up to {@code limit} reservations of the sequence in the order of their ranges (oldest first), those
   * whose first ID is above {@code afterFirst} ({@link Long#MIN_VALUE}: from the first).
   */
  default List<Reservation> reservations(SequenceDefinition sequence, long afterFirst, int limit) {
    return List.of();
  }

  /**
   * {@link #state}, as cheaply as the store can give it, for gauges read every few seconds: it may lag
   * a moment behind (Cassandra: plain reads of this datacenter's replicas, no Paxos round per sequence).
   */
  default SequenceState approximateState(SequenceDefinition sequence) {
    return state(sequence);
  }

  /** How far each stripe is reserved, and what each datacenter holds, as the store sees it now. */
  SequenceState state(SequenceDefinition sequence);

  /**
   * Complete once the store answers. A store that connects in the background (Cassandra, whose cluster may
   * come up after the server) completes it when it is connected, and fails it if it gives up; until then
   * its operations fail with {@link StoreUnavailableException}. Servers report NOT_SERVING until it is
   * complete. Stores that are ready when built (the default) return a completed stage.
   */
  default CompletionStage<Void> ready() {
    return CompletableFuture.completedFuture(null);
  }

  /** Releases connections and files. Idempotent. */
  @Override
  void close();
}
