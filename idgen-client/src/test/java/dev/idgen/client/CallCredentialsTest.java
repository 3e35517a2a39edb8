package dev.idgen.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Call credentials and interceptors set on the builder: what reaches the server, call after call. An
 * in-process server (which, like TLS, offers privacy and integrity) records each call's
 * {@code authorization} header; every lease is 5 IDs, so {@code next(5)} is one call.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CallCredentialsTest {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> ORDER = Metadata.Key.of("x-order", Metadata.ASCII_STRING_MARSHALLER);

  @TempDir
  Path dir;

  private final FakeBackend backend = new FakeBackend().create("orders").create("other");
  private final FakeIdGenService service = new FakeIdGenService(backend);
  private final Queue<String> authorizations = new ConcurrentLinkedQueue<>();
  private final Queue<List<String>> orders = new ConcurrentLinkedQueue<>();
  private final InlineScheduler scheduler = new InlineScheduler();
  private Server server;
  private ManagedChannel channel;
  private IdGenClient client;

  @BeforeEach
  void setUp() throws IOException {
    ServerInterceptor record = new ServerInterceptor() {
      @Override
      public <Q, A> ServerCall.Listener<Q> interceptCall(
          ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        String authorization = headers.get(AUTHORIZATION);
        authorizations.add(authorization == null ? "none" : authorization);
        Iterable<String> order = headers.getAll(ORDER);
        orders.add(order == null ? List.of() : toList(order));
        return next.startCall(call, headers);
      }
    };
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).directExecutor()
        .addService(ServerInterceptors.intercept(service, record)).build().start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
  }

  private static List<String> toList(Iterable<String> values) {
    List<String> list = new ArrayList<>();
    values.forEach(list::add);
    return list;
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    if (client != null) {
      client.close();
    }
    scheduler.shutdownNow();
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private IdGenClientBuilder builder() {
    return IdGenClient.builder().channel(channel).executor(scheduler).minLeaseSize(5).maxLeaseSize(5)
        .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(5));
  }

  @Test
  void should_send_a_fixed_bearer_token_with_every_call() {
    client = builder().bearerToken("orders-token-0123456789").build();

    assertThat(client.sequence("orders").next(12)).hasSize(12);

    assertThat(authorizations).hasSizeGreaterThanOrEqualTo(3).containsOnly("Bearer orders-token-0123456789");
  }

  @Test
  void should_ask_the_supplier_at_every_call() {
    AtomicInteger n = new AtomicInteger();
    client = builder().bearerToken(() -> "token-" + n.incrementAndGet()).build();
    IdSource source = client.sequence("orders"); // call 1

    source.next(5); // the refill rule asks for call 2 on the way
    Await.until("call 2", () -> authorizations.size() >= 2);

    assertThat(authorizations).startsWith("Bearer token-1", "Bearer token-2");
    // One token per call: no token went out twice, and each was one the supplier gave. A refill may have asked
    // for a further token whose call has not reached the server yet, so the supplier may be ahead, never behind.
    List<String> seen = new ArrayList<>(authorizations);
    assertThat(seen).doesNotHaveDuplicates();
    assertThat(seen).allSatisfy(header -> assertThat(Integer.parseInt(header.substring("Bearer token-".length())))
        .isBetween(1, n.get()));
    assertThat(n.get()).isGreaterThanOrEqualTo(seen.size());
  }

  @Test
  void should_send_the_token_of_a_rotated_file_from_the_next_call_on() throws IOException {
    Path file = Files.writeString(dir.resolve("token"), "old-token-0123456789\n");
    client = builder().bearerTokenFile(file).build();
    IdSource source = client.sequence("orders");
    assertThat(source.next(3)).hasSize(3);
    assertThat(authorizations).containsOnly("Bearer old-token-0123456789");

    // As a Kubernetes secret update does: a new file moved into place.
    Path staged = Files.writeString(dir.resolve("token.new"), "new-token-9876543210");
    Files.move(staged, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    assertThat(client.sequence("other").next(5)).hasSize(5);
    source.next(10);

    // A call that began before the move may still carry the old token; none after the first new one.
    List<String> sent = new ArrayList<>(authorizations);
    int first = sent.indexOf("Bearer new-token-9876543210");
    assertThat(first).isPositive();
    assertThat(sent.subList(first, sent.size())).hasSizeGreaterThanOrEqualTo(2)
        .containsOnly("Bearer new-token-9876543210");
  }

  @Test
  void should_keep_the_last_token_while_the_file_is_missing_and_fail_at_build_without_one() throws IOException {
    Path file = Files.writeString(dir.resolve("token"), "old-token-0123456789");
    client = builder().bearerTokenFile(file).build();
    IdSource source = client.sequence("orders");
    Files.delete(file);

    assertThat(source.next(10)).hasSize(10);

    assertThat(authorizations).hasSizeGreaterThan(1).containsOnly("Bearer old-token-0123456789");
    assertThatThrownBy(() -> builder().bearerTokenFile(dir.resolve("missing")).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("missing");
    Path empty = Files.writeString(dir.resolve("empty"), "\n");
    assertThatThrownBy(() -> builder().bearerTokenFile(empty).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("empty");
  }

  @Test
  void should_refuse_a_malformed_token_and_fail_calls_whose_supplier_fails() {
    assertThatThrownBy(() -> builder().bearerToken("two words")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> builder().bearerToken("")).isInstanceOf(IllegalArgumentException.class);
    client = builder().bearerToken(() -> {
      throw new IllegalStateException("the vault is sealed");
    }).build();

    IdGenClientException e = catchThrowableOfType(IdGenClientException.class, () -> client.sequence("orders").next());

    assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.REJECTED);
    assertThat(e.status().orElseThrow().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
    assertThat(e.getMessage()).contains("the vault is sealed");
    assertThat(service.calls).as("nothing reached the server").hasValue(0);
  }

  @Test
  void should_run_the_interceptors_on_every_call_the_last_added_first() {
    client = builder().intercept(header("a")).intercept(header("b"), header("c")).build();

    client.sequence("orders").next(7);

    assertThat(orders).hasSizeGreaterThanOrEqualTo(2).containsOnly(List.of("c", "b", "a"));
    assertThat(authorizations).containsOnly("none");
  }

  @Test
  void should_not_send_a_token_over_a_plaintext_connection() throws Exception {
    Server netty = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create()).addService(service)
        .build().start();
    try {
      client = IdGenClient.builder().target("127.0.0.1:" + netty.getPort()).usePlaintext()
          .bearerToken("orders-token-0123456789").executor(scheduler).waitDeadline(Duration.ofSeconds(10)).build();

      IdGenClientException e = catchThrowableOfType(IdGenClientException.class,
          () -> client.sequence("orders").next());

      assertThat(e.reason()).isEqualTo(IdGenClientException.Reason.REJECTED);
      assertThat(e.status().orElseThrow().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
      assertThat(e.getMessage()).contains("without TLS");
      assertThat(service.calls).hasValue(0);
    } finally {
      client.close();
      netty.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** Adds an {@code x-order} header with {@code value} to each call. */
  private static ClientInterceptor header(String value) {
    return new ClientInterceptor() {
      @Override
      public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
        return new SimpleForwardingClientCall<Q, A>(next.newCall(method, options)) {
          @Override
          public void start(Listener<A> listener, Metadata headers) {
            headers.put(ORDER, value);
            super.start(listener, headers);
          }
        };
      }
    };
  }
}
