package dev.idgen.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.util.JsonFormat;
import com.google.rpc.ErrorInfo;
import dev.idgen.server.TestServer;
import dev.idgen.server.lifecycle.ServerComponent;
import dev.idgen.server.transport.TestCertificates;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.annotation.Nullable;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP port over TLS with access rules on: the gRPC port's certificate, bearer tokens and client
 * certificates, 401 and 403 as UNAUTHENTICATED and PERMISSION_DENIED. One server for the class; and a
 * server with the tests' default, {@code idgen.http.port = 0}, serves no HTTP at all.
 */
class HttpAccessAndTlsTest {
  static final String OPS_TOKEN = "ops-token-0123456789abcdef";
  static final String ORDERS_TOKEN = "orders-token-0123456789";

  @TempDir
  static Path dir;

  private static TestServer server;
  private static TestCertificates.Issued ca;
  private static TestCertificates.Issued client;

  @BeforeAll
  static void start() throws Exception {
    ca = TestCertificates.ca("idgen-test-ca");
    Path caFile = ca.write(dir, "ca");
    Path serverCrt = TestCertificates.leaf(ca, "CN=idgen-server", 100, "localhost").write(dir, "server");
    client = TestCertificates.leaf(ca, "O=Acme,CN=cert-client", 200);
    Map<String, Object> s = new HashMap<>();
    s.put(HttpSettings.PORT, HttpSettings.ANY_FREE_PORT);
    s.put("idgen.grpc.tls.enabled", true);
    s.put("idgen.grpc.tls.cert-chain", serverCrt.toString());
    s.put("idgen.grpc.tls.private-key", dir.resolve("server.key").toString());
    s.put("idgen.grpc.tls.trust-certs", caFile.toString());
    s.put("idgen.grpc.tls.client-auth", "optional");
    s.put("idgen.access.enabled", true);
    s.put("idgen.access.tokens", List.of(
        Map.of("identity", "orders-service", "token", ORDERS_TOKEN),
        Map.of("identity", "ops", "token", OPS_TOKEN)));
    s.put("idgen.access.rules", List.of(
        Map.of("identity", "orders-service", "allocate", List.of("orders"), "admin", List.of()),
        Map.of("identity", "cert-client", "allocate", List.of("orders")),
        Map.of("identity", "ops", "allocate", List.of("*"), "admin", List.of("*"))));
    server = TestServer.start(s);
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
  }

  /** An HTTPS client that trusts the test CA, with the client certificate or without. */
  private static HttpClient https(boolean withCertificate) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", ca.certificate());
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (withCertificate) {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      keys.setKeyEntry("client", client.keys().getPrivate(), new char[0],
          new Certificate[] {client.certificate(), ca.certificate()});
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, new char[0]);
    }
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(5)).build();
  }

  private static HttpResponse<String> post(HttpClient http, String path, String body, @Nullable String token)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.httpPort() + path))
        .timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String reason(String json) throws Exception {
    com.google.rpc.Status.Builder status = com.google.rpc.Status.newBuilder();
    JsonFormat.parser().usingTypeRegistry(JsonFormat.TypeRegistry.newBuilder().add(ErrorInfo.getDescriptor()).build())
        .merge(json, status);
    return status.getDetails(0).unpack(ErrorInfo.class).getReason();
  }

  @Test
  void should_enforce_bearer_tokens_and_access_rules_over_https() throws Exception {
    HttpClient http = https(false);
    assertThat(post(http, "/v1/sequences", "{\"name\": \"orders\"}", OPS_TOKEN).statusCode()).isIn(200, 409);
    post(http, "/v1/sequences", "{\"name\": \"billing\"}", OPS_TOKEN);

    HttpResponse<String> anonymous = post(http, "/v1/sequences/orders:allocate", "{\"count\": 1}", null);
    HttpResponse<String> unknownToken = post(http, "/v1/sequences/orders:allocate", "{\"count\": 1}", "nope-0123456789");
    HttpResponse<String> allowed = post(http, "/v1/sequences/orders:allocate", "{\"count\": 1}", ORDERS_TOKEN);
    HttpResponse<String> otherSequence = post(http, "/v1/sequences/billing:allocate", "{\"count\": 1}", ORDERS_TOKEN);
    HttpResponse<String> adminDenied = post(http, "/v1/sequences", "{\"name\": \"x\"}", ORDERS_TOKEN);

    assertThat(anonymous.statusCode()).isEqualTo(401);
    assertThat(reason(anonymous.body())).isEqualTo("UNAUTHENTICATED");
    assertThat(unknownToken.statusCode()).isEqualTo(401);
    assertThat(allowed.statusCode()).as(allowed.body()).isEqualTo(200);
    assertThat(otherSequence.statusCode()).isEqualTo(403);
    assertThat(reason(otherSequence.body())).isEqualTo("PERMISSION_DENIED");
    assertThat(otherSequence.body()).contains("orders-service").contains("billing");
    assertThat(adminDenied.statusCode()).isEqualTo(403);
  }

  @Test
  void should_take_the_identity_of_a_client_certificate() throws Exception {
    post(https(false), "/v1/sequences", "{\"name\": \"orders\"}", OPS_TOKEN); // may exist: either answer will do
    HttpClient withCertificate = https(true);

    assertThat(post(withCertificate, "/v1/sequences/orders:allocate", "{\"count\": 2}", null).statusCode())
        .isEqualTo(200);
    HttpResponse<String> denied = post(withCertificate, "/v1/sequences", "{\"name\": \"y\"}", null);
    assertThat(denied.statusCode()).isEqualTo(403);
    assertThat(denied.body()).contains("cert-client");
  }

  @Test
  void should_serve_no_plaintext_http_when_tls_is_on() {
    HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    assertThatThrownBy(() -> plain.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/sequences")).timeout(Duration.ofSeconds(5)).build(),
        HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(java.io.IOException.class);
  }

  @Test
  void should_serve_no_http_when_the_port_is_0() {
    try (TestServer off = TestServer.start()) { // the tests' default: idgen.http.port = 0
      assertThat(off.httpPort()).isEqualTo(-1);
      Set<ServerComponent> components = off.injector.getInstance(
          com.google.inject.Key.get(new com.google.inject.TypeLiteral<Set<ServerComponent>>() {}));
      assertThat(components).noneMatch(HttpServer.class::isInstance);
    }
  }
}
