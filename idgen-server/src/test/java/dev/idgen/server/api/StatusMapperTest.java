package dev.idgen.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.core.AdvanceNotConfirmedException;
import dev.idgen.core.IdGenException;
import dev.idgen.core.InvalidRequestException;
import dev.idgen.core.SequenceAlreadyExistsException;
import dev.idgen.core.SequenceExhaustedException;
import dev.idgen.core.SequenceNotFoundException;
import dev.idgen.core.StoreUnavailableException;
import io.grpc.Deadline;
import io.grpc.Status;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class StatusMapperTest {

  static Stream<Arguments> outcomes() {
    return Stream.of(
        Arguments.of(new InvalidRequestException("count 0 (expected: 1 to 10)"), Status.Code.INVALID_ARGUMENT),
        Arguments.of(new SequenceNotFoundException("sequence 'x' does not exist"), Status.Code.NOT_FOUND),
        Arguments.of(new SequenceAlreadyExistsException("sequence 'x' exists"), Status.Code.ALREADY_EXISTS),
        Arguments.of(new SequenceExhaustedException("x", 10), Status.Code.RESOURCE_EXHAUSTED),
        Arguments.of(new StoreUnavailableException("store down"), Status.Code.UNAVAILABLE),
        Arguments.of(new AdvanceNotConfirmedException("x", 10, List.of("dc1/a"), "10m"), Status.Code.UNAVAILABLE));
  }

  @ParameterizedTest
  @MethodSource("outcomes")
  void should_map_each_idgen_exception_to_its_code_with_its_message(IdGenException e, Status.Code code) {
    Status status = StatusMapper.toStatus(e, null);

    assertThat(status.getCode()).isEqualTo(code);
    assertThat(status.getDescription()).isEqualTo(e.getMessage());
  }

  @Test
  void should_map_an_unexpected_exception_to_internal_without_its_details() {
    Status status = StatusMapper.toStatus(new NullPointerException("secret internals"), null);

    assertThat(status.getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(status.getDescription()).isEqualTo(StatusMapper.INTERNAL_DESCRIPTION);
  }

  @Test
  void should_report_deadline_exceeded_when_the_store_wait_ended_with_the_calls_deadline() {
    Deadline expired = Deadline.after(-1, TimeUnit.SECONDS);
    Deadline later = Deadline.after(1, TimeUnit.HOURS);

    assertThat(StatusMapper.toStatus(new StoreUnavailableException("no reserve"), expired).getCode())
        .isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(StatusMapper.toStatus(new StoreUnavailableException("no reserve"), later).getCode())
        .isEqualTo(Status.Code.UNAVAILABLE);
  }

  @Test
  void should_pass_a_status_exception_through() {
    Status status = StatusMapper.toStatus(Status.CANCELLED.withDescription("gone").asRuntimeException(), null);

    assertThat(status.getCode()).isEqualTo(Status.Code.CANCELLED);
  }
}
