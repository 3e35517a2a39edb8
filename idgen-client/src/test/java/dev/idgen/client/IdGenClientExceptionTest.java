package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import org.junit.jupiter.api.Test;

/** The public factory that test doubles of {@link IdSource} throw with, as the library's sources do. */
class IdGenClientExceptionTest {

  @Test
  void should_name_the_sequence_and_carry_the_reason_and_status() {
    Status status = Status.OUT_OF_RANGE.withDescription("max 10 reached");

    IdGenClientException e = IdGenClientException.of("orders", IdGenClientException.Reason.EXHAUSTED, status,
        "the sequence is exhausted");

    assertThat(e).hasMessage("sequence 'orders': the sequence is exhausted").hasNoCause();
    assertThat(e.sequence()).isEqualTo("orders");
    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.EXHAUSTED);
    assertThat(e.status()).containsSame(status);
  }

  @Test
  void should_allow_no_status_where_the_library_sets_none() {
    IdGenClientException e = IdGenClientException.of("orders", IdGenClientException.Reason.CLOSED, null,
        "the IdGenClient is closed");

    assertThat(e.status()).isEmpty();
  }

  @Test
  void should_require_a_status_for_the_reasons_that_promise_one() {
    assertThatThrownBy(() -> IdGenClientException.of("orders", IdGenClientException.Reason.REJECTED, null, "x"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("status (required for reason REJECTED)");
    assertThatThrownBy(() -> IdGenClientException.of("orders", IdGenClientException.Reason.EXHAUSTED, null, "x"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("status (required for reason EXHAUSTED)");
  }
}
