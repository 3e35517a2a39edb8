package dev.idgen.server.api;

import com.google.protobuf.Timestamp;
import dev.idgen.api.v1.DatacenterReserve;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.StripeState;
import dev.idgen.core.Allocator.SequenceView;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceState;
import dev.idgen.core.StoredSequence;
import java.time.Instant;
import javax.annotation.Nullable;

/** Conversions between the core's values and the {@code idgen.v1} messages. */
final class SequenceMessages {

  private SequenceMessages() {}

  static IdRange toProto(dev.idgen.core.IdRange range, @Nullable com.google.protobuf.Duration validFor) {
    return toProto(range, validFor, dev.idgen.api.v1.Ordering.ORDERING_PER_SERVER);
  }

  static IdRange toProto(dev.idgen.core.IdRange range, @Nullable com.google.protobuf.Duration validFor,
      dev.idgen.api.v1.Ordering ordering) {
    IdRange.Builder b = IdRange.newBuilder()
        .setFirst(range.first())
        .setCount(range.count())
        .setStride(range.stride())
        .setOrdering(ordering);
    if (validFor != null) {
      b.setValidFor(validFor);
    }
    return b.build();
  }

  /** A range as the core holds it: its IDs only (the stamps are for clients). */
  static dev.idgen.core.IdRange fromProto(IdRange range) {
    return new dev.idgen.core.IdRange(range.getFirst(), range.getCount(), range.getStride());
  }

  /** The client lease lifetime as {@code IdRange.valid_for}; null (unset: no limit) when zero. */
  @Nullable
  static com.google.protobuf.Duration validFor(java.time.Duration lifetime) {
    if (lifetime.isZero()) {
      return null;
    }
    return com.google.protobuf.Duration.newBuilder().setSeconds(lifetime.getSeconds())
        .setNanos(lifetime.getNano()).build();
  }

  /** A sequence's definition only (ListSequences' basic view): no live state. */
  static Sequence toProto(StoredSequence sequence) {
    return definition(sequence).build();
  }

  private static Timestamp timestamp(Instant t) {
    return Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()).build();
  }

  private static Sequence.Builder definition(StoredSequence stored) {
    SequenceDefinition definition = stored.definition();
    Sequence.Builder b = Sequence.newBuilder();
    stored.createTime().ifPresent(t -> b.setCreateTime(timestamp(t)));
    stored.deleteTime().ifPresent(t -> b.setDeleteTime(timestamp(t)));
    stored.expireTime().ifPresent(t -> b.setExpireTime(timestamp(t)));
    return b
        .setEtag(stored.etag())
        .setName(definition.name())
        .setStart(definition.start())
        .setMax(definition.max())
        .setStripes(definition.stripes())
        .setNodeBlockSize(definition.nodeBlockSize())
        .setDcBlockSize(definition.dcBlockSize())
        .setOrdering(toProto(definition.ordering()))
        .setHomeDatacenter(definition.homeDatacenter());
  }

  /** A reservation's record (not whether it was replayed: that is the response's). */
  static dev.idgen.api.v1.Reservation toProto(dev.idgen.core.Reservation r) {
    Instant t = r.reservedAt();
    return dev.idgen.api.v1.Reservation.newBuilder()
        .setSequence(r.sequence())
        .setFirst(r.first())
        .setLast(r.last())
        .setCount(r.count())
        .setRequestId(r.requestId())
        .setReservedBy(r.reservedBy())
        .setReserveTime(Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()))
        .build();
  }

  static dev.idgen.api.v1.Ordering toProto(dev.idgen.core.Ordering ordering) {
    return ordering == dev.idgen.core.Ordering.STRICT ? dev.idgen.api.v1.Ordering.ORDERING_STRICT
        : dev.idgen.api.v1.Ordering.ORDERING_PER_SERVER;
  }

  /** A sequence's definition and live state, as GetSequence and friends return it. */
  static Sequence toProto(SequenceView view) {
    SequenceDefinition definition = view.definition();
    SequenceState state = view.state();
    Sequence.Builder sequence = definition(view.stored());
    for (SequenceState.Stripe stripe : state.stripes()) {
      StripeState.Builder stripeState = StripeState.newBuilder()
          .setStripe(stripe.stripe())
          .setRemaining(stripe.remaining());
      // Absent, not some out-of-range number, when the stripe is used up (see admin.proto).
      if (stripe.remaining() > 0) {
        stripeState.setNextUnreserved(definition.idAt(stripe.stripe(), stripe.reserved()));
      }
      sequence.addStripeStates(stripeState);
    }
    long remaining = state.remaining();
    sequence.setRemaining(remaining).setHeadroom(headroom(remaining, definition.capacity()));
    for (SequenceState.DatacenterReserve reserve : state.datacenterReserves()) {
      sequence.addDatacenterReserves(DatacenterReserve.newBuilder()
          .setDatacenter(reserve.datacenter())
          .setStripe(reserve.stripe())
          .setIds(reserve.ids()));
    }
    // A released row (its owner stopped gracefully) names nobody: absent, like no owner yet.
    view.owner().filter(o -> !o.target().isEmpty())
        .ifPresent(o -> sequence.setOwner(o.target()).setOwnerEpoch(o.epoch()));
    return sequence.setServerReserve(view.serverReserve()).addAllUnread(state.unread()).build();
  }

  /**
   * The fraction of the space not yet reserved. Both numbers saturate at {@link Long#MAX_VALUE} for
   * the largest sequences, so the ratio is clamped to [0, 1] rather than trusted.
   */
  static double headroom(long remaining, long capacity) {
    if (capacity <= 0) {
      return 0.0;
    }
    double fraction = (double) remaining / (double) capacity;
    return Math.max(0.0, Math.min(1.0, fraction));
  }
}
