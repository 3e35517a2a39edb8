package dev.idgen.server.access;

import static dev.idgen.server.TestServer.bearer;
import static dev.idgen.server.TestServer.count;
import static dev.idgen.server.TestServer.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.CreateSequenceRequest;
import dev.idgen.api.v1.GetSequenceRequest;
import dev.idgen.api.v1.IdGenGrpc;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.ListSequencesRequest;
import dev.idgen.api.v1.SequenceAdminGrpc;
import dev.idgen.server.ErrorDetails;
import dev.idgen.server.TestServer;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.stub.MetadataUtils;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * idgen.access with bearer tokens, in-process (certificate identities: {@link CertificateIdentitiesTest},
 * and over mutual TLS {@code TlsTest}).
 */
class AccessRulesTest {

  static final String ORDERS_TOKEN = "orders-token-0123456789";
  static final String OPS_TOKEN = "ops-token-0123456789abcdef";

  /** Access on: orders-service allocates from orders and orders-*, ops does everything. */
  static Map<String, Object> accessOn() {
    return Map.of(
        "idgen.access.enabled", true,
        "idgen.access.tokens", List.of(
            Map.of("identity", "orders-service", "token", ORDERS_TOKEN),
            Map.of("identity", "ops", "token", OPS_TOKEN)),
        "idgen.access.rules", List.of(
            Map.of("identity", "orders-service", "allocate", List.of("orders", "orders-*"), "admin", List.of()),
            Map.of("identity", "ops", "allocate", List.of("*"), "admin", List.of("*"))));
  }

  private TestServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void should_let_everyone_do_everything_when_access_control_is_off() {
    server = TestServer.start();
    server.create("orders");

    assertThat(count(server.allocate("orders", 3))).isEqualTo(3);
  }

  @Test
  void should_refuse_a_call_without_identity_as_unauthenticated() {
    server = TestServer.start(accessOn());

    StatusRuntimeException e = failure(() -> server.allocate("orders", 1));

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(e.getStatus().getDescription()).contains("Bearer");
    ErrorDetails details = ErrorDetails.of(e);
    assertThat(details.reason()).isEqualTo("UNAUTHENTICATED");
    assertThat(details.metadata()).containsOnly(entry("cause", "no_identity"));
  }

  @Test
  void should_refuse_an_unknown_or_malformed_token_as_unauthenticated() {
    server = TestServer.start(accessOn());

    StatusRuntimeException unknown = failure(() -> allocate("not-a-configured-token-at-all", "orders", 1));
    Metadata basic = new Metadata();
    basic.put(AccessInterceptor.AUTHORIZATION, "Basic b3BzOm9wcw==");
    StatusRuntimeException malformed = failure(() -> IdGenGrpc.newBlockingStub(server.channel)
        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(basic))
        .allocate(AllocateRequest.newBuilder().setSequence("orders").setCount(1).build()).next());

    assertThat(unknown.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(unknown.getStatus().getDescription()).contains("unknown bearer token")
        .doesNotContain("not-a-configured-token");
    assertThat(malformed.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(ErrorDetails.of(unknown).metadata()).containsOnly(entry("cause", "unknown_token"));
    assertThat(ErrorDetails.of(malformed).metadata()).containsOnly(entry("cause", "malformed_authorization"));
    assertThat(ErrorDetails.of(malformed).reason()).isEqualTo("UNAUTHENTICATED");
  }

  @Test
  void should_allow_allocation_from_sequences_matching_the_identity_rules() {
    server = TestServer.start(accessOn());
    admin(OPS_TOKEN).createSequence(CreateSequenceRequest.newBuilder().setName("orders").build());
    admin(OPS_TOKEN).createSequence(CreateSequenceRequest.newBuilder().setName("orders-eu").build());

    assertThat(count(allocate(ORDERS_TOKEN, "orders", 4))).isEqualTo(4);
    assertThat(count(allocate(ORDERS_TOKEN, "orders-eu", 2))).isEqualTo(2);
  }

  @Test
  void should_deny_naming_identity_operation_and_sequence() {
    server = TestServer.start(accessOn());
    admin(OPS_TOKEN).createSequence(CreateSequenceRequest.newBuilder().setName("billing").build());

    StatusRuntimeException allocate = failure(() -> allocate(ORDERS_TOKEN, "billing", 1));
    StatusRuntimeException create = failure(() -> admin(ORDERS_TOKEN)
        .createSequence(CreateSequenceRequest.newBuilder().setName("orders").build()));
    StatusRuntimeException get = failure(() -> admin(ORDERS_TOKEN)
        .getSequence(GetSequenceRequest.newBuilder().setName("billing").build()));

    assertThat(allocate.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(allocate.getStatus().getDescription())
        .contains("'orders-service'").contains("allocate from").contains("'billing'");
    assertThat(create.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(create.getStatus().getDescription()).contains("administer sequence 'orders'");
    assertThat(get.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    ErrorDetails details = ErrorDetails.of(allocate);
    assertThat(details.reason()).isEqualTo("PERMISSION_DENIED");
    assertThat(details.metadata()).containsOnly(entry("identity", "orders-service"), entry("operation", "allocate"),
        entry("sequence", "billing"));
    assertThat(ErrorDetails.of(create).metadata()).containsEntry("operation", "admin");
  }

  @Test
  void should_deny_changing_deleting_and_restoring_a_sequence_to_an_identity_that_only_allocates() {
    server = TestServer.start(accessOn());
    admin(OPS_TOKEN).createSequence(CreateSequenceRequest.newBuilder().setName("orders").build());

    List<StatusRuntimeException> denied = List.of(
        failure(() -> admin(ORDERS_TOKEN).updateSequence(dev.idgen.api.v1.UpdateSequenceRequest.newBuilder()
            .setSequence(dev.idgen.api.v1.Sequence.newBuilder().setName("orders").setMax(5)).build())),
        failure(() -> admin(ORDERS_TOKEN).deleteSequence(dev.idgen.api.v1.DeleteSequenceRequest.newBuilder()
            .setName("orders").build())),
        failure(() -> admin(ORDERS_TOKEN).undeleteSequence(dev.idgen.api.v1.UndeleteSequenceRequest.newBuilder()
            .setName("orders").build())));

    assertThat(denied).allSatisfy(e -> {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
      assertThat(e.getStatus().getDescription()).contains("administer sequence 'orders'");
      assertThat(ErrorDetails.of(e).metadata()).containsEntry("operation", "admin").containsEntry("sequence", "orders");
    });
  }

  @Test
  void should_hand_out_nothing_for_a_denied_allocation() {
    server = TestServer.start(accessOn());
    admin(OPS_TOKEN).createSequence(CreateSequenceRequest.newBuilder().setName("billing").build());

    failure(() -> allocate(ORDERS_TOKEN, "billing", 5));

    // The first IDs are still there for a caller that is allowed.
    assertThat(TestServer.ids(allocate(OPS_TOKEN, "billing", 1))).containsExactly(1L);
  }

  @Test
  void should_list_sequences_only_for_identities_that_administer_some() {
    server = TestServer.start(accessOn());
    admin(OPS_TOKEN).createSequence(CreateSequenceRequest.newBuilder().setName("orders").build());

    StatusRuntimeException denied = failure(() -> admin(ORDERS_TOKEN)
        .listSequences(ListSequencesRequest.getDefaultInstance()));

    assertThat(denied.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
    assertThat(ErrorDetails.of(denied).metadata()).doesNotContainKey("sequence"); // a listing names none
    assertThat(admin(OPS_TOKEN).listSequences(ListSequencesRequest.getDefaultInstance()).getSequencesCount())
        .isEqualTo(1);
  }

  @Test
  void should_keep_health_open_without_identity() {
    server = TestServer.start(accessOn());

    assertThat(server.health("")).isEqualTo(ServingStatus.SERVING);
    assertThat(server.health(IdGenGrpc.SERVICE_NAME)).isEqualTo(ServingStatus.SERVING);
  }

  @Test
  void should_count_denied_allocations_in_the_call_metrics() throws Exception {
    server = TestServer.start(accessOn());
    admin(OPS_TOKEN).createSequence(CreateSequenceRequest.newBuilder().setName("billing").build());
    allocate(OPS_TOKEN, "billing", 1);

    failure(() -> allocate(ORDERS_TOKEN, "billing", 1));

    String metrics = server.injector.getInstance(io.micrometer.prometheusmetrics.PrometheusMeterRegistry.class)
        .scrape();
    assertThat(metrics).contains("idgen_allocate_calls_total{sequence=\"billing\",status=\"PERMISSION_DENIED\"} 1.0");
  }

  private SequenceAdminGrpc.SequenceAdminBlockingStub admin(String token) {
    return SequenceAdminGrpc.newBlockingStub(server.channel).withInterceptors(bearer(token));
  }

  private List<IdRange> allocate(String token, String sequence, long count) {
    List<IdRange> out = new ArrayList<>();
    IdGenGrpc.newBlockingStub(server.channel).withInterceptors(bearer(token))
        .allocate(AllocateRequest.newBuilder().setSequence(sequence).setCount(count).build())
        .forEachRemaining(out::add);
    return out;
  }
}
