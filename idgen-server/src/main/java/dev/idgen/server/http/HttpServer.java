package dev.idgen.server.http;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.grpc.GrpcJsonMarshaller;
import com.linecorp.armeria.server.Server;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.grpc.GrpcService;
import com.linecorp.armeria.server.grpc.GrpcServiceBuilder;
import com.linecorp.armeria.server.grpc.HttpJsonTranscodingOptions;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.config.ServerSettings;
import dev.idgen.server.lifecycle.ServerComponent;
import dev.idgen.server.metrics.GrpcCallMetrics;
import dev.idgen.server.transport.TlsCredentials;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.util.KeyManagerFactoryWrapper;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HTTP/JSON on {@code idgen.http.host}:{@code port}: Armeria's transcoding of the {@code google.api.http}
 * routes to {@link PublicServices}, HTTP/1.1 and HTTP/2, over TLS when the gRPC port has it (the same
 * certificate and client-certificate rule, reloaded with it). Every call first passes the metrics layer
 * ({@link GrpcCallMetrics}, as on the gRPC port), after {@link CallAttributes}. Only the transcoded routes
 * answer: a gRPC request on this port gets 415, so that the port means one thing.
 *
 * <p>Life cycle: started after the gRPC server; {@link #stopAccepting} closes the port with the gRPC one (open
 * calls go on), {@link #awaitCalls} waits for them up to {@code idgen.shutdown.timeout} before the allocator
 * closes, then they are cancelled.
 *
 * <p>Thread-safe: start and stop are guarded by {@code lock}; calls run on Armeria's event loops.
 */
@ThreadSafe
final class HttpServer implements ServerComponent {

  private static final Logger log = LoggerFactory.getLogger(HttpServer.class);

  private final HttpSettings settings;
  private final ServerSettings server;
  private final OperationsSettings.Limits limits;
  private final PublicServices services;
  private final GrpcCallMetrics metrics;
  private final TlsCredentials tls;
  private final Object lock = new Object();

  @GuardedBy("lock")
  private Server http;

  @GuardedBy("lock")
  private CompletableFuture<Void> stopped;

  /** Requests being served: what {@link #awaitCalls} waits for. */
  private final AtomicInteger open = new AtomicInteger();

  HttpServer(HttpSettings settings, ServerSettings server, OperationsSettings.Limits limits,
      PublicServices services, GrpcCallMetrics metrics, TlsCredentials tls) {
    this.settings = settings;
    this.server = server;
    this.limits = limits;
    this.services = services;
    this.metrics = metrics;
    this.tls = tls;
  }

  @Override
  public void start() throws java.io.IOException {
    synchronized (lock) {
      if (http != null) {
        return;
      }
      GrpcServiceBuilder grpc = GrpcService.builder()
          .addServiceDefinitions(services.services())
          .enableHttpJsonTranscoding(HttpJsonTranscodingOptions.builder()
              .errorHandler(HttpErrors.callErrors())
              .build())
          .maxRequestMessageLength(limits.maxInboundMessageSize())
          // The calls run where the gRPC port runs them: the event loop, and the worker pool for what may wait.
          .useBlockingTaskExecutor(false)
          // A body that is JSON but not the request message: INVALID_ARGUMENT, as on the gRPC port.
          .jsonMarshallerFactory(service -> new RequestJson(GrpcJsonMarshaller.of(service)))
          .exceptionHandler((ctx, status, cause, trailers) -> RequestJson.status(cause, trailers))
          // intercept(): the last one listed runs first. CallAttributes first, so the metrics see the peer.
          .intercept(metrics, new CallAttributes());
      GrpcService service = grpc.build();
      InetSocketAddress address = new InetSocketAddress(settings.host(),
          settings.port() == HttpSettings.ANY_FREE_PORT ? 0 : settings.port());
      ServerBuilder b = Server.builder()
          .errorHandler(HttpErrors.requestErrors())
          .maxRequestLength(limits.maxInboundMessageSize())
          // No request timeout of Armeria's own: the call's rules bound it (max-wait and the call-duration
          // limit for Allocate; an AdvanceSequence takes the client lease lifetime, 10 s by default).
          .requestTimeout(Duration.ZERO)
          // Closing waits for open calls (awaitCalls); the health quiet period is the gRPC server's.
          .gracefulShutdownTimeout(Duration.ZERO, server.shutdownTimeout())
          .decorator((delegate, ctx, req) -> {
            MediaType type = req.contentType();
            if (type != null && type.subtype().startsWith("grpc")) {
              return HttpResponse.of(HttpStatus.UNSUPPORTED_MEDIA_TYPE, MediaType.PLAIN_TEXT_UTF_8,
                  "this is idgen's HTTP/JSON port (idgen.http.port): send gRPC to idgen.grpc.port");
            }
            if (type != null && type.is(MediaType.FORM_DATA)) {
              // curl -d sends its body as a form; every body here is JSON (docs/http.md's curl lines omit -H).
              req = req.withHeaders(req.headers().toBuilder().contentType(MediaType.JSON_UTF_8).build());
              ctx.updateRequest(req);
            }
            open.incrementAndGet();
            ctx.log().whenComplete().thenRun(open::decrementAndGet);
            return delegate.serve(ctx, req);
          })
          .service(service);
      if (tls.enabled()) {
        b.https(address).tls(new KeyManagerFactoryWrapper(tls.keyManager()));
        if (tls.trustManager() != null) {
          ClientAuth auth = tls.clientAuth() == OperationsSettings.ClientAuth.REQUIRE ? ClientAuth.REQUIRE
              : ClientAuth.OPTIONAL;
          b.tlsCustomizer(ssl -> ssl.trustManager(tls.trustManager()).clientAuth(auth));
        }
      } else {
        b.http(address);
      }
      ifSet(limits.maxConnectionIdle(), d -> b.idleTimeout(d));
      ifSet(limits.maxConnectionAge(), d -> b.maxConnectionAge(d));
      Server started = b.build();
      try {
        started.start().join();
      } catch (java.util.concurrent.CompletionException e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        throw new java.io.IOException("HTTP/JSON (" + HttpSettings.PORT + ") cannot listen on " + settings.host() + ":"
            + settings.port() + ": " + cause.getMessage() + " (another server on this port? set "
            + HttpSettings.PORT + ", or 0 to turn HTTP/JSON off)", cause);
      }
      http = started;
      log.info("HTTP/JSON on {}://{}:{}", tls.enabled() ? "https" : "http", settings.host(),
          started.activeLocalPort());
    }
  }

  private static void ifSet(Duration d, java.util.function.Consumer<Duration> set) {
    if (!d.isZero()) {
      set.accept(d);
    }
  }

  /** The port it listens on (the chosen one for {@code -1}); -1 when not started. */
  int port() {
    synchronized (lock) {
      return http == null ? -1 : http.activeLocalPort();
    }
  }

  @Override
  public void stopAccepting() {
    synchronized (lock) {
      if (http != null && stopped == null) {
        stopped = http.stop();
      }
    }
  }

  /**
   * Waits until no request is open, at most {@code timeout}; Armeria closes what is still open at its own
   * graceful-shutdown timeout (the same setting). Not the stop's future: that also waits for the acceptor
   * threads' Netty quiet period (2 s), which holds no call.
   */
  @Override
  public void awaitCalls(Duration timeout) {
    stopAccepting();
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      while (open.get() > 0 && System.nanoTime() - deadline < 0) {
        Thread.sleep(10);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (open.get() > 0) {
      log.warn("{} HTTP/JSON requests still open after {}; they are cancelled", open.get(), timeout);
    }
  }

  @Override
  public void close() {
    stopAccepting(); // after awaitCalls: its sockets close in the background
  }

  @Override
  public String toString() {
    return "HTTP/JSON port";
  }
}
