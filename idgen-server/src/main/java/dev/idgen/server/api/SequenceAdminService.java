package dev.idgen.server.api;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.inject.Inject;
import com.google.inject.Singleton;
import com.google.protobuf.FieldMask;
import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.DeleteSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.ListSequencesRequest;
import dev.idgen.api.v1.ListReservationsRequest;
import dev.idgen.api.v1.ListReservationsResponse;
import dev.idgen.api.v1.ListSequencesResponse;
import dev.idgen.api.v1.ReserveRangeRequest;
import dev.idgen.api.v1.ReserveRangeResponse;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceView;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.api.v1.UndeleteSequenceRequest;
import dev.idgen.api.v1.UpdateSequenceRequest;
import dev.idgen.core.Allocator;
import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.Ordering;
import dev.idgen.core.Reservation;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.core.SequenceUpdate;
import dev.idgen.core.StoredSequence;
import dev.idgen.server.access.Caller;
import dev.idgen.server.config.AdminSettings;
import io.grpc.Context;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.function.Supplier;

/**
 * {@code idgen.v1.SequenceAdmin}: creates, describes, lists, changes, advances, deletes and restores sequences,
 * and reserves ranges of them, through the {@link Allocator}. Thread-safe: stateless.
 */
@ThreadSafe
@Singleton
public final class SequenceAdminService extends SequenceAdminGrpc.SequenceAdminImplBase {

  static final int DEFAULT_PAGE_SIZE = 100;
  static final int MAX_PAGE_SIZE = 1000;

  private final Allocator allocator;
  /** idgen.admin.max-reserve-count. */
  private final long maxReserveCount;

  @Inject
  SequenceAdminService(Allocator allocator, AdminSettings admin) {
    this.allocator = allocator;
    this.maxReserveCount = admin.maxReserveCount();
  }

  @Override
  public void createSequence(CreateSequenceRequest request, StreamObserver<Sequence> responses) {
    unary(responses, StatusMapper.Subject.admin(request.getName()), () -> {
      // Unset optional fields take the documented defaults; the definition validates every field.
      SequenceDefinition definition = new SequenceDefinition(
          request.getName(),
          request.hasStart() ? request.getStart() : SequenceDefinition.DEFAULT_START,
          request.hasMax() ? request.getMax() : SequenceDefinition.DEFAULT_MAX,
          request.hasStripes() ? request.getStripes() : SequenceDefinition.DEFAULT_STRIPES,
          request.hasNodeBlockSize() ? request.getNodeBlockSize() : SequenceDefinition.DEFAULT_NODE_BLOCK_SIZE,
          request.hasDcBlockSize() ? request.getDcBlockSize() : SequenceDefinition.DEFAULT_DC_BLOCK_SIZE);
      definition = withOrdering(definition, request);
      SequenceDefinition created = allocator.create(definition);
      return SequenceMessages.toProto(allocator.describe(created.name()));
    });
  }

  /** The request's ordering: strict ones get their home datacenter (by default this server's). */
  private SequenceDefinition withOrdering(SequenceDefinition definition, CreateSequenceRequest request) {
    switch (request.getOrdering()) {
      case ORDERING_UNSPECIFIED, ORDERING_PER_SERVER -> {
        if (request.hasHomeDatacenter()) {
          throw InvalidRequestException.ofField("home_datacenter", "sequence '" + definition.name()
              + "': home_datacenter is set, but only ORDERING_STRICT sequences have one");
        }
        return definition;
      }
      case ORDERING_STRICT -> {
        return definition.withStrictOrdering(request.hasHomeDatacenter() ? request.getHomeDatacenter()
            : allocator.datacenter());
      }
      default -> throw InvalidRequestException.ofField("ordering", "sequence '" + definition.name()
          + "': ordering " + request.getOrderingValue()
          + " (expected: ORDERING_PER_SERVER or ORDERING_STRICT)");
    }
  }

  @Override
  public void getSequence(GetSequenceRequest request, StreamObserver<Sequence> responses) {
    unary(responses, StatusMapper.Subject.admin(request.getName()), () -> {
      String name = SequenceDefinition.checkName(request.getName());
      return SequenceMessages.toProto(allocator.describe(name));
    });
  }

  @Override
  public void listSequences(ListSequencesRequest request, StreamObserver<ListSequencesResponse> responses) {
    unary(responses, StatusMapper.Subject.NONE, () -> {
      int pageSize = pageSize(request.getPageSize());
      String after = PageTokens.parse(request.getPageToken());
      // One more than asked tells whether another page follows, without an empty last page.
      List<StoredSequence> sequences = allocator.listStored(after, pageSize + 1, request.getShowDeleted());
      boolean more = sequences.size() > pageSize;
      List<StoredSequence> page = more ? sequences.subList(0, pageSize) : sequences;
      ListSequencesResponse.Builder response = ListSequencesResponse.newBuilder();
      boolean full = request.getView() == SequenceView.SEQUENCE_VIEW_FULL;
      for (StoredSequence sequence : page) {
        response.addSequences(full ? SequenceMessages.toProto(allocator.describe(sequence.definition().name()))
            : SequenceMessages.toProto(sequence));
      }
      if (more) {
        response.setNextPageToken(PageTokens.after(page.get(page.size() - 1).definition().name()));
      }
      return response.build();
    });
  }

  @Override
  public void updateSequence(UpdateSequenceRequest request, StreamObserver<Sequence> responses) {
    Sequence sequence = request.getSequence();
    unary(responses, StatusMapper.Subject.admin(sequence.getName()), () -> {
      String name = SequenceDefinition.checkName(sequence.getName());
      SequenceUpdate update = updateOf(sequence, request.hasUpdateMask() ? request.getUpdateMask()
          : FieldMask.getDefaultInstance());
      allocator.update(name, sequence.getEtag(), update);
      return SequenceMessages.toProto(allocator.describe(name));
    });
  }

  @Override
  public void deleteSequence(DeleteSequenceRequest request, StreamObserver<Sequence> responses) {
    unary(responses, StatusMapper.Subject.admin(request.getName()), () -> {
      String name = SequenceDefinition.checkName(request.getName());
      StoredSequence deleted = allocator.delete(name, request.getEtag(), request.getPurge());
      // A purged sequence cannot be described any more: its definition is what is left of it.
      return deleted.purged() ? SequenceMessages.toProto(deleted) : SequenceMessages.toProto(allocator.describe(name));
    });
  }

  @Override
  public void undeleteSequence(UndeleteSequenceRequest request, StreamObserver<Sequence> responses) {
    unary(responses, StatusMapper.Subject.admin(request.getName()), () -> {
      String name = SequenceDefinition.checkName(request.getName());
      allocator.undelete(name, request.getEtag());
      return SequenceMessages.toProto(allocator.describe(name));
    });
  }

  /** The mutable fields of Sequence, as update mask paths. */
  private static final List<String> MUTABLE = List.of("max", "node_block_size", "dc_block_size");
  /** Fields only the server sets: never in an update mask. */
  private static final List<String> OUTPUT_ONLY = List.of("stripe_states", "remaining", "headroom",
      "datacenter_reserves", "server_reserve", "unread", "create_time", "owner", "owner_epoch", "delete_time",
      "expire_time");

  /**
   * What an UpdateSequence asks (AIP-134): the fields of {@code mask}, with their values from {@code sequence};
   * an empty mask means every mutable field that {@code sequence} sets (non-zero). Immutable fields named (or,
   * without a mask, set) are passed on with their value, which may only be the current one. {@code name} and
   * {@code etag} say which sequence and which version: as paths they change nothing.
   */
  static SequenceUpdate updateOf(Sequence sequence, FieldMask mask) {
    List<String> paths = mask.getPathsList();
    boolean implied = paths.isEmpty();
    if (implied) {
      List<String> set = new java.util.ArrayList<>();
      if (sequence.getMax() != 0) {
        set.add("max");
      }
      if (sequence.getNodeBlockSize() != 0) {
        set.add("node_block_size");
      }
      if (sequence.getDcBlockSize() != 0) {
        set.add("dc_block_size");
      }
      if (sequence.getStart() != 0) {
        set.add("start");
      }
      if (sequence.getStripes() != 0) {
        set.add("stripes");
      }
      if (sequence.getOrderingValue() != 0) {
        set.add("ordering");
      }
      if (!sequence.getHomeDatacenter().isEmpty()) {
        set.add("home_datacenter");
      }
      paths = set;
    }
    SequenceUpdate update = SequenceUpdate.NONE;
    for (String path : paths) {
      switch (path) {
        case "*" -> {
          for (String field : MUTABLE) {
            update = with(update, field, sequence);
          }
        }
        case "max", "node_block_size", "dc_block_size", "start", "stripes", "ordering", "home_datacenter" ->
            update = with(update, path, sequence);
        case "name", "etag" -> { }
        default -> {
          String why = OUTPUT_ONLY.contains(path) ? "is set by the server only"
              : "is not a field of idgen.v1.Sequence";
          throw InvalidRequestException.ofField("update_mask", "sequence '" + sequence.getName() + "': update_mask"
              + " path '" + printable(path) + "' " + why + " (expected: " + String.join(", ", MUTABLE) + ", or *)");
        }
      }
    }
    return update;
  }

  private static SequenceUpdate with(SequenceUpdate update, String field, Sequence s) {
    return switch (field) {
      case "max" -> update.withMax(s.getMax());
      case "node_block_size" -> update.withNodeBlockSize(s.getNodeBlockSize());
      case "dc_block_size" -> update.withDcBlockSize(s.getDcBlockSize());
      case "start" -> update.withStart(s.getStart());
      case "stripes" -> update.withStripes(s.getStripes());
      case "ordering" -> update.withOrdering(switch (s.getOrdering()) {
        case ORDERING_STRICT -> Ordering.STRICT;
        case ORDERING_PER_SERVER, ORDERING_UNSPECIFIED -> Ordering.PER_SERVER;
        default -> throw InvalidRequestException.ofField("ordering", "sequence '" + s.getName() + "': ordering "
            + s.getOrderingValue() + " (expected: ORDERING_PER_SERVER or ORDERING_STRICT)");
      });
      case "home_datacenter" -> update.withHomeDatacenter(s.getHomeDatacenter());
      default -> throw new IllegalArgumentException(field);
    };
  }

  /** A path as a message may echo it: printable ASCII, cut when long. */
  private static String printable(String s) {
    String cut = s.length() > 64 ? s.substring(0, 64) + "..." : s;
    return cut.codePoints().allMatch(c -> c >= 0x20 && c < 0x7f) ? cut : cut.replaceAll("[^\\x20-\\x7e]", "?");
  }

  @Override
  public void advanceSequence(AdvanceSequenceRequest request, StreamObserver<Sequence> responses) {
    unary(responses, StatusMapper.Subject.admin(request.getName()), () -> {
      String name = SequenceDefinition.checkName(request.getName());
      allocator.advance(name, request.getFloor());
      return SequenceMessages.toProto(allocator.describe(name));
    });
  }

  /**
   * Who reserved is the caller the access layer identified ({@link Caller}). A count above the server's
   * limit is refused before the store is touched.
   */
  @Override
  public void reserveRange(ReserveRangeRequest request, StreamObserver<ReserveRangeResponse> responses) {
    unary(responses, StatusMapper.Subject.admin(request.getName()), () -> {
      String name = SequenceDefinition.checkName(request.getName());
      long count = request.getCount();
      if (count < 1 || count > maxReserveCount) {
        throw InvalidRequestException.count(name, count, maxReserveCount, AdminSettings.MAX_RESERVE_COUNT);
      }
      Reservation r = allocator.reserveRange(name, count, request.getRequestId(), Caller.current());
      return ReserveRangeResponse.newBuilder().setReservation(SequenceMessages.toProto(r))
          .setReplayed(r.replayed()).build();
    });
  }

  @Override
  public void listReservations(ListReservationsRequest request,
      StreamObserver<ListReservationsResponse> responses) {
    unary(responses, StatusMapper.Subject.admin(request.getName()), () -> {
      String name = SequenceDefinition.checkName(request.getName());
      int pageSize = pageSize(request.getPageSize());
      long after = PageTokens.parseReservation(name, request.getPageToken());
      List<Reservation> reservations = allocator.reservations(name, after, pageSize + 1);
      boolean more = reservations.size() > pageSize;
      List<Reservation> page = more ? reservations.subList(0, pageSize) : reservations;
      ListReservationsResponse.Builder response = ListReservationsResponse.newBuilder();
      for (Reservation r : page) {
        response.addReservations(SequenceMessages.toProto(r));
      }
      if (more) {
        response.setNextPageToken(PageTokens.afterReservation(name, page.get(page.size() - 1).first()));
      }
      return response.build();
    });
  }

  /**
   * page_size: 0 means the default; above {@link #MAX_PAGE_SIZE}, the maximum (AIP-158: a caller asking
   * for more gets full pages, not an error); negative is refused.
   */
  static int pageSize(int requested) {
    if (requested == 0) {
      return DEFAULT_PAGE_SIZE;
    }
    if (requested < 0) {
      throw InvalidRequestException.ofField("page_size", "page_size " + requested + " (expected: >= 0; 0 for "
          + DEFAULT_PAGE_SIZE + ", at most " + MAX_PAGE_SIZE + " are returned)");
    }
    return Math.min(requested, MAX_PAGE_SIZE);
  }

  /**
   * Answers a unary call about {@code subject} with {@code body}'s result, or with the status its
   * exception maps to.
   */
  private static <T> void unary(StreamObserver<T> responses, StatusMapper.Subject subject, Supplier<T> body) {
    T response;
    try {
      response = body.get();
    } catch (RuntimeException e) {
      responses.onError(StatusMapper.toException(e, Context.current().getDeadline(), subject));
      return;
    }
    responses.onNext(response);
    responses.onCompleted();
  }
}
