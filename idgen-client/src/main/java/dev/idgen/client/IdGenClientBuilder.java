package dev.idgen.client;

import com.google.errorprone.annotations.CanIgnoreReturnValue;
import io.grpc.CallCredentials;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Configures and builds an {@link IdGenClient}. Obtain one with {@link IdGenClient#builder()}.
 *
 * <p>At least one server is required: {@linkplain #target(String) targets} the client connects to
 * itself (it then needs a gRPC transport at runtime, such as {@code io.grpc:grpc-netty-shaded}), or
 * {@linkplain #channel(Channel) channels} built by the application (handy for tests with
 * {@code InProcessChannelBuilder}), or both. Lease requests rotate over all of them, and
 * {@code UNAVAILABLE} is retried on another one. Every other setting has a documented default
 * (the {@code DEFAULT_*} constants).
 *
 * <p>A builder is not thread-safe; {@link #build()} validates the settings and may be called more
 * than once.
 */
public final class IdGenClientBuilder {
  /** The default {@linkplain #callDeadline(Duration) call deadline}: 1 second. */
  public static final Duration DEFAULT_CALL_DEADLINE = Duration.ofSeconds(1);
  /** The default {@linkplain #waitDeadline(Duration) wait deadline}: 5 seconds. */
  public static final Duration DEFAULT_WAIT_DEADLINE = Duration.ofSeconds(5);
  /** The default {@linkplain #leaseLifetime(Duration) lease lifetime}: 5 seconds. */
  public static final Duration DEFAULT_LEASE_LIFETIME = Duration.ofSeconds(5);
  /** The default {@linkplain #minLeaseSize(long) smallest lease}: 10 IDs. */
  public static final long DEFAULT_MIN_LEASE_SIZE = 10;
  /** The default {@linkplain #maxLeaseSize(long) largest lease}: 1,000,000 IDs. */
  public static final long DEFAULT_MAX_LEASE_SIZE = 1_000_000; // = the servers' default per-call limit
  /** The default {@linkplain #retryBackoff(Duration, Duration) first retry back-off}: 20 milliseconds. */
  public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(20);
  /** The default {@linkplain #retryBackoff(Duration, Duration) largest retry back-off}: 2 seconds. */
  public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(2);

  private static final AtomicInteger CLIENT_NUMBERS = new AtomicInteger();

  private final List<String> targets = new ArrayList<>();
  private final List<Channel> channels = new ArrayList<>();
  private ChannelCredentials credentials = TlsChannelCredentials.create();
  private CallCredentials callCredentials;
  private BearerToken.TokenFile tokenFile;
  private final List<ClientInterceptor> interceptors = new ArrayList<>();
  private Duration callDeadline = DEFAULT_CALL_DEADLINE;
  private Duration waitDeadline = DEFAULT_WAIT_DEADLINE;
  private Duration leaseLifetime = DEFAULT_LEASE_LIFETIME;
  private long minLeaseSize = DEFAULT_MIN_LEASE_SIZE;
  private long maxLeaseSize = DEFAULT_MAX_LEASE_SIZE;
  private Duration initialBackoff = DEFAULT_INITIAL_BACKOFF;
  private Duration maxBackoff = DEFAULT_MAX_BACKOFF;
  private ScheduledExecutorService executor;
  private Ticker ticker = Ticker.system();
  private String name;

  IdGenClientBuilder() {}

  /**
   * Adds a server target, in gRPC's target syntax: {@code host:port} (one address), or
   * {@code dns:///name:port} (every address the name resolves to, balanced round-robin and
   * re-resolved as it changes). May be called several times: requests rotate over the targets, and
   * a request that fails with {@code UNAVAILABLE} is retried on another one.
   *
   * <p>The client creates, owns and closes the channels of its targets; creating them needs a gRPC
   * transport on the runtime classpath (see docs/client.md, "Transport").
   *
   * @param target a gRPC target, such as {@code idgen.internal:7070} or {@code dns:///idgen:7070}
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder target(String target) {
    Objects.requireNonNull(target, "target");
    if (target.isBlank()) {
      throw new IllegalArgumentException("target: blank (expected: host:port or dns:///name:port)");
    }
    targets.add(target.strip());
    return this;
  }

  /**
   * Adds several targets, as {@link #target(String)} does for each.
   *
   * @param targets gRPC targets
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder targets(Collection<String> targets) {
    targets.forEach(this::target);
    return this;
  }

  /**
   * Adds a channel the application built, for instance an in-process channel in tests, or a
   * {@code ManagedChannel} with settings this builder does not offer. Requests rotate over channels
   * and targets alike. The client does not close these channels; the application does, after
   * {@link IdGenClient#close()}. Channel credentials set on this builder do not apply to them, nor does
   * the client's service config (client-side health checking, round-robin): those are the channel's own.
   * Call credentials ({@link #bearerToken(String)} and friends) and {@linkplain #intercept interceptors}
   * do apply.
   *
   * @param channel a channel to a server offering {@code idgen.v1.IdGen}
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder channel(Channel channel) {
    channels.add(Objects.requireNonNull(channel, "channel"));
    return this;
  }

  /**
   * Connects to targets without TLS. The default is TLS with the JVM's trusted certificates.
   *
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder usePlaintext() {
    return credentials(InsecureChannelCredentials.create());
  }

  /**
   * Connects to targets with TLS, trusting the JVM's default certificates: the default.
   *
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder useTransportSecurity() {
    return credentials(TlsChannelCredentials.create());
  }

  /**
   * Sets the credentials the channels of targets are created with, for instance TLS with a private
   * certificate authority, or mutual TLS:
   * {@code TlsChannelCredentials.newBuilder().trustManager(caPem).keyManager(certPem, keyPem).build()}.
   *
   * @param credentials the channel credentials
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder credentials(ChannelCredentials credentials) {
    this.credentials = Objects.requireNonNull(credentials, "credentials");
    return this;
  }

  /**
   * Sends {@code authorization: Bearer TOKEN} with every call, the token the servers' access rules
   * know the application by ({@code idgen.access.tokens}). The token is sent only over TLS (or an
   * in-process channel): over a plaintext connection calls fail with {@code UNAUTHENTICATED} before
   * anything is sent. Replaces any call credentials set before.
   *
   * @param token the token: visible ASCII characters, no spaces
   * @return this builder
   * @throws IllegalArgumentException if the token is empty or contains other characters
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder bearerToken(String token) {
    String checked = BearerToken.check(token, "bearerToken(String)");
    return setCallCredentials(new BearerToken(() -> checked, "bearerToken(String)"), null);
  }

  /**
   * Sends {@code authorization: Bearer TOKEN} with every call, the token read from {@code file} (a
   * mounted secret) and read again whenever the file changes, so that a rotated token is sent from
   * the next call on, with no restart. Surrounding whitespace is ignored. If the file cannot be read
   * later, the token read before is kept (and a warning logged). {@link #build()} reads it once, so
   * that a missing file fails at once. Sent only over TLS, as {@link #bearerToken(String)}. Replaces
   * any call credentials set before.
   *
   * @param file the file holding the token
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder bearerTokenFile(Path file) {
    BearerToken.TokenFile source = new BearerToken.TokenFile(file);
    return setCallCredentials(new BearerToken(source, source.toString()), source);
  }

  /**
   * Sends {@code authorization: Bearer TOKEN} with every call, the token asked of {@code token} at
   * every call (lease requests are seconds apart), on the client's executor: it should return quickly,
   * from a cache of its own if getting a token is slow. If it throws, the call fails with
   * {@code UNAUTHENTICATED} (reason {@code REJECTED} for callers). Sent only over TLS, as
   * {@link #bearerToken(String)}. Replaces any call credentials set before.
   *
   * @param token supplies the current token; must be thread-safe
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder bearerToken(Supplier<String> token) {
    Objects.requireNonNull(token, "token");
    return setCallCredentials(new BearerToken(token, "bearerToken(Supplier)"), null);
  }

  /**
   * Attaches gRPC call credentials of the application's own to every call, on targets and channels
   * alike (the bearer-token methods above are shorthands for this). Replaces any call credentials set
   * before.
   *
   * @param credentials the call credentials
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder callCredentials(CallCredentials credentials) {
    return setCallCredentials(Objects.requireNonNull(credentials, "credentials"), null);
  }

  private IdGenClientBuilder setCallCredentials(CallCredentials credentials, BearerToken.TokenFile file) {
    this.callCredentials = credentials;
    this.tokenFile = file;
    return this;
  }

  /**
   * Adds interceptors to every call on targets and channels alike (to add headers, trace or log).
   * May be called several times; as with gRPC's {@code ClientInterceptors.intercept}, the interceptor
   * added last sees a call first.
   *
   * @param interceptors the interceptors
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder intercept(ClientInterceptor... interceptors) {
    for (ClientInterceptor i : Arrays.asList(interceptors)) {
      this.interceptors.add(Objects.requireNonNull(i, "interceptor"));
    }
    return this;
  }

  /**
   * Sets the deadline of each {@code Allocate} call. A call that exceeds it is retried on another
   * server, like {@code UNAVAILABLE}. Default {@link #DEFAULT_CALL_DEADLINE}.
   *
   * @param deadline a positive duration
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder callDeadline(Duration deadline) {
    this.callDeadline = Objects.requireNonNull(deadline, "deadline");
    return this;
  }

  /**
   * Sets the longest a caller of {@link IdSource#next()} waits when its source has nothing left; it
   * then gets an {@link IdGenClientException} with reason {@code TIMED_OUT}. Default
   * {@link #DEFAULT_WAIT_DEADLINE}.
   *
   * @param deadline a positive duration
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder waitDeadline(Duration deadline) {
    this.waitDeadline = Objects.requireNonNull(deadline, "deadline");
    return this;
  }

  /**
   * Sets how long a lease should last at the source's own consumption rate: each source asks for
   * {@code rate × lifetime} IDs, between {@link #minLeaseSize(long)} and {@link #maxLeaseSize(long)}.
   * Longer means fewer calls to the servers and a longer cushion when they are slow; shorter means
   * fewer IDs abandoned when the process stops (at most about two leases per source). When the
   * servers' ranges carry a {@code valid_for} (after which their unused IDs are dropped), the lifetime
   * used is at most half of it, so that a lease is used up before it expires. Default
   * {@link #DEFAULT_LEASE_LIFETIME}.
   *
   * @param lifetime a positive duration
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder leaseLifetime(Duration lifetime) {
    this.leaseLifetime = Objects.requireNonNull(lifetime, "lifetime");
    return this;
  }

  /**
   * Sets the smallest lease a source asks for, also the size of its first lease. Default
   * {@link #DEFAULT_MIN_LEASE_SIZE}.
   *
   * @param size at least 1, at most {@link #maxLeaseSize(long)}
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder minLeaseSize(long size) {
    this.minLeaseSize = size;
    return this;
  }

  /**
   * Sets the largest lease a source asks for. It must not exceed the servers' per-call limit
   * ({@code idgen.limits.max-ids-per-call}, 1,000,000 by default), or lease requests fail with
   * {@code INVALID_ARGUMENT}. Default {@link #DEFAULT_MAX_LEASE_SIZE}.
   *
   * @param size at least {@link #minLeaseSize(long)}
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder maxLeaseSize(long size) {
    this.maxLeaseSize = size;
    return this;
  }

  /**
   * Sets the back-off between retries of a failed lease request ({@code UNAVAILABLE},
   * {@code DEADLINE_EXCEEDED}, {@code CANCELLED} by a stopping server, {@code ABORTED}): the n-th retry waits a random time between half and all of
   * {@code min(max, initial × 2^(n-1))}. A server that failed is also avoided for {@code max}
   * while another one is usable. Defaults {@link #DEFAULT_INITIAL_BACKOFF} and
   * {@link #DEFAULT_MAX_BACKOFF}.
   *
   * @param initial the first back-off, positive
   * @param max the largest back-off, at least {@code initial}
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder retryBackoff(Duration initial, Duration max) {
    this.initialBackoff = Objects.requireNonNull(initial, "initial");
    this.maxBackoff = Objects.requireNonNull(max, "max");
    return this;
  }

  /**
   * Sets the executor for background work: starting lease requests, their callbacks, and retries.
   * The work is small and never blocks, so one thread serves many sources and clients. It must not
   * run tasks on the calling thread. The client does not shut it down. By default the client creates
   * a one-thread executor of its own (thread {@code idgen-client-<name>-1}, a daemon) and shuts it
   * down on {@link IdGenClient#close()}.
   *
   * @param executor the executor to use
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder executor(ScheduledExecutorService executor) {
    this.executor = Objects.requireNonNull(executor, "executor");
    return this;
  }

  /**
   * Sets the ticker that sources measure their consumption rate and the expiry of their leases with,
   * for tests that control time. Default {@link Ticker#system()}.
   *
   * @param ticker the ticker
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder ticker(Ticker ticker) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    return this;
  }

  /**
   * Sets a name for the client, used in its thread names ({@code idgen-client-<name>-<n>}) and
   * {@code toString()}. Default: a number unique in this JVM.
   *
   * @param name a non-blank name
   * @return this builder
   */
  @CanIgnoreReturnValue
  public IdGenClientBuilder name(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("name: blank (expected: a non-blank name)");
    }
    this.name = name;
    return this;
  }

  /**
   * Validates the settings and builds a client: creates the channels of the targets (which connect
   * lazily) and, unless one was given, the client's executor.
   *
   * @return a new client, to {@linkplain IdGenClient#close() close} when done
   * @throws IllegalStateException if no target or channel was given, or a channel cannot be created
   *     (no gRPC transport on the classpath)
   * @throws IllegalArgumentException if a setting is out of range
   */
  public IdGenClient build() {
    if (targets.isEmpty() && channels.isEmpty()) {
      throw new IllegalStateException("no server: call target(\"host:port\") or channel(...) at least once");
    }
    checkPositive("callDeadline", callDeadline);
    checkPositive("waitDeadline", waitDeadline);
    checkPositive("leaseLifetime", leaseLifetime);
    checkPositive("retryBackoff initial", initialBackoff);
    if (maxBackoff.compareTo(initialBackoff) < 0) {
      throw new IllegalArgumentException(
          "retryBackoff max: " + maxBackoff + " (expected: >= initial " + initialBackoff + ")");
    }
    if (minLeaseSize < 1) {
      throw new IllegalArgumentException("minLeaseSize: " + minLeaseSize + " (expected: >= 1)");
    }
    if (maxLeaseSize < minLeaseSize) {
      throw new IllegalArgumentException(
          "maxLeaseSize: " + maxLeaseSize + " (expected: >= minLeaseSize " + minLeaseSize + ")");
    }
    if (tokenFile != null) {
      try {
        tokenFile.get(); // fail at once on a missing or empty file, not at the first call
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("bearerTokenFile: " + e.getMessage(), e);
      }
    }
    String clientName = name != null ? name : String.valueOf(CLIENT_NUMBERS.incrementAndGet());
    ClientSettings settings = new ClientSettings(clientName, nanos(callDeadline), nanos(waitDeadline),
        minLeaseSize, maxLeaseSize, nanos(leaseLifetime), nanos(initialBackoff), nanos(maxBackoff), ticker);
    return new IdGenClient(settings, List.copyOf(targets), List.copyOf(channels), credentials,
        new Endpoints.CallSettings(callCredentials, List.copyOf(interceptors)), executor);
  }

  private static void checkPositive(String what, Duration d) {
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(what + ": " + d + " (expected: > 0)");
    }
  }

  /** In nanoseconds, capped at about 73 years: "forever", with room to add it to System.nanoTime(). */
  private static long nanos(Duration d) {
    long cap = Long.MAX_VALUE / 4;
    return d.compareTo(Duration.ofNanos(cap)) >= 0 ? cap : d.toNanos();
  }
}
