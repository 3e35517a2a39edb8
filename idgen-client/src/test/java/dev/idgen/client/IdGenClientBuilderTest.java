package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IdGenClientBuilderTest {
  private final ManagedChannel channel = InProcessChannelBuilder.forName("nowhere").directExecutor().build();

  @AfterEach
  void tearDown() {
    channel.shutdownNow();
  }

  @Test
  void should_require_a_server() {
    assertThatThrownBy(() -> IdGenClient.builder().build())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("target");
  }

  @Test
  void should_reject_settings_out_of_range() {
    assertInvalid(b -> b.minLeaseSize(0), "minLeaseSize: 0");
    assertInvalid(b -> b.minLeaseSize(10).maxLeaseSize(9), "maxLeaseSize: 9");
    assertInvalid(b -> b.callDeadline(Duration.ZERO), "callDeadline");
    assertInvalid(b -> b.waitDeadline(Duration.ofMillis(-1)), "waitDeadline");
    assertInvalid(b -> b.leaseLifetime(Duration.ZERO), "leaseLifetime");
    assertInvalid(b -> b.retryBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)), "retryBackoff max");
    assertThatThrownBy(() -> IdGenClient.builder().target(" ")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> IdGenClient.builder().name("")).isInstanceOf(IllegalArgumentException.class);
  }

  private void assertInvalid(UnaryOperator<IdGenClientBuilder> setting, String message) {
    assertThatThrownBy(() -> setting.apply(IdGenClient.builder().channel(channel)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "-orders", ".orders", "or ders", "orders/1", "é",
      "a1234567890123456789012345678901234567890123456789012345678901234"})
  void should_reject_malformed_sequence_names(String name) {
    try (IdGenClient client = IdGenClient.builder().channel(channel).build()) {
      assertThatThrownBy(() -> client.sequence(name)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("expected");
    }
  }

  @Test
  void should_accept_well_formed_sequence_names() {
    try (IdGenClient client = IdGenClient.builder().channel(channel).build()) {
      assertThat(client.sequence("Orders.v2_eu-1").sequence()).isEqualTo("Orders.v2_eu-1");
      assertThat(client.sequence("a123456789012345678901234567890123456789012345678901234567890123"))
          .isNotNull();
    }
  }

  @Test
  void should_describe_itself_with_its_name_and_servers() {
    try (IdGenClient client = IdGenClient.builder().name("billing").channel(channel).build()) {
      assertThat(client).hasToString("IdGenClient{name=billing, servers=[" + channel.authority() + "]}");
    }
  }
}
