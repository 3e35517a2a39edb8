package dev.idgen.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import dev.idgen.api.v1.AdvanceSequenceRequest;
import dev.idgen.api.v1.AllocateRangesResponse;
import dev.idgen.api.v1.AllocateRequest;
import dev.idgen.api.v1.IdRange;
import dev.idgen.api.v1.ListReservationsResponse;
import dev.idgen.api.v1.ListSequencesResponse;
import dev.idgen.api.v1.ReserveRangeResponse;
import dev.idgen.api.v1.Sequence;
import dev.idgen.server.TestServer;
import dev.idgen.server.config.ServerSettings;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTP/JSON against the daemon on its embedded store, with the JDK's HttpClient as curl would call it: every
 * route, the allocate answer's JSON, and errors answered as the gRPC port answers them. One server for the
 * class (HTTP on a free port); the access rules, TLS and "off" are in {@link HttpAccessAndTlsTest}.
 */
class HttpJsonTest {

  @TempDir
  static Path dir;

  private static TestServer server;
  private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final JsonFormat.Parser JSON = JsonFormat.parser().usingTypeRegistry(
      JsonFormat.TypeRegistry.newBuilder().add(List.of(ErrorInfo.getDescriptor(), BadRequest.getDescriptor(),
          com.google.rpc.RetryInfo.getDescriptor())).build());

  @BeforeAll
  static void start() {
    server = TestServer.startEmbedded(dir, Map.of(
        HttpSettings.PORT, HttpSettings.ANY_FREE_PORT,
        // Short, so that ranges carry a valid_for and an advance waits only this long.
        ServerSettings.CLIENT_LEASE_LIFETIME, "1s"));
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  record Answer(int status, String body) {}

  static Answer call(String method, String path, String body) throws IOException, InterruptedException {
    return call(method, path, body, "application/json");
  }

  static Answer call(String method, String path, String body, String contentType)
      throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + path))
        .timeout(Duration.ofSeconds(10))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      b.header("Content-Type", contentType);
    }
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Answer(r.statusCode(), r.body());
  }

  static <T extends Message.Builder> T parse(String json, T builder) throws InvalidProtocolBufferException {
    JSON.merge(json, builder);
    return builder;
  }

  static com.google.rpc.Status error(String json) throws InvalidProtocolBufferException {
    return parse(json, com.google.rpc.Status.newBuilder()).build();
  }

  static <T extends Message> T detail(com.google.rpc.Status status, Class<T> type) throws InvalidProtocolBufferException {
    for (Any any : status.getDetailsList()) {
      if (any.is(type)) {
        return any.unpack(type);
      }
    }
    throw new AssertionError("no " + type.getSimpleName() + " in " + status);
  }

  @Test
  void should_read_curls_default_form_content_type_as_json() throws Exception {
    Answer created = call("POST", "/v1/sequences", "{\"name\": \"curl-form\"}",
        "application/x-www-form-urlencoded");
    assertThat(created.status()).as(created.body()).isEqualTo(200);
    Answer allocated = call("POST", "/v1/sequences/curl-form:allocate", "{\"count\": 10}",
        "application/x-www-form-urlencoded");
    assertThat(allocated.status()).as(allocated.body()).isEqualTo(200);
    assertThat(allocated.body()).contains("\"count\":\"10\"");
  }

  @Test
  void should_allocate_with_int64s_as_strings_and_valid_for() throws Exception {
    assertThat(call("POST", "/v1/sequences", "{\"name\": \"orders\", \"start\": 1000}").status()).isEqualTo(200);

    Answer a = call("POST", "/v1/sequences/orders:allocate", "{\"count\": 10}");

    assertThat(a.status()).isEqualTo(200);
    // proto3 JSON: int64 as strings, Duration as "1s".
    assertThat(a.body()).contains("\"first\":\"1000\"").contains("\"count\":\"10\"").contains("\"validFor\":\"1s\"");
    AllocateRangesResponse ranges = parse(a.body(), AllocateRangesResponse.newBuilder()).build();
    assertThat(ranges.getRangesList()).extracting(IdRange::getCount).containsExactly(10L);
    assertThat(ranges.getRanges(0).getValidFor().getSeconds()).isEqualTo(1);
    // The next call over gRPC continues after them: one allocator behind both ports.
    Iterator<IdRange> next = server.idGen().allocate(
        AllocateRequest.newBuilder().setSequence("orders").setCount(1).build());
    assertThat(next.next().getFirst()).isEqualTo(1010);
  }

  @Test
  void should_serve_every_admin_route() throws Exception {
    Answer created = call("POST", "/v1/sequences", "{\"name\": \"admin-1\", \"max\": \"1000000\"}");
    assertThat(created.status()).isEqualTo(200);
    Sequence sequence = parse(created.body(), Sequence.newBuilder()).build();
    assertThat(sequence.getMax()).isEqualTo(1_000_000);

    Answer got = call("GET", "/v1/sequences/admin-1", null);
    assertThat(parse(got.body(), Sequence.newBuilder()).getName()).isEqualTo("admin-1");

    Answer list = call("GET", "/v1/sequences?page_size=1000", null);
    assertThat(parse(list.body(), ListSequencesResponse.newBuilder()).getSequencesList())
        .extracting(Sequence::getName).contains("admin-1");

    Answer patched = call("PATCH", "/v1/sequences/admin-1?update_mask=max", "{\"max\": \"2000000\"}");
    assertThat(patched.status()).as(patched.body()).isEqualTo(200);
    assertThat(parse(patched.body(), Sequence.newBuilder()).getMax()).isEqualTo(2_000_000);

    Answer reserved = call("POST", "/v1/sequences/admin-1:reserveRange", "{\"count\": 5, \"requestId\": \"r-1\"}");
    assertThat(reserved.status()).as(reserved.body()).isEqualTo(200);
    assertThat(parse(reserved.body(), ReserveRangeResponse.newBuilder()).getReservation().getCount()).isEqualTo(5);

    Answer reservations = call("GET", "/v1/sequences/admin-1/reservations", null);
    assertThat(parse(reservations.body(), ListReservationsResponse.newBuilder()).getReservationsList())
        .singleElement().satisfies(r -> assertThat(r.getRequestId()).isEqualTo("r-1"));

    Answer deleted = call("DELETE", "/v1/sequences/admin-1", null);
    assertThat(deleted.status()).isEqualTo(200);
    assertThat(parse(deleted.body(), Sequence.newBuilder()).hasDeleteTime()).isTrue();

    Answer undeleted = call("POST", "/v1/sequences/admin-1:undelete", "{}");
    assertThat(undeleted.status()).as(undeleted.body()).isEqualTo(200);
    assertThat(parse(undeleted.body(), Sequence.newBuilder()).hasDeleteTime()).isFalse();
  }

  @Test
  void should_advance_over_http_as_over_grpc() throws Exception {
    server.create("adv");
    Answer advanced = call("POST", "/v1/sequences/adv:advance", "{\"floor\": \"5000\"}");
    assertThat(advanced.status()).as(advanced.body()).isEqualTo(200);

    Answer a = call("POST", "/v1/sequences/adv:allocate", "{\"count\": 1}");
    assertThat(parse(a.body(), AllocateRangesResponse.newBuilder()).getRanges(0).getFirst()).isGreaterThan(5000);

    // At the max: the same refusal on both ports.
    Answer atMax = call("POST", "/v1/sequences/adv:advance", "{\"floor\": \"9223372036854775807\"}");
    StatusRuntimeException grpc = TestServer.failure(() -> server.admin().advanceSequence(
        AdvanceSequenceRequest.newBuilder().setName("adv").setFloor(Long.MAX_VALUE).build()));
    assertThat(atMax.status()).isEqualTo(400); // FAILED_PRECONDITION
    assertThat(error(atMax.body())).isEqualTo(StatusProto.fromThrowable(grpc));
  }

  @Test
  void should_answer_not_found_with_404_and_the_same_status_as_grpc() throws Exception {
    Answer a = call("POST", "/v1/sequences/nope:allocate", "{\"count\": 1}");
    StatusRuntimeException grpc = TestServer.failure(() -> server.idGen().allocate(
        AllocateRequest.newBuilder().setSequence("nope").setCount(1).build()).next());

    assertThat(a.status()).isEqualTo(404);
    com.google.rpc.Status status = error(a.body());
    assertThat(status.getCode()).isEqualTo(5);
    assertThat(detail(status, ErrorInfo.class).getReason()).isEqualTo("SEQUENCE_NOT_FOUND");
    assertThat(status).isEqualTo(StatusProto.fromThrowable(grpc));
  }

  @Test
  void should_answer_invalid_arguments_with_400_and_bad_request() throws Exception {
    server.create("bad-count");
    Answer a = call("POST", "/v1/sequences/bad-count:allocate", "{\"count\": 0}");

    assertThat(a.status()).isEqualTo(400);
    com.google.rpc.Status status = error(a.body());
    assertThat(detail(status, ErrorInfo.class).getReason()).isEqualTo("INVALID_COUNT");
    assertThat(detail(status, BadRequest.class).getFieldViolations(0).getField()).isEqualTo("count");

    Answer name = call("GET", "/v1/sequences/bad%20name", null);
    assertThat(name.status()).isEqualTo(400);
    assertThat(detail(error(name.body()), ErrorInfo.class).getReason()).isEqualTo("INVALID_SEQUENCE_NAME");
  }

  @Test
  void should_answer_a_body_that_is_not_json_with_400_saying_what_to_send_and_keep_serving() throws Exception {
    server.create("json");
    Answer broken = call("POST", "/v1/sequences/json:allocate", "{\"count\": 1");
    Answer wrongType = call("POST", "/v1/sequences/json:allocate", "{\"count\": \"ten\"}");
    Answer notJson = call("POST", "/v1/sequences/json:allocate", "count=1", "text/plain");
    Answer noRoute = call("GET", "/v1/nothing", null);

    assertThat(broken.status()).isEqualTo(400);
    com.google.rpc.Status status = error(broken.body());
    assertThat(status.getCode()).isEqualTo(3);
    assertThat(status.getMessage()).contains("POST /v1/sequences/json:allocate").contains("JSON");
    assertThat(detail(status, ErrorInfo.class).getReason()).isEqualTo("MALFORMED_REQUEST");
    assertThat(wrongType.status()).as(wrongType.body()).isEqualTo(400);
    assertThat(error(wrongType.body()).getMessage()).contains("idgen.v1.AllocateRequest");
    assertThat(detail(error(wrongType.body()), ErrorInfo.class).getReason()).isEqualTo("MALFORMED_REQUEST");
    assertThat(notJson.status()).as(notJson.body()).isBetween(400, 415);
    assertThat(error(notJson.body()).getCode()).isEqualTo(3);
    assertThat(noRoute.status()).isEqualTo(404);
    assertThat(error(noRoute.body()).getMessage()).contains("docs/http.md");
    // Still serving.
    assertThat(call("POST", "/v1/sequences/json:allocate", "{\"count\": 2}").status()).isEqualTo(200);
  }

  @Test
  void should_refuse_grpc_on_the_http_port() throws Exception {
    Answer a = call("POST", "/idgen.v1.IdGen/Allocate", "", "application/grpc");

    assertThat(a.status()).isEqualTo(415);
    assertThat(a.body()).contains("idgen.grpc.port");
  }

  @Test
  void should_count_http_calls_in_the_rpc_metrics() throws Exception {
    server.create("metered");
    call("POST", "/v1/sequences/metered:allocate", "{\"count\": 3}");
    call("POST", "/v1/sequences/metered:allocate", "{\"count\": 4}");

    String metrics = server.injector.getInstance(PrometheusMeterRegistry.class).scrape();

    assertThat(TestServer.sample(metrics,
        "grpc_server_processing_duration_seconds_count{method=\"AllocateRanges\",methodType=\"UNARY\","
            + "service=\"idgen.v1.IdGen\",statusCode=\"OK\"}")).isGreaterThanOrEqualTo(2);
    assertThat(metrics).containsPattern("idgen_ids_allocated_total\\{[^}]*sequence=\"(metered|_other)\"[^}]*\\} [1-9]");
  }
}
