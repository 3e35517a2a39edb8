package dev.idgen.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idgen.client.IdGenClientException;
import dev.idgen.client.IdSource;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Sources by name: one per name, each with its own IDs, closed together. */
class InMemoryIdSourcesTest {

  @Test
  void should_give_each_name_one_source_of_its_own() {
    InMemoryIdSources ids = InMemoryIdSources.startingAt(10);
    Function<String, IdSource> byName = ids::sequence;

    IdSource orders = byName.apply("orders");
    assertThat(orders.next()).isEqualTo(10);
    assertThat(byName.apply("invoices").next()).as("a sequence of its own").isEqualTo(10);
    assertThat(byName.apply("orders")).isSameAs(orders).isSameAs(ids.source("orders"));
    assertThat(orders.next()).isEqualTo(11);
  }

  @Test
  void should_refuse_a_malformed_name() {
    InMemoryIdSources ids = InMemoryIdSources.startingAt(1);

    assertThatThrownBy(() -> ids.sequence("no/slash")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'no/slash'");
    assertThatThrownBy(() -> ids.sequence(null)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void should_close_every_source_and_refuse_new_names_once_closed() {
    InMemoryIdSources ids = InMemoryIdSources.startingAt(1);
    IdSource orders = ids.sequence("orders");

    ids.close();

    assertThat(catchThrowableOfType(IdGenClientException.class, orders::next).reason())
        .isEqualTo(IdGenClientException.Reason.CLOSED);
    assertThatThrownBy(() -> ids.sequence("invoices")).isInstanceOf(IllegalStateException.class)
        .hasMessage("the InMemoryIdSources is closed");
  }
}
