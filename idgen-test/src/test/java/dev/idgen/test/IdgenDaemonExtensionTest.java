package dev.idgen.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdGenClientException;
import dev.idgen.client.IdSource;
import io.grpc.Status;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A test class as a user writes it: one daemon for the class, with the two sequences it names. */
@IdgenDaemonTest(sequences = {"orders", "invoices"})
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class IdgenDaemonExtensionTest {
  private final IdGenClient client;

  IdgenDaemonExtensionTest(IdGenClient client) {
    this.client = client;
  }

  @Test
  void should_hand_out_ids_from_both_named_sequences(@Sequence("orders") IdSource orders,
      @Sequence("invoices") IdSource invoices) {
    long first = orders.next();
    long[] more = orders.next(100);
    long invoice = invoices.next();

    Set<Long> ids = new HashSet<>();
    ids.add(first);
    Arrays.stream(more).forEach(ids::add);
    assertThat(ids).hasSize(101).allMatch(id -> id >= 1);
    assertThat(invoice).isPositive();
    assertThat(orders.sequence()).isEqualTo("orders");
    assertThat(invoices.sequence()).isEqualTo("invoices");
    assertThat(client.sequence("orders")).as("the injected client's own source").isSameAs(orders);
  }

  @Test
  void should_give_the_address_to_code_that_builds_its_own_client(@IdgenTarget String target,
      @Sequence("invoices") IdSource invoices) {
    long ours = invoices.next();

    assertThat(target).matches("127\\.0\\.0\\.1:\\d+");
    try (IdGenClient own = IdGenClient.builder().target(target).usePlaintext().build()) {
      long theirs = own.sequence("invoices").next();
      assertThat(theirs).as("the same sequence, never the same ID").isPositive().isNotEqualTo(ours);
    }
  }

  @Test
  void should_fail_with_not_found_for_a_sequence_the_test_did_not_name() {
    IdGenClientException e = catchThrowableOfType(IdGenClientException.class,
        () -> client.sequence("refunds").next());

    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.REJECTED);
    assertThat(e.status().orElseThrow().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(e).hasMessageContaining("refunds");
  }

  @Nested
  class Nested_classes {
    @Test
    void should_share_the_outer_classs_daemon_and_client(IdGenClient nested, @Sequence("orders") IdSource orders) {
      assertThat(nested).isSameAs(client);
      assertThat(orders.next()).isPositive();
    }
  }
}
