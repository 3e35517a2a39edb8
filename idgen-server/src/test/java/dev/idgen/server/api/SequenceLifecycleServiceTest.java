package dev.idgen.server.api;

import static dev.idgen.server.TestServer.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.google.protobuf.FieldMask;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.DeleteSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.ListReservationsRequest;
import dev.idgen.api.v1.ListSequencesRequest;
import dev.idgen.api.v1.Reservation;
import dev.idgen.api.v1.ReserveRangeRequest;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.UndeleteSequenceRequest;
import dev.idgen.api.v1.UpdateSequenceRequest;
import dev.idgen.server.ErrorDetails;
import dev.idgen.server.TestServer;
import dev.idgen.server.config.AdminSettings;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * UpdateSequence, DeleteSequence and UndeleteSequence through gRPC on the embedded store: what each does, and
 * each refusal's status, reason and message; and what ReserveRange does with a deleted sequence.
 */
class SequenceLifecycleServiceTest {
  @TempDir
  Path dir;

  private TestServer server;

  @BeforeEach
  void start() {
    server = TestServer.startEmbedded(dir);
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private Sequence create(String name, long max) {
    return server.admin().createSequence(CreateSequenceRequest.newBuilder().setName(name).setStart(1).setMax(max)
        .setStripes(2).setNodeBlockSize(100).setDcBlockSize(10_000).build());
  }

  private Sequence update(Sequence sequence, String... paths) {
    return server.admin().updateSequence(UpdateSequenceRequest.newBuilder().setSequence(sequence)
        .setUpdateMask(FieldMask.newBuilder().addAllPaths(List.of(paths))).build());
  }

  private static Sequence named(String name) {
    return Sequence.newBuilder().setName(name).build();
  }

  private static ErrorDetails details(StatusRuntimeException e) {
    return ErrorDetails.of(e);
  }

  @Test
  void a_raised_max_brings_an_exhausted_sequence_back() {
    create("small", 1_000);
    List<IdRange> before = new ArrayList<>();
    StatusRuntimeException exhausted = failure(() -> server.allocate("small", 1_001, before));
    assertThat(exhausted.getStatus().getCode()).isEqualTo(Status.Code.OUT_OF_RANGE);
    assertThat(TestServer.count(before)).isEqualTo(1_000);

    Sequence raised = update(named("small").toBuilder().setMax(5_000).setEtag("1").build(), "max");

    assertThat(raised.getMax()).isEqualTo(5_000);
    assertThat(raised.getEtag()).isEqualTo("2");
    assertThat(raised.getRemaining()).isEqualTo(4_000);
    assertThat(raised.getHeadroom()).isCloseTo(0.8, within(1e-9));
    assertThat(raised.hasDeleteTime()).isFalse();
    List<Long> after = TestServer.ids(server.allocate("small", 4_000));
    assertThat(after).hasSize(4_000).allSatisfy(id -> assertThat(id).isBetween(1_001L, 5_000L));
  }

  @Test
  void without_a_mask_changes_the_mutable_fields_a_get_response_carries_back() {
    create("roundtrip", 1_000_000);
    Sequence read = server.admin().getSequence(GetSequenceRequest.newBuilder().setName("roundtrip").build());

    Sequence changed = server.admin().updateSequence(UpdateSequenceRequest.newBuilder()
        .setSequence(read.toBuilder().setMax(2_000_000).setNodeBlockSize(50)).build());

    assertThat(changed.getMax()).isEqualTo(2_000_000);
    assertThat(changed.getNodeBlockSize()).isEqualTo(50);
    assertThat(changed.getDcBlockSize()).isEqualTo(10_000);
    assertThat(changed.getStripes()).isEqualTo(2);
    assertThat(changed.getEtag()).isEqualTo("2");
  }

  @Test
  void refuses_paths_that_are_no_field_or_only_the_servers() {
    create("masked", 1_000_000);

    StatusRuntimeException unknown = failure(() -> update(named("masked").toBuilder().setMax(5).build(), "maxx"));
    assertThat(unknown.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(unknown.getStatus().getDescription()).contains("update_mask path 'maxx' is not a field of");
    assertThat(details(unknown).reason()).isEqualTo("INVALID_UPDATE_MASK");
    assertThat(details(unknown).badField()).isEqualTo("update_mask");

    StatusRuntimeException output = failure(() -> update(named("masked"), "remaining"));
    assertThat(output.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(output.getStatus().getDescription()).contains("'remaining' is set by the server only");
  }

  @Test
  void refuses_a_lower_max_an_immutable_field_a_stale_etag_and_a_cap_out_of_range() {
    create("rules", 1_000_000);

    StatusRuntimeException lower = failure(() -> update(named("rules").toBuilder().setMax(10).build(), "max"));
    assertThat(lower.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(lower.getStatus().getDescription()).contains("max 10 is below its current max 1000000");
    assertThat(details(lower).reason()).isEqualTo("MAX_DECREASE");

    StatusRuntimeException stripes = failure(() -> update(named("rules").toBuilder().setStripes(3).build(),
        "stripes"));
    assertThat(stripes.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(stripes.getStatus().getDescription()).contains("stripes cannot change (asked: 3, current: 2)")
        .contains("create a new sequence");
    assertThat(details(stripes).reason()).isEqualTo("FIELD_IMMUTABLE");
    assertThat(details(stripes).metadata()).containsEntry("field", "stripes").containsEntry("sequence", "rules");

    StatusRuntimeException stale = failure(() -> update(named("rules").toBuilder().setMax(2_000_000).setEtag("9")
        .build(), "max"));
    assertThat(stale.getStatus().getCode()).isEqualTo(Status.Code.ABORTED);
    assertThat(stale.getStatus().getDescription()).contains("etag '9' is not its current one ('1')");
    assertThat(details(stale).reason()).isEqualTo("ETAG_MISMATCH");
    assertThat(details(stale).metadata()).containsEntry("etag", "1");

    StatusRuntimeException cap = failure(() -> update(named("rules").toBuilder().setNodeBlockSize(20_000).build(),
        "node_block_size"));
    assertThat(cap.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(details(cap).reason()).isEqualTo("INVALID_DC_BLOCK_SIZE");

    StatusRuntimeException missing = failure(() -> update(named("nope").toBuilder().setMax(10).build(), "max"));
    assertThat(missing.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);

    StatusRuntimeException badName = failure(() -> update(named("-bad").toBuilder().setMax(10).build(), "max"));
    assertThat(details(badName).reason()).isEqualTo("INVALID_SEQUENCE_NAME");

    // None of them changed it.
    assertThat(server.admin().getSequence(GetSequenceRequest.newBuilder().setName("rules").build()).getEtag())
        .isEqualTo("1");
  }

  @Test
  void a_deleted_sequence_refuses_allocations_until_it_is_restored() {
    create("retired", Long.MAX_VALUE);
    List<Long> first = TestServer.ids(server.allocate("retired", 100));

    Sequence deleted = server.admin().deleteSequence(DeleteSequenceRequest.newBuilder().setName("retired")
        .setEtag("1").build());

    assertThat(deleted.hasDeleteTime()).isTrue();
    assertThat(deleted.getExpireTime().getSeconds() - deleted.getDeleteTime().getSeconds())
        .isEqualTo(30L * 24 * 3600);
    assertThat(deleted.getEtag()).isEqualTo("2");
    StatusRuntimeException refused = failure(() -> server.allocate("retired", 1));
    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(refused.getStatus().getDescription()).contains("sequence 'retired' was deleted at")
        .contains("UndeleteSequence restores it until");
    assertThat(details(refused).reason()).isEqualTo("SEQUENCE_DELETED");
    assertThat(details(refused).metadata()).containsKeys("deleteTime", "expireTime").containsEntry("sequence",
        "retired");
    assertThat(server.admin().getSequence(GetSequenceRequest.newBuilder().setName("retired").build())
        .hasDeleteTime()).isTrue();
    assertThat(server.admin().listSequences(ListSequencesRequest.getDefaultInstance()).getSequencesList())
        .isEmpty();
    assertThat(server.admin().listSequences(ListSequencesRequest.newBuilder().setShowDeleted(true).build())
        .getSequencesList()).extracting(Sequence::getName).containsExactly("retired");
    StatusRuntimeException recreate = failure(() -> create("retired", Long.MAX_VALUE));
    assertThat(recreate.getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);
    assertThat(recreate.getStatus().getDescription()).contains("it was deleted at").contains("never used again");
    StatusRuntimeException again = failure(() -> server.admin().deleteSequence(
        DeleteSequenceRequest.newBuilder().setName("retired").build()));
    assertThat(details(again).reason()).isEqualTo("SEQUENCE_DELETED");
    StatusRuntimeException changed = failure(() -> update(named("retired").toBuilder().setMax(5).build(), "max"));
    assertThat(details(changed).reason()).isEqualTo("SEQUENCE_DELETED");
    StatusRuntimeException early = failure(() -> server.admin().deleteSequence(
        DeleteSequenceRequest.newBuilder().setName("retired").setPurge(true).build()));
    assertThat(early.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(details(early).reason()).isEqualTo("PURGE_BEFORE_EXPIRY");

    Sequence restored = server.admin().undeleteSequence(UndeleteSequenceRequest.newBuilder().setName("retired")
        .build());

    assertThat(restored.hasDeleteTime()).isFalse();
    assertThat(restored.hasExpireTime()).isFalse();
    assertThat(restored.getEtag()).isEqualTo("3");
    List<Long> after = TestServer.ids(server.allocate("retired", 100));
    assertThat(after).doesNotContainAnyElementsOf(first);
    StatusRuntimeException live = failure(() -> server.admin().undeleteSequence(
        UndeleteSequenceRequest.newBuilder().setName("retired").build()));
    assertThat(live.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(details(live).reason()).isEqualTo("SEQUENCE_NOT_DELETED");
    StatusRuntimeException purgeLive = failure(() -> server.admin().deleteSequence(
        DeleteSequenceRequest.newBuilder().setName("retired").setPurge(true).build()));
    assertThat(details(purgeLive).reason()).isEqualTo("SEQUENCE_NOT_DELETED");
    StatusRuntimeException staleDelete = failure(() -> server.admin().deleteSequence(
        DeleteSequenceRequest.newBuilder().setName("retired").setEtag("1").build()));
    assertThat(details(staleDelete).reason()).isEqualTo("ETAG_MISMATCH");
  }

  @Test
  void a_deleted_sequence_reserves_no_range_and_still_lists_those_reserved_before() {
    server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("imports").setStart(1).setMax(1_000_000)
        .build());
    Reservation before = server.admin().reserveRange(ReserveRangeRequest.newBuilder().setName("imports")
        .setCount(100).setRequestId("batch-1").build()).getReservation();
    server.admin().deleteSequence(DeleteSequenceRequest.newBuilder().setName("imports").build());

    StatusRuntimeException refused = failure(() -> server.admin().reserveRange(ReserveRangeRequest.newBuilder()
        .setName("imports").setCount(100).setRequestId("batch-2").build()));

    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(details(refused).reason()).isEqualTo("SEQUENCE_DELETED");
    assertThat(refused.getStatus().getDescription()).contains("sequence 'imports' was deleted at");
    assertThat(server.admin().listReservations(ListReservationsRequest.newBuilder().setName("imports").build())
        .getReservationsList()).containsExactly(before);
  }

  @Test
  void should_take_the_undelete_window_from_the_configuration() {
    server.close();
    server = TestServer.startEmbedded(dir, Map.of(AdminSettings.UNDELETE_WINDOW, "2h"));
    create("brief", Long.MAX_VALUE);

    Sequence deleted = server.admin().deleteSequence(DeleteSequenceRequest.newBuilder().setName("brief").build());

    assertThat(deleted.getExpireTime().getSeconds() - deleted.getDeleteTime().getSeconds())
        .as("idgen.admin.undelete-window = 2h").isEqualTo(7_200);
    server.close();
    server = TestServer.startEmbedded(dir, Map.of(AdminSettings.UNDELETE_WINDOW, "0s"));
    create("gone", Long.MAX_VALUE);
    server.admin().deleteSequence(DeleteSequenceRequest.newBuilder().setName("gone").build());
    server.admin().deleteSequence(DeleteSequenceRequest.newBuilder().setName("gone").setPurge(true).build());
    StatusRuntimeException back = failure(() -> server.admin().undeleteSequence(
        UndeleteSequenceRequest.newBuilder().setName("gone").build()));
    assertThat(back.getStatus().getCode()).as("purged: never back").isEqualTo(Status.Code.NOT_FOUND);
  }
}
