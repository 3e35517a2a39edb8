package dev.idgen.server;

import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.Ordering;
import dev.idgen.core.RangeStore;
import dev.idgen.core.Reservation;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceState;
import dev.idgen.core.StoredSequence;
import dev.idgen.core.store.cassandra.CassandraRangeStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A move of every sequence from one store to another, offline (no server on either): {@code move-store}.
 * Each sequence is created in the target with its definition, advanced past the highest ID the source may
 * have handed out, its ranges reserved for callers recorded, then given its deleted state.
 *
 * <p><b>Why the source's cursors bound what was handed out.</b> Every ID a server hands out, to a client
 * lease, a stripe pool or a {@code ReserveRange} caller, comes from a reservation that moved a stripe's
 * cursor past it before any of it left the store ({@code RangeStore.reserve} and {@code reserveRange} commit
 * first). IDs given back at graceful stops lie below the cursor too. So, per stripe, the ID at index
 * {@code reserved - 1} is the highest that stripe may have handed out, and an advance to the highest of them
 * (or the source's floor, if higher) keeps the target from handing out any of them again. The given-back IDs
 * stay behind: a gap, never a duplicate.
 *
 * <p><b>Why through the stores' API.</b> {@code create}, {@code advance} and {@code redefine} keep the target's
 * rules (its compare-and-sets, its floor log), as a server would; only the reservations' records, which take no
 * IDs, are written by a call made for this ({@link CassandraRangeStore#importReservation}).
 *
 * <p><b>Refusals first.</b> The whole move is planned before anything is written: a name the target already
 * holds with another ID space or state refuses the move, and nothing is written. A name it holds with the same
 * definition (a move run again after it stopped half-way) is advanced again, which is harmless: an advance
 * only raises.
 *
 * <p>Not thread-safe; one move at a time, with no server using either store (the embedded store's lock
 * refuses a second process on its file; for the target, stop every server of the keyspace).
 */
final class StoreMove {
  private static final int PAGE = 500;

  /** What the move does, or did, to one sequence. */
  record Step(StoredSequence source, SequenceDefinition target, long floor, List<Reservation> reservations,
      boolean alreadyThere) {

    /** One line for the report. */
    String line(boolean done) {
      StringBuilder b = new StringBuilder();
      b.append(target.name()).append(": ");
      b.append(alreadyThere ? (done ? "already in the target, advanced again" : "already in the target, would be advanced again")
          : (done ? "created" : "would be created"));
      b.append(floor >= target.start() ? ", floor " + floor : ", nothing handed out (no advance)");
      b.append(", ").append(reservations.size()).append(reservations.size() == 1 ? " reservation" : " reservations");
      if (source.purged()) {
        b.append(", purged");
      } else if (source.deleted()) {
        b.append(", deleted (restorable until ").append(source.expireTime().orElseThrow()).append(')');
      }
      if (target.strict()) {
        b.append(", strict in ").append(target.homeDatacenter());
      }
      return b.toString();
    }
  }

  private final RangeStore from;
  private final RangeStore to;

  StoreMove(RangeStore from, RangeStore to) {
    this.from = from;
    this.to = to;
  }

  /**
   * What the move would do, one step per sequence of the source in name order.
   *
   * @throws InvalidRequestException naming every conflicting sequence, if the target holds one of the names
   *     with another definition or state
   */
  List<Step> plan() {
    List<Step> steps = new ArrayList<>();
    List<String> conflicts = new ArrayList<>();
    for (StoredSequence s : allStored(from)) {
      SequenceDefinition target = targetDefinition(s.definition());
      Optional<StoredSequence> there = to.findStored(target.name());
      if (there.isPresent() && !sameAs(there.get(), target, s)) {
        conflicts.add("sequence '" + target.name() + "': the target holds " + describe(there.get())
            + ", the embedded store " + describe(new StoredSequence(target, s.createTime(), s.version(),
                s.deleteTime(), s.expireTime(), s.purged())));
        continue;
      }
      steps.add(new Step(s, target, floor(s.definition()), reservations(s.definition()), there.isPresent()));
    }
    if (!conflicts.isEmpty()) {
      throw new InvalidRequestException("the target already holds " + conflicts.size()
          + (conflicts.size() == 1 ? " sequence" : " sequences") + " of the same name with another definition or"
          + " state; nothing was written. Delete them from the target (or move into a new keyspace) and run the"
          + " move again:\n  " + String.join("\n  ", conflicts));
    }
    return steps;
  }

  /** Carries out {@code steps} (from {@link #plan}), reporting each sequence once it is done. */
  void apply(List<Step> steps, Consumer<String> report) {
    for (Step step : steps) {
      SequenceDefinition d = step.target();
      if (!step.alreadyThere()) {
        to.create(d);
      }
      if (step.floor() >= d.start()) {
        to.advance(d, step.floor());
      }
      for (Reservation r : step.reservations()) {
        if (!(to instanceof CassandraRangeStore cassandra)) {
          throw new IllegalStateException("reservations can be moved into the Cassandra store only, not " + to);
        }
        Reservation recorded = cassandra.importReservation(r);
        if (recorded.first() != r.first() || recorded.last() != r.last()) {
          throw new InvalidRequestException("sequence '" + d.name() + "': request id '" + r.requestId()
              + "' already names the range " + recorded.first() + " to " + recorded.last() + " in the target, not "
              + r.first() + " to " + r.last() + "; the sequence is advanced, its other reservations are not moved");
        }
      }
      StoredSequence source = step.source();
      if (source.deleted() && !step.alreadyThere()) {
        StoredSequence created = to.findStored(d.name()).orElseThrow();
        to.redefine(created, new StoredSequence(d, created.createTime(), created.version() + 1, source.deleteTime(),
            source.expireTime(), source.purged()));
      }
      report.accept(step.line(true));
    }
  }

  /**
   * The highest ID the source may have handed out, or its floor if higher; below the sequence's start if
   * neither.
   */
  long floor(SequenceDefinition d) {
    return highestHandedOut(from, d);
  }

  /** Every sequence {@code store} holds, purged ones included, by name, read a page at a time. */
  static List<StoredSequence> allStored(RangeStore store) {
    List<StoredSequence> all = new ArrayList<>();
    String after = "";
    while (true) {
      List<StoredSequence> page = store.listStored(after, PAGE);
      all.addAll(page);
      if (page.size() < PAGE) {
        return all;
      }
      after = page.get(page.size() - 1).definition().name();
    }
  }

  /**
   * The highest ID that {@code store} may have handed out for {@code d} through any tier (a server, a
   * datacenter's pool, a client's lease, a reserved range), or its floor if higher; below the sequence's start if
   * neither. Every ID of any tier comes from a reservation that moved a stripe's cursor first, so the cursors bound
   * them all.
   *
   * @throws dev.idgen.core.StoreUnavailableException when a cursor could not be read at its full consistency
   */
  static long highestHandedOut(RangeStore store, SequenceDefinition d) {
    long highest = store.floor(d);
    SequenceState state = store.state(d);
    if (!state.unread().isEmpty()) {
      throw new dev.idgen.core.StoreUnavailableException("sequence '" + d.name() + "': " + String.join("; ",
          state.unread()));
    }
    for (SequenceState.Stripe stripe : state.stripes()) {
      if (stripe.reserved() > 0) {
        highest = Math.max(highest, d.idAt(stripe.stripe(), Math.min(stripe.reserved(), stripe.size()) - 1));
      }
    }
    return highest;
  }

  private List<Reservation> reservations(SequenceDefinition d) {
    List<Reservation> out = new ArrayList<>();
    long after = Long.MIN_VALUE;
    while (true) {
      List<Reservation> page = from.reservations(d, after, PAGE);
      out.addAll(page);
      if (page.size() < PAGE) {
        return out;
      }
      after = page.get(page.size() - 1).first();
    }
  }

  /** A strict sequence of the embedded store's one datacenter, "local", gets the target's local datacenter. */
  private SequenceDefinition targetDefinition(SequenceDefinition d) {
    if (d.ordering() != Ordering.STRICT || d.homeDatacenter().equals(to.datacenter())) {
      return d;
    }
    return d.withStrictOrdering(to.datacenter());
  }

  /** The same ID space, caps and state: what a move run before would have written. */
  private static boolean sameAs(StoredSequence there, SequenceDefinition target, StoredSequence source) {
    return there.definition().equals(target) && there.deleted() == source.deleted()
        && there.purged() == source.purged();
  }

  private static String describe(StoredSequence s) {
    SequenceDefinition d = s.definition();
    return "start " + d.start() + ", max " + d.max() + ", " + d.stripes() + (d.stripes() == 1 ? " stripe" : " stripes")
        + ", ordering " + d.ordering() + (d.strict() ? " in " + d.homeDatacenter() : "")
        + ", node block " + d.nodeBlockSize() + ", dc block " + d.dcBlockSize()
        + (s.purged() ? ", purged" : s.deleted() ? ", deleted" : "");
  }
}
