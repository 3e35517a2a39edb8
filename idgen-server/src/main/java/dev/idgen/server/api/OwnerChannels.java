package dev.idgen.server.api;

import com.google.errorprone.annotations.ThreadSafe;
import dev.idgen.server.config.OperationsSettings;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The channels to owners of strict sequences, one per owner target, made on first use and shut down by
 * {@link #close}; and, per owner, whether it refused forwarding streams lately (an older version, during a
 * rolling upgrade), so that batches go to it as unary calls for {@link #UNARY_AFTER_REFUSAL}.
 *
 * <p>Threads: any thread; both maps are concurrent, and a channel is made at most once per target
 * ({@link ConcurrentMap#computeIfAbsent}). Nothing here blocks.
 */
@ThreadSafe
final class OwnerChannels {
  /** The forwarding's log lines keep its category: operators may filter by it. */
  private static final Logger log = LoggerFactory.getLogger(StrictForwarder.class);

  /** How long forwarded calls go unary to an owner that answered a pipe UNIMPLEMENTED, before a pipe is tried again. */
  static final Duration UNARY_AFTER_REFUSAL = Duration.ofMinutes(1);

  private final ChannelCredentials credentials;
  private final ConcurrentMap<String, ManagedChannel> channels = new ConcurrentHashMap<>();
  /** Owners that answered a pipe UNIMPLEMENTED, with when ({@link System#nanoTime}). */
  private final ConcurrentMap<String, Long> pipesRefusedAt = new ConcurrentHashMap<>();

  OwnerChannels(ChannelCredentials credentials) {
    this.credentials = credentials;
  }

  /**
   * Plaintext when this server serves plaintext; else TLS, trusting {@code trust-certs} (or the JVM's CAs)
   * and presenting this server's own certificate, for owners that ask for client certificates.
   */
  static ChannelCredentials credentials(OperationsSettings.Tls tls) {
    if (!tls.enabled()) {
      return InsecureChannelCredentials.create();
    }
    try {
      TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
      if (tls.certChain().isPresent() && tls.privateKey().isPresent()) {
        b.keyManager(tls.certChain().get().toFile(), tls.privateKey().get().toFile());
      }
      if (tls.trustCerts().isPresent()) {
        b.trustManager(tls.trustCerts().get().toFile());
      }
      return b.build();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the TLS files for forwarding strict sequences", e);
    }
  }

  ManagedChannel channel(String target) {
    return channels.computeIfAbsent(target, t -> Grpc.newChannelBuilder(t, credentials)
        .directExecutor() // answers are cut and sent on; nothing blocks
        // No gRPC retries: a forwarded call that fails is rerouted or answered here (misrouted, failure), and
        // the retry machinery (RetriableStream) was a fifth of a forwarder's samples in a JFR profile.
        .disableRetry()
        .build());
  }

  /** Whether the owner at {@code target} refused pipes less than {@link #UNARY_AFTER_REFUSAL} ago. */
  boolean pipesRefused(String target) {
    Long at = pipesRefusedAt.get(target);
    if (at == null) {
      return false;
    }
    if (System.nanoTime() - at > UNARY_AFTER_REFUSAL.toNanos()) {
      pipesRefusedAt.remove(target, at);
      return false;
    }
    return true;
  }

  void refusePipes(String target) {
    if (pipesRefusedAt.put(target, System.nanoTime()) == null) {
      log.info("the owner {} does not serve idgen.v1.IdGenPeer (an older version?): forwarding one call per batch"
          + " to it for {} s", target, UNARY_AFTER_REFUSAL.toSeconds());
    }
  }

  /** Shuts every channel down now: calls in flight on them fail. */
  void close() {
    for (ManagedChannel c : channels.values()) {
      c.shutdownNow();
    }
  }
}
