package dev.idgen.server.api;

import static dev.idgen.server.TestServer.bearer;
import static dev.idgen.server.TestServer.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.ListReservationsRequest;
import dev.idgen.api.v1.ListReservationsResponse;
import dev.idgen.api.v1.ListSequencesRequest;
import dev.idgen.api.v1.Reservation;
import dev.idgen.api.v1.ReserveRangeRequest;
import dev.idgen.api.v1.ReserveRangeResponse;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.core.store.embedded.EmbeddedRangeStore;
import dev.idgen.server.ErrorDetails;
import dev.idgen.server.TestServer;
import dev.idgen.server.config.AdminSettings;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code SequenceAdmin.ReserveRange} and {@code ListReservations} through gRPC on the embedded store: the
 * range, its record, retries, every refusal with its status and details, paging, who is recorded, and
 * reservations between Allocate calls of two servers sharing one store, with no overlap.
 */
class ReserveRangeServiceTest {

  @TempDir
  Path dir;

  private final List<TestServer> servers = new ArrayList<>();
  private EmbeddedRangeStore store;

  @AfterEach
  void stop() {
    servers.forEach(TestServer::close);
    if (store != null) {
      store.close();
    }
  }

  /** A server on the embedded store of {@code dir}; a second one shares the first one's store. */
  private TestServer start(Map<String, Object> overrides) {
    if (store == null) {
      store = EmbeddedRangeStore.open(dir);
    }
    TestServer s = TestServer.startOn(store, overrides);
    servers.add(s);
    return s;
  }

  private static ReserveRangeRequest reserve(String name, long count, String requestId) {
    return ReserveRangeRequest.newBuilder().setName(name).setCount(count).setRequestId(requestId).build();
  }

  @Test
  void should_reserve_a_range_above_what_was_handed_out_record_it_and_never_allocate_from_it() {
    TestServer server = start(Map.of());
    server.create("orders");
    List<IdRange> before = server.allocate("orders", 10);

    ReserveRangeResponse response = server.admin().reserveRange(reserve("orders", 1_000, "import-1"));

    Reservation r = response.getReservation();
    assertThat(response.getReplayed()).isFalse();
    assertThat(r.getSequence()).isEqualTo("orders");
    assertThat(r.getCount()).isEqualTo(1_000);
    assertThat(r.getLast()).isEqualTo(r.getFirst() + 999);
    assertThat(r.getFirst()).isGreaterThan(TestServer.ids(before).get(9));
    assertThat(r.getRequestId()).isEqualTo("import-1");
    assertThat(r.getReservedBy()).as("the caller's address, access control being off").isNotEmpty()
        .isNotEqualTo("unknown");
    assertThat(r.getReserveTime().getSeconds()).isPositive();
    // The server's own reserve lies below the range: Allocate serves it, then continues above the range.
    List<Long> after = TestServer.ids(server.allocate("orders", 200_000));
    assertThat(after).noneMatch(id -> id >= r.getFirst() && id <= r.getLast());
    ListReservationsResponse listed = server.admin().listReservations(
        ListReservationsRequest.newBuilder().setName("orders").build());
    assertThat(listed.getReservationsList()).containsExactly(r);
    assertThat(listed.getNextPageToken()).isEmpty();
  }

  @Test
  void should_return_the_same_range_to_a_retry_with_the_same_request_id() {
    TestServer server = start(Map.of());
    server.create("orders");
    Reservation first = server.admin().reserveRange(reserve("orders", 500, "retry-me")).getReservation();

    ReserveRangeResponse retry = server.admin().reserveRange(reserve("orders", 500, "retry-me"));

    assertThat(retry.getReplayed()).isTrue();
    assertThat(retry.getReservation()).isEqualTo(first);
    Reservation other = server.admin().reserveRange(
        ReserveRangeRequest.newBuilder().setName("orders").setCount(5).build()).getReservation();
    assertThat(other.getFirst()).as("the retry took nothing").isEqualTo(first.getLast() + 1);
    assertThat(other.getRequestId()).as("chosen by the server").isNotEmpty();
  }

  @Test
  void should_refuse_a_count_below_one_or_above_the_server_limit_naming_the_limit() {
    TestServer server = start(Map.of(AdminSettings.MAX_RESERVE_COUNT, 1_000));
    server.create("orders");

    ErrorDetails zero = ErrorDetails.of(failure(() -> server.admin().reserveRange(reserve("orders", 0, "a"))));
    ErrorDetails above = ErrorDetails.of(failure(() -> server.admin().reserveRange(reserve("orders", 1_001, "a"))));

    assertThat(zero.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(zero.reason()).isEqualTo("INVALID_COUNT");
    assertThat(zero.badField()).isEqualTo("count");
    assertThat(above.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(above.reason()).isEqualTo("COUNT_ABOVE_LIMIT");
    assertThat(above.metadata()).contains(entry("limit", "1000"), entry("sequence", "orders"));
    assertThat(above.message()).contains("count 1001").contains("1 to 1000").contains("idgen.admin.max-reserve-count");
    assertThat(server.admin().reserveRange(reserve("orders", 1_000, "b")).getReservation().getCount())
        .isEqualTo(1_000);
  }

  @Test
  void should_refuse_a_malformed_request_id() {
    TestServer server = start(Map.of());
    server.create("orders");

    ErrorDetails e = ErrorDetails.of(failure(() -> server.admin().reserveRange(reserve("orders", 5, "has space"))));

    assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.reason()).isEqualTo("INVALID_REQUEST_ID");
    assertThat(e.badField()).isEqualTo("request_id");
    assertThat(e.message()).contains("'has space'").contains("[A-Za-z0-9._:-]");
  }

  @Test
  void should_refuse_more_than_is_left_below_max_as_out_of_range_saying_how_many_are_left() {
    TestServer server = start(Map.of());
    server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("small").setStart(1).setMax(5_000)
        .build());

    ErrorDetails e = ErrorDetails.of(failure(() -> server.admin().reserveRange(reserve("small", 5_001, "a"))));

    assertThat(e.code()).isEqualTo(Status.Code.OUT_OF_RANGE);
    assertThat(e.reason()).isEqualTo("RESERVATION_ABOVE_MAX");
    assertThat(e.metadata()).contains(entry("sequence", "small"), entry("max", "5000"), entry("requested", "5001"),
        entry("remaining", "5000"));
    assertThat(e.message()).contains("only 5000 are left");
    Reservation all = server.admin().reserveRange(reserve("small", 5_000, "b")).getReservation();
    assertThat(all.getFirst()).isEqualTo(1);
    assertThat(all.getLast()).isEqualTo(5_000);
    StatusRuntimeException exhausted = failure(() -> server.allocate("small", 1));
    assertThat(exhausted.getStatus().getCode()).as("Allocate has nothing left").isEqualTo(Status.Code.OUT_OF_RANGE);
  }

  @Test
  void should_refuse_a_striped_sequence_and_a_reused_request_id_as_failed_precondition() {
    TestServer server = start(Map.of());
    server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("striped").setStripes(4).build());
    server.create("orders");
    server.admin().reserveRange(reserve("orders", 10, "once"));

    ErrorDetails striped = ErrorDetails.of(failure(() -> server.admin().reserveRange(reserve("striped", 10, "a"))));
    ErrorDetails reused = ErrorDetails.of(failure(() -> server.admin().reserveRange(reserve("orders", 11, "once"))));

    assertThat(striped.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(striped.reason()).isEqualTo("RESERVATION_STRIPED");
    assertThat(striped.metadata()).contains(entry("sequence", "striped"), entry("stripes", "4"));
    assertThat(reused.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(reused.reason()).isEqualTo("REQUEST_ID_REUSED");
    assertThat(reused.metadata()).contains(entry("requestId", "once"), entry("reserved", "10"));
    assertThat(reused.message()).contains("not 11");
  }

  @Test
  void should_refuse_an_unknown_sequence_as_not_found() {
    TestServer server = start(Map.of());

    ErrorDetails reserve = ErrorDetails.of(failure(() -> server.admin().reserveRange(reserve("nope", 1, "a"))));
    ErrorDetails list = ErrorDetails.of(failure(() -> server.admin().listReservations(
        ListReservationsRequest.newBuilder().setName("nope").build())));

    assertThat(reserve.reason()).isEqualTo("SEQUENCE_NOT_FOUND");
    assertThat(list.reason()).isEqualTo("SEQUENCE_NOT_FOUND");
    assertThat(list.code()).isEqualTo(Status.Code.NOT_FOUND);
  }

  @Test
  void should_list_reservations_page_by_page_and_refuse_a_token_of_another_listing() {
    TestServer server = start(Map.of());
    server.create("orders");
    server.create("other");
    List<Reservation> made = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      made.add(server.admin().reserveRange(reserve("orders", 10, "r" + i)).getReservation());
    }

    List<Reservation> listed = new ArrayList<>();
    String token = "";
    for (int page = 0; page < 10; page++) {
      ListReservationsResponse r = server.admin().listReservations(ListReservationsRequest.newBuilder()
          .setName("orders").setPageSize(2).setPageToken(token).build());
      assertThat(r.getReservationsCount()).isLessThanOrEqualTo(2);
      listed.addAll(r.getReservationsList());
      token = r.getNextPageToken();
      if (token.isEmpty()) {
        break;
      }
    }
    assertThat(listed).containsExactlyElementsOf(made);

    String ordersToken = server.admin().listReservations(ListReservationsRequest.newBuilder().setName("orders")
        .setPageSize(1).build()).getNextPageToken();
    String sequencesToken = server.admin().listSequences(ListSequencesRequest.newBuilder().setPageSize(1).build())
        .getNextPageToken();
    for (String wrong : List.of(sequencesToken, ordersToken)) {
      ErrorDetails e = ErrorDetails.of(failure(() -> server.admin().listReservations(ListReservationsRequest
          .newBuilder().setName("other").setPageToken(wrong).build())));
      assertThat(e.reason()).isEqualTo("INVALID_PAGE_TOKEN");
      assertThat(e.badField()).isEqualTo("page_token");
    }
    ErrorDetails negative = ErrorDetails.of(failure(() -> server.admin().listReservations(
        ListReservationsRequest.newBuilder().setName("orders").setPageSize(-1).build())));
    assertThat(negative.reason()).isEqualTo("INVALID_PAGE_SIZE");
  }

  @Test
  void should_record_the_callers_identity_and_let_only_admins_of_the_sequence_reserve_or_list() {
    Map<String, Object> access = new java.util.HashMap<>(Map.of(
        "idgen.access.enabled", true,
        "idgen.access.tokens", List.of(
            Map.of("identity", "orders-service", "token", "orders-token-0123456789"),
            Map.of("identity", "ops", "token", "ops-token-0123456789abcdef")),
        "idgen.access.rules", List.of(
            Map.of("identity", "orders-service", "allocate", List.of("orders"), "admin", List.of()),
            Map.of("identity", "ops", "allocate", List.of("*"), "admin", List.of("*")))));
    TestServer server = start(access);
    SequenceAdminGrpc.SequenceAdminBlockingStub ops = server.admin().withInterceptors(
        bearer("ops-token-0123456789abcdef"));
    SequenceAdminGrpc.SequenceAdminBlockingStub orders = server.admin().withInterceptors(
        bearer("orders-token-0123456789"));
    ops.createSequence(CreateSequenceRequest.newBuilder().setName("orders").build());

    Reservation r = ops.reserveRange(reserve("orders", 10, "by-ops")).getReservation();
    ErrorDetails denied = ErrorDetails.of(failure(() -> orders.reserveRange(reserve("orders", 10, "by-orders"))));
    ErrorDetails listDenied = ErrorDetails.of(failure(() -> orders.listReservations(
        ListReservationsRequest.newBuilder().setName("orders").build())));

    assertThat(r.getReservedBy()).isEqualTo("ops");
    assertThat(denied.reason()).isEqualTo("PERMISSION_DENIED");
    assertThat(denied.metadata()).contains(entry("identity", "orders-service"), entry("operation", "admin"));
    assertThat(listDenied.reason()).isEqualTo("PERMISSION_DENIED");
    assertThat(ops.listReservations(ListReservationsRequest.newBuilder().setName("orders").build())
        .getReservationsList()).containsExactly(r);
  }

  @Test
  void should_never_overlap_reservations_with_ids_two_servers_allocate_around_them() {
    TestServer a = start(Map.of());
    TestServer b = start(Map.of()); // a second server on the same store
    a.create("shared");
    List<long[]> intervals = new ArrayList<>();
    for (int round = 0; round < 20; round++) {
      TestServer allocating = round % 2 == 0 ? a : b;
      for (IdRange range : allocating.allocate("shared", 2_000 + round * 17)) {
        intervals.add(new long[] {range.getFirst(), range.getFirst() + range.getCount() - 1});
      }
      Reservation r = (round % 3 == 0 ? b : a).admin().reserveRange(reserve("shared", 777, "round-" + round))
          .getReservation();
      intervals.add(new long[] {r.getFirst(), r.getLast()});
    }
    intervals.sort(Comparator.comparingLong(r -> r[0]));
    for (int i = 1; i < intervals.size(); i++) {
      assertThat(intervals.get(i)[0]).as("[%s, %s] overlaps [%s, %s]", intervals.get(i - 1)[0],
          intervals.get(i - 1)[1], intervals.get(i)[0], intervals.get(i)[1]).isGreaterThan(intervals.get(i - 1)[1]);
    }
    assertThat(b.admin().listReservations(ListReservationsRequest.newBuilder().setName("shared").build())
        .getReservationsCount()).isEqualTo(20);
  }
}
