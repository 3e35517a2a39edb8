package dev.idgen.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import dev.idgen.core.AdvanceNotConfirmedException;
import dev.idgen.core.FloorAtMaxException;
import dev.idgen.core.IdGenException;
import dev.idgen.core.IdRange;
import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.SequenceAlreadyExistsException;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.StoreUnavailableException;
import dev.idgen.server.ErrorDetails;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class StatusMapperTest {

  private static final StatusMapper.Subject ORDERS = StatusMapper.Subject.admin("orders");

  static Stream<Arguments> outcomes() {
    return Stream.of(
        Arguments.of(InvalidRequestException.count("orders", 0, 10), Status.Code.INVALID_ARGUMENT, "INVALID_COUNT"),
        Arguments.of(InvalidRequestException.count("orders", 11, 10), Status.Code.INVALID_ARGUMENT,
            "COUNT_ABOVE_LIMIT"),
        Arguments.of(InvalidRequestException.ofField("start", "start -1"), Status.Code.INVALID_ARGUMENT,
            "INVALID_START"),
        Arguments.of(new InvalidRequestException("no field"), Status.Code.INVALID_ARGUMENT, "INVALID_REQUEST"),
        Arguments.of(new SequenceNotFoundException("sequence 'orders' does not exist"), Status.Code.NOT_FOUND,
            "SEQUENCE_NOT_FOUND"),
        Arguments.of(new SequenceAlreadyExistsException("sequence 'orders' exists"), Status.Code.ALREADY_EXISTS,
            "SEQUENCE_ALREADY_EXISTS"),
        Arguments.of(new SequenceExhaustedException("orders", 10), Status.Code.OUT_OF_RANGE, "SEQUENCE_EXHAUSTED"),
        Arguments.of(new FloorAtMaxException("orders", 10, 10), Status.Code.FAILED_PRECONDITION, "FLOOR_AT_MAX"),
        Arguments.of(new StoreUnavailableException("store down"), Status.Code.UNAVAILABLE, "STORE_UNAVAILABLE"),
        Arguments.of(new AdvanceNotConfirmedException("orders", 10, List.of("dc1/a"), "10m"),
            Status.Code.UNAVAILABLE, "ADVANCE_NOT_CONFIRMED"),
        Arguments.of(new dev.idgen.core.SequenceDeletedException(deleted()), Status.Code.NOT_FOUND,
            "SEQUENCE_DELETED"),
        Arguments.of(new dev.idgen.core.SequenceChangedException("orders", "1", "2"), Status.Code.ABORTED,
            "ETAG_MISMATCH"),
        Arguments.of(refused(dev.idgen.core.ChangeRefusedException.Kind.MAX_DECREASE), Status.Code.FAILED_PRECONDITION,
            "MAX_DECREASE"),
        Arguments.of(refused(dev.idgen.core.ChangeRefusedException.Kind.FIELD_IMMUTABLE),
            Status.Code.FAILED_PRECONDITION, "FIELD_IMMUTABLE"),
        Arguments.of(refused(dev.idgen.core.ChangeRefusedException.Kind.NOT_DELETED), Status.Code.FAILED_PRECONDITION,
            "SEQUENCE_NOT_DELETED"),
        Arguments.of(refused(dev.idgen.core.ChangeRefusedException.Kind.PURGE_BEFORE_EXPIRY),
            Status.Code.FAILED_PRECONDITION, "PURGE_BEFORE_EXPIRY"),
        Arguments.of(new dev.idgen.core.ChangeNotConfirmedException("orders", "its deletion", List.of("dc1/a")),
            Status.Code.UNAVAILABLE, "CHANGE_NOT_CONFIRMED"),
        Arguments.of(InvalidRequestException.ofField("update_mask", "path 'x'"), Status.Code.INVALID_ARGUMENT,
            "INVALID_UPDATE_MASK"));
  }

  private static dev.idgen.core.StoredSequence deleted() {
    java.time.Instant at = java.time.Instant.parse("2026-11-27T00:00:00Z");
    return new dev.idgen.core.StoredSequence(dev.idgen.core.SequenceDefinition.withDefaults("orders"),
        java.util.Optional.empty(), 2, java.util.Optional.of(at), java.util.Optional.of(at.plusSeconds(60)), false);
  }

  private static dev.idgen.core.ChangeRefusedException refused(dev.idgen.core.ChangeRefusedException.Kind kind) {
    return new dev.idgen.core.ChangeRefusedException(kind, "orders", "max", "refused (" + kind + ")");
  }

  @ParameterizedTest
  @MethodSource("outcomes")
  void should_map_each_idgen_exception_to_its_reason_and_code_with_its_message(IdGenException e,
      Status.Code code, String reason) {
    ErrorDetails details = ErrorDetails.of(StatusMapper.toException(e, null, ORDERS));

    assertThat(details.code()).isEqualTo(code);
    assertThat(details.reason()).isEqualTo(reason);
    assertThat(details.message()).isEqualTo(e.getMessage());
  }

  @Test
  void should_put_what_a_program_needs_in_the_metadata() {
    ErrorDetails above = ErrorDetails.of(StatusMapper.toException(InvalidRequestException.count("orders", 11, 10),
        null, StatusMapper.Subject.allocate("orders")));
    assertThat(above.metadata()).containsOnly(entry("field", "count"), entry("sequence", "orders"),
        entry("limit", "10"));

    ErrorDetails exhausted = ErrorDetails.of(StatusMapper.toException(new SequenceExhaustedException("orders", 99,
        7, List.of(new IdRange(95, 3, 1), new IdRange(98, 2, 1))), null, ORDERS));
    assertThat(exhausted.metadata()).containsOnly(entry("sequence", "orders"), entry("max", "99"),
        entry("requested", "7"), entry("delivered", "5"));

    ErrorDetails unconfirmed = ErrorDetails.of(StatusMapper.toException(
        new AdvanceNotConfirmedException("orders", 500, List.of("dc1/a:7070", "dc2/b:7070"), "10m"), null, ORDERS));
    assertThat(unconfirmed.metadata()).containsOnly(entry("sequence", "orders"), entry("floor", "500"),
        entry("unconfirmed", "dc1/a:7070,dc2/b:7070"));
    assertThat(unconfirmed.retryDelayMillis()).isPositive();
  }

  @Test
  void should_never_echo_an_invalid_name_in_the_metadata() {
    String hostile = "x".repeat(10_000);

    ErrorDetails missing = ErrorDetails.of(StatusMapper.toException(new SequenceNotFoundException("gone"), null,
        StatusMapper.Subject.admin(hostile)));

    assertThat(missing.metadata()).isEmpty();
  }

  @Test
  void should_map_an_unexpected_exception_to_internal_without_its_details() {
    StatusRuntimeException e = StatusMapper.toException(new NullPointerException("secret internals"), null, ORDERS);

    ErrorDetails details = ErrorDetails.of(e);
    assertThat(details.code()).isEqualTo(Status.Code.INTERNAL);
    assertThat(details.reason()).isEqualTo("INTERNAL_ERROR");
    assertThat(details.message()).isEqualTo(StatusMapper.INTERNAL_DESCRIPTION);
    assertThat(details.metadata()).isEmpty();
  }

  @Test
  void should_report_deadline_exceeded_when_the_store_wait_ended_with_the_calls_deadline() {
    Deadline expired = Deadline.after(-1, TimeUnit.SECONDS);
    Deadline later = Deadline.after(1, TimeUnit.HOURS);

    ErrorDetails timedOut = ErrorDetails.of(StatusMapper.toException(new StoreUnavailableException("no reserve"),
        expired, ORDERS));
    assertThat(timedOut.code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(timedOut.reason()).isEqualTo("RESERVE_WAIT_TIMED_OUT");
    assertThat(timedOut.metadata()).containsOnly(entry("sequence", "orders"));
    assertThat(StatusMapper.toException(new StoreUnavailableException("no reserve"), later, ORDERS).getStatus()
        .getCode()).isEqualTo(Status.Code.UNAVAILABLE);
  }

  @Test
  void should_pass_a_status_exception_through() {
    Status status = StatusMapper.toException(Status.CANCELLED.withDescription("gone").asRuntimeException(), null,
        ORDERS).getStatus();

    assertThat(status.getCode()).isEqualTo(Status.Code.CANCELLED);
  }
}
