package dev.idgen.server.api;

import static dev.idgen.server.TestServer.failure;
import static dev.idgen.server.TestServer.ids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.ListSequencesRequest;
import dev.idgen.api.v1.ListSequencesResponse;
import dev.idgen.api.v1.Sequence;
import dev.idgen.api.v1.SequenceView;
import dev.idgen.api.v1.StripeState;
import dev.idgen.core.SequenceDefinition;
import dev.idgen.server.TestServer;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SequenceAdminServiceTest {

  private TestServer server;

  @BeforeEach
  void start() {
    server = TestServer.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void should_create_a_sequence_with_the_defaults_for_unset_fields() {
    Sequence sequence = server.create("orders");

    assertThat(sequence.getName()).isEqualTo("orders");
    assertThat(sequence.getStart()).isEqualTo(SequenceDefinition.DEFAULT_START);
    assertThat(sequence.getMax()).isEqualTo(Long.MAX_VALUE);
    assertThat(sequence.getStripes()).isEqualTo(1);
    assertThat(sequence.getNodeBlockSize()).isEqualTo(SequenceDefinition.DEFAULT_NODE_BLOCK_SIZE);
    assertThat(sequence.getDcBlockSize()).isEqualTo(SequenceDefinition.DEFAULT_DC_BLOCK_SIZE);
    assertThat(sequence.getStripeStatesList()).hasSize(1);
    StripeState stripe = sequence.getStripeStates(0);
    assertThat(stripe.hasNextUnreserved()).isTrue();
    assertThat(stripe.getNextUnreserved()).isEqualTo(1);
    assertThat(stripe.getRemaining()).isEqualTo(Long.MAX_VALUE);
    assertThat(sequence.getRemaining()).isEqualTo(Long.MAX_VALUE);
    assertThat(sequence.getHeadroom()).isEqualTo(1.0);
    assertThat(sequence.getServerReserve()).isZero();
    assertThat(sequence.getDatacenterReservesList()).isEmpty();
  }

  @Test
  void should_create_a_sequence_with_every_field_set() {
    Sequence sequence = server.admin().createSequence(CreateSequenceRequest.newBuilder()
        .setName("legacy.ids_2")
        .setStart(0) // explicitly set to the proto default: must not be read as unset
        .setMax(2_147_483_647)
        .setStripes(3)
        .setNodeBlockSize(50)
        .setDcBlockSize(5_000)
        .build());

    assertThat(sequence.getStart()).isZero();
    assertThat(sequence.getMax()).isEqualTo(2_147_483_647L);
    assertThat(sequence.getStripes()).isEqualTo(3);
    assertThat(sequence.getNodeBlockSize()).isEqualTo(50);
    assertThat(sequence.getDcBlockSize()).isEqualTo(5_000);
    assertThat(sequence.getStripeStatesList()).extracting(StripeState::getNextUnreserved)
        .containsExactly(0L, 1L, 2L);
    assertThat(sequence.getRemaining()).isEqualTo(2_147_483_648L);
  }

  @Test
  void should_reject_a_max_below_the_start() {
    StatusRuntimeException error = failure(() -> server.admin().createSequence(
        CreateSequenceRequest.newBuilder().setName("s").setStart(10).setMax(9).build()));

    assertThat(error.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(error.getStatus().getDescription()).contains("max 9").contains("start 10");
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 65, -1})
  void should_reject_stripes_outside_one_to_64(int stripes) {
    StatusRuntimeException error = failure(() -> server.admin().createSequence(
        CreateSequenceRequest.newBuilder().setName("s").setStripes(stripes).build()));

    assertThat(error.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(error.getStatus().getDescription()).contains("stripes " + stripes).contains("1 to 64");
  }

  @Test
  void should_reject_a_malformed_name_on_create() {
    StatusRuntimeException error = failure(() -> server.create("bad name"));

    assertThat(error.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
  }

  @Test
  void should_return_already_exists_for_a_taken_name_whatever_the_settings() {
    server.create("orders");

    StatusRuntimeException error = failure(() -> server.admin().createSequence(
        CreateSequenceRequest.newBuilder().setName("orders").setStart(500).build()));

    assertThat(error.getStatus().getCode()).isEqualTo(Status.Code.ALREADY_EXISTS);
    assertThat(error.getStatus().getDescription()).contains("orders");
  }

  @Test
  void should_describe_the_live_state_after_allocations() {
    // A first refill of exactly 100 (node_block_size caps it); 90 left after 10 is above the low-water
    // mark (100 / 1.25 = 80), so no background refill can change the state under the test.
    server.admin().createSequence(CreateSequenceRequest.newBuilder()
        .setName("orders").setStart(1).setMax(1_000).setNodeBlockSize(100).setDcBlockSize(100).build());
    assertThat(ids(server.allocate("orders", 10))).hasSize(10).startsWith(1L).endsWith(10L);

    Sequence sequence = get("orders");

    StripeState stripe = sequence.getStripeStates(0);
    assertThat(stripe.getNextUnreserved()).isEqualTo(101);
    assertThat(stripe.getRemaining()).isEqualTo(900);
    assertThat(sequence.getRemaining()).isEqualTo(900);
    assertThat(sequence.getHeadroom()).isCloseTo(0.9, within(1e-12));
    assertThat(sequence.getServerReserve()).isEqualTo(90);
  }

  @Test
  void should_leave_next_unreserved_absent_when_a_stripe_is_used_up() {
    server.admin().createSequence(
        CreateSequenceRequest.newBuilder().setName("tiny").setStart(5).setMax(14).build());
    server.allocate("tiny", 10);

    Sequence sequence = get("tiny");

    assertThat(sequence.getStripeStates(0).hasNextUnreserved()).isFalse();
    assertThat(sequence.getStripeStates(0).getRemaining()).isZero();
    assertThat(sequence.getRemaining()).isZero();
    assertThat(sequence.getHeadroom()).isZero();
    assertThat(sequence.getServerReserve()).isZero();
  }

  @Test
  void should_return_not_found_for_get_and_advance_of_an_unknown_sequence() {
    StatusRuntimeException get = failure(() -> get("nope"));
    StatusRuntimeException advance = failure(() -> advance("nope", 10));

    assertThat(get.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(get.getStatus().getDescription()).contains("nope");
    assertThat(advance.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
  }

  @Test
  void should_reject_a_malformed_name_on_get_and_advance() {
    assertThat(failure(() -> get("")).getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(failure(() -> advance("\u0007bell", 1)).getStatus().getCode())
        .isEqualTo(Status.Code.INVALID_ARGUMENT);
  }

  @Test
  void should_list_sequences_in_name_order_a_page_at_a_time() {
    for (String name : List.of("e", "b", "d", "a", "c")) {
      server.create(name);
    }

    ListSequencesResponse first = list(2, "");
    ListSequencesResponse second = list(2, first.getNextPageToken());
    ListSequencesResponse third = list(2, second.getNextPageToken());

    assertThat(first.getSequencesList()).extracting(Sequence::getName).containsExactly("a", "b");
    assertThat(first.getNextPageToken()).isNotEmpty().isNotEqualTo("b").doesNotContain("b");
    assertThat(second.getSequencesList()).extracting(Sequence::getName).containsExactly("c", "d");
    assertThat(third.getSequencesList()).extracting(Sequence::getName).containsExactly("e");
    assertThat(third.getNextPageToken()).isEmpty();
    assertThat(third.getSequences(0).getStripeStatesList()).as("the basic view: no live state").isEmpty();
  }

  @Test
  void should_list_a_default_page_of_100_when_page_size_is_unset() {
    for (int i = 0; i < 101; i++) {
      server.create(String.format("s%03d", i));
    }

    ListSequencesResponse page = list(0, "");

    assertThat(page.getSequencesCount()).isEqualTo(100);
    assertThat(page.getNextPageToken()).isNotEmpty();
    assertThat(list(0, page.getNextPageToken()).getSequencesList()).extracting(Sequence::getName)
        .containsExactly("s100");
  }

  @Test
  void should_end_with_an_empty_token_when_the_last_page_is_exactly_full() {
    server.create("a");
    server.create("b");

    ListSequencesResponse page = list(2, "");

    assertThat(page.getSequencesCount()).isEqualTo(2);
    assertThat(page.getNextPageToken()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(ints = {-1, Integer.MIN_VALUE})
  void should_reject_a_negative_page_size(int pageSize) {
    StatusRuntimeException error = failure(() -> list(pageSize, ""));

    assertThat(error.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(error.getStatus().getDescription()).contains("page_size").contains(">= 0");
  }

  @ParameterizedTest
  @ValueSource(ints = {1001, 5000, Integer.MAX_VALUE})
  void should_return_at_most_1000_sequences_for_a_larger_page_size(int pageSize) {
    for (int i = 0; i < 1001; i++) {
      server.store.create(SequenceDefinition.withDefaults(String.format("s%04d", i)));
    }

    ListSequencesResponse page = list(pageSize, "");

    assertThat(page.getSequencesCount()).isEqualTo(1000);
    assertThat(list(pageSize, page.getNextPageToken()).getSequencesList()).extracting(Sequence::getName)
        .containsExactly("s1000");
  }

  @ParameterizedTest
  @ValueSource(strings = {"not a name", "b", "YQ", "%%%", "AWEAAAAA"})
  void should_reject_a_page_token_it_did_not_return(String token) {
    StatusRuntimeException error = failure(() -> list(10, token));

    assertThat(error.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(error.getStatus().getDescription()).contains("page_token");
  }

  @Test
  void should_reject_a_tampered_page_token() {
    for (String name : List.of("a", "b", "c", "d")) {
      server.create(name);
    }
    String token = list(2, "").getNextPageToken();
    // Every one-character change of the token: none may resume the listing elsewhere.
    String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    int refused = 0;
    for (int i = 0; i < token.length(); i++) {
      for (char c : alphabet.toCharArray()) {
        if (c == token.charAt(i)) {
          continue;
        }
        String tampered = token.substring(0, i) + c + token.substring(i + 1);
        try {
          ListSequencesResponse page = list(2, tampered);
          // Only base64's unused low bits of the last character may change without changing the bytes.
          assertThat(page.getSequencesList()).extracting(Sequence::getName).containsExactly("c", "d");
        } catch (StatusRuntimeException e) {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          refused++;
        }
      }
    }
    assertThat(refused).isGreaterThan(token.length() * 60);
  }

  @Test
  void should_report_the_creation_time_the_store_recorded(@TempDir Path dir) {
    try (TestServer embedded = TestServer.startEmbedded(dir)) {
      Instant before = Instant.now().truncatedTo(ChronoUnit.MILLIS);
      Sequence created = embedded.create("orders");
      Instant after = Instant.now();

      assertThat(created.hasCreateTime()).isTrue();
      Instant time = Instant.ofEpochSecond(
          created.getCreateTime().getSeconds(), created.getCreateTime().getNanos());
      assertThat(time).isBetween(before, after);
      assertThat(embedded.admin().getSequence(GetSequenceRequest.newBuilder().setName("orders").build())
          .getCreateTime()).isEqualTo(created.getCreateTime());
      for (SequenceView view : SequenceView.values()) {
        if (view == SequenceView.UNRECOGNIZED) {
          continue;
        }
        assertThat(embedded.admin().listSequences(ListSequencesRequest.newBuilder().setView(view).build())
            .getSequences(0).getCreateTime()).as("view %s", view).isEqualTo(created.getCreateTime());
      }
    }
  }

  @Test
  void should_page_over_many_sequences_returning_each_once() {
    Set<String> created = new TreeSet<>();
    for (int i = 0; i < 257; i++) {
      String name = Integer.toString(i * 7919 % 1000, 36) + "-" + i; // names not created in name order
      created.add(name);
      server.store.create(SequenceDefinition.withDefaults(name));
    }
    List<String> listed = new ArrayList<>();
    String token = "";
    int pages = 0;
    do {
      ListSequencesResponse page = list(10, token);
      page.getSequencesList().forEach(s -> listed.add(s.getName()));
      token = page.getNextPageToken();
      pages++;
    } while (!token.isEmpty());

    assertThat(listed).containsExactlyElementsOf(created);
    assertThat(pages).isEqualTo(26);
  }

  @Test
  void should_advance_past_a_floor_and_return_the_sequence() {
    server.create("orders");
    server.allocate("orders", 5);

    Sequence advanced = advance("orders", 50_000);

    assertThat(advanced.getName()).isEqualTo("orders");
    assertThat(advanced.getStripeStates(0).getNextUnreserved()).isGreaterThan(50_000);
    assertThat(ids(server.allocate("orders", 100))).allSatisfy(id -> assertThat(id).isGreaterThan(50_000));
  }

  @Test
  void should_change_nothing_when_advancing_below_where_the_sequence_is() {
    server.create("orders");
    long before = ids(server.allocate("orders", 1)).get(0);

    advance("orders", 0);

    assertThat(ids(server.allocate("orders", 1)).get(0)).isEqualTo(before + 1);
  }

  @Test
  void should_refuse_to_advance_to_or_past_the_max_with_failed_precondition() {
    server.admin().createSequence(CreateSequenceRequest.newBuilder().setName("s").setMax(100).build());

    StatusRuntimeException error = failure(() -> advance("s", 100));

    assertThat(error.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(error.getStatus().getDescription()).contains("'s'").contains("100");
  }

  @Test
  void should_answer_internal_without_details_when_the_store_fails_unexpectedly_and_keep_serving() {
    server.create("orders");
    server.store.hook = operation -> {
      if (operation.equals("list")) {
        throw new IllegalStateException("secret detail of a bug");
      }
    };

    StatusRuntimeException error = failure(() -> list(10, ""));

    assertThat(error.getStatus().getCode()).isEqualTo(Status.Code.INTERNAL);
    assertThat(error.getStatus().getDescription()).doesNotContain("secret");
    server.store.hook = operation -> {};
    assertThat(list(10, "").getSequencesList()).extracting(Sequence::getName).containsExactly("orders");
  }

  private Sequence get(String name) {
    return server.admin().getSequence(GetSequenceRequest.newBuilder().setName(name).build());
  }

  private Sequence advance(String name, long floor) {
    return server.admin().advanceSequence(
        AdvanceSequenceRequest.newBuilder().setName(name).setFloor(floor).build());
  }

  @Test
  void should_list_and_describe_without_loading_any_sequence_into_the_server() {
    for (int i = 0; i < 40; i++) {
      server.create(String.format("tenant-%02d", i));
    }
    ListSequencesResponse basic = list(1000, "");
    ListSequencesResponse full = server.admin().listSequences(ListSequencesRequest.newBuilder()
        .setPageSize(1000).setView(SequenceView.SEQUENCE_VIEW_FULL).build());
    server.admin().getSequence(GetSequenceRequest.newBuilder().setName("tenant-07").build());

    assertThat(basic.getSequencesList()).hasSize(40).allSatisfy(s -> {
      assertThat(s.getName()).startsWith("tenant-");
      assertThat(s.hasRemaining()).as("basic view: definitions only").isFalse();
      assertThat(s.getStripeStatesList()).isEmpty();
    });
    assertThat(full.getSequencesList()).hasSize(40)
        .allSatisfy(s -> assertThat(s.hasRemaining()).as("full view: live state").isTrue());
    for (int i = 0; i < 40; i++) {
      assertThat(server.allocator().isLoaded(String.format("tenant-%02d", i)))
          .as("an admin read takes no reserve").isFalse();
    }
    server.allocate("tenant-03", 1);
    assertThat(server.allocator().isLoaded("tenant-03")).isTrue();
  }

  private ListSequencesResponse list(int pageSize, String token) {
    return server.admin().listSequences(
        ListSequencesRequest.newBuilder().setPageSize(pageSize).setPageToken(token).build());
  }
}
