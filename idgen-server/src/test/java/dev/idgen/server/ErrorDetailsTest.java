package dev.idgen.server;

import static dev.idgen.server.TestServer.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.ListSequencesRequest;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.server.config.ServerSettings;
import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every error status the API documents carries its details (errors.proto) in the
 * {@code grpc-status-details-bin} trailer, as a client in any language reads them: over Netty, decoded
 * from the trailer's bytes ({@link ErrorDetails}). The per-call limit is lowered to 50 so that
 * COUNT_ABOVE_LIMIT is cheap to reach.
 */
class ErrorDetailsTest {

  private final InMemoryRangeStore store = new InMemoryRangeStore();
  private TestServer server;

  @BeforeEach
  void start() {
    server = TestServer.startNetty(Map.of(ServerSettings.MAX_IDS_PER_CALL, 50, ServerSettings.MAX_WAIT, "200ms"),
        store);
    server.create("orders");
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void should_name_the_field_and_the_limit_of_an_invalid_allocate() {
    ErrorDetails name = details(() -> server.allocate("no spaces", 1));
    assertThat(name.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(name.reason()).isEqualTo("INVALID_SEQUENCE_NAME");
    assertThat(name.badField()).isEqualTo("sequence"); // AllocateRequest's field, not the core's "name"
    assertThat(name.metadata()).containsOnly(entry("field", "sequence"));

    ErrorDetails zero = details(() -> server.allocate("orders", 0));
    assertThat(zero.reason()).isEqualTo("INVALID_COUNT");
    assertThat(zero.badField()).isEqualTo("count");
    assertThat(zero.metadata()).containsOnly(entry("field", "count"), entry("sequence", "orders"));

    ErrorDetails above = details(() -> server.allocate("orders", 51));
    assertThat(above.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(above.reason()).isEqualTo("COUNT_ABOVE_LIMIT");
    assertThat(above.badField()).isEqualTo("count");
    assertThat(above.metadata()).containsOnly(entry("field", "count"), entry("sequence", "orders"),
        entry("limit", "50"));

    ErrorDetails missing = details(() -> server.allocate("nosuch", 1));
    assertThat(missing.code()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(missing.reason()).isEqualTo("SEQUENCE_NOT_FOUND");
    assertThat(missing.metadata()).containsOnly(entry("sequence", "nosuch"));
    assertThat(missing.badRequest()).isNull();
  }

  @Test
  void should_end_an_exhausted_allocate_with_out_of_range_saying_what_was_delivered() {
    server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("tiny").setStart(1).setMax(10).build());
    List<IdRange> received = new ArrayList<>();

    ErrorDetails exhausted = details(() -> server.allocate("tiny", 15, received));

    assertThat(TestServer.count(received)).isEqualTo(10); // streamed before the error: the caller's
    assertThat(exhausted.code()).isEqualTo(Status.Code.OUT_OF_RANGE);
    assertThat(exhausted.reason()).isEqualTo("SEQUENCE_EXHAUSTED");
    assertThat(exhausted.metadata()).containsOnly(entry("sequence", "tiny"), entry("max", "10"),
        entry("requested", "15"), entry("delivered", "10"));

    ErrorDetails again = details(() -> server.allocate("tiny", 1));
    assertThat(again.code()).isEqualTo(Status.Code.OUT_OF_RANGE);
    assertThat(again.metadata()).contains(entry("requested", "1"), entry("delivered", "0"));
  }

  @Test
  void should_detail_each_admin_error() {
    ErrorDetails exists = details(() -> server.create("orders"));
    assertThat(exists.code()).isEqualTo(Status.Code.ALREADY_EXISTS);
    assertThat(exists.reason()).isEqualTo("SEQUENCE_ALREADY_EXISTS");
    assertThat(exists.metadata()).containsOnly(entry("sequence", "orders"));

    ErrorDetails stripes = details(() -> server.admin().createSequence(
        CreateSequenceRequest.newBuilder().setName("wide").setStripes(65).build()));
    assertThat(stripes.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(stripes.reason()).isEqualTo("INVALID_STRIPES");
    assertThat(stripes.badField()).isEqualTo("stripes");
    assertThat(stripes.metadata()).containsOnly(entry("field", "stripes"), entry("sequence", "wide"));

    ErrorDetails blocks = details(() -> server.admin().createSequence(
        CreateSequenceRequest.newBuilder().setName("b").setNodeBlockSize(10).setDcBlockSize(5).build()));
    assertThat(blocks.reason()).isEqualTo("INVALID_DC_BLOCK_SIZE");
    assertThat(blocks.badField()).isEqualTo("dc_block_size");

    ErrorDetails name = details(() -> server.admin().getSequence(GetSequenceRequest.newBuilder().setName("").build()));
    assertThat(name.reason()).isEqualTo("INVALID_SEQUENCE_NAME");
    assertThat(name.badField()).isEqualTo("name");

    ErrorDetails missing = details(() -> server.admin().getSequence(
        GetSequenceRequest.newBuilder().setName("nosuch").build()));
    assertThat(missing.code()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(missing.reason()).isEqualTo("SEQUENCE_NOT_FOUND");

    ErrorDetails floor = details(() -> server.admin().advanceSequence(
        AdvanceSequenceRequest.newBuilder().setName("orders").setFloor(Long.MAX_VALUE).build()));
    assertThat(floor.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(floor.reason()).isEqualTo("FLOOR_AT_MAX");
    assertThat(floor.metadata()).containsOnly(entry("sequence", "orders"),
        entry("floor", String.valueOf(Long.MAX_VALUE)), entry("max", String.valueOf(Long.MAX_VALUE)));

    ErrorDetails pageSize = details(() -> server.admin().listSequences(
        ListSequencesRequest.newBuilder().setPageSize(-1).build()));
    assertThat(pageSize.reason()).isEqualTo("INVALID_PAGE_SIZE");
    assertThat(pageSize.badField()).isEqualTo("page_size");

    ErrorDetails pageToken = details(() -> server.admin().listSequences(
        ListSequencesRequest.newBuilder().setPageToken("not-a-token").build()));
    assertThat(pageToken.reason()).isEqualTo("INVALID_PAGE_TOKEN");
    assertThat(pageToken.badField()).isEqualTo("page_token");
  }

  @Test
  void should_name_the_expected_type_of_a_request_that_does_not_parse() {
    MethodDescriptor<byte[], byte[]> raw = IdGenGrpc.getAllocateMethod().toBuilder(TestServer.BYTES, TestServer.BYTES)
        .build();
    byte[] garbage = {(byte) 0x0a, (byte) 0xff}; // field 1, a length that runs past the end

    ErrorDetails malformed = details(() -> ClientCalls.blockingServerStreamingCall(server.channel, raw,
        CallOptions.DEFAULT, garbage).forEachRemaining(bytes -> {}));

    assertThat(malformed.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(malformed.reason()).isEqualTo("MALFORMED_REQUEST");
    assertThat(malformed.metadata()).containsOnly(entry("type", "idgen.v1.AllocateRequest"));
    assertThat(malformed.badRequest()).isNull(); // no one field is at fault
  }

  @Test
  void should_say_when_to_retry_when_the_store_is_unavailable() {
    store.beforeReserve = name -> {
      throw new StoreUnavailableException("store down for the test");
    };

    ErrorDetails down = details(() -> server.allocate("orders", 1));

    assertThat(down.code()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(down.reason()).isEqualTo("STORE_UNAVAILABLE");
    assertThat(down.metadata()).containsOnly(entry("sequence", "orders"));
    assertThat(down.retryDelayMillis()).isEqualTo(1000);
  }

  private static ErrorDetails details(Runnable call) {
    StatusRuntimeException e = failure(call);
    return ErrorDetails.of(e);
  }
}
