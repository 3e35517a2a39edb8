package dev.idgen.server.transport;

import com.google.errorprone.annotations.ThreadSafe;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.idgen.server.config.OperationsSettings;
import dev.idgen.server.lifecycle.PeriodicTask;
import dev.idgen.server.lifecycle.ServerComponent;
import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC port's credentials ({@code idgen.grpc.tls}): plaintext, TLS, or mutual TLS, from PEM files
 * that are reloaded when they change. Every {@code refresh-interval} the files' contents are compared
 * with what was loaded; a change is loaded into grpc's {@link AdvancedTlsX509KeyManager} /
 * {@link AdvancedTlsX509TrustManager}, which new handshakes use at once (open connections keep their
 * session). A change that cannot be loaded (a half-written file, a key that does not match) is logged
 * and retried at the next check; the previous certificate stays in use.
 *
 * <p>Thread-safe: checks run on one daemon thread, or a test's, under {@code lock}.
 */
@ThreadSafe
public final class TlsCredentials implements ServerComponent {

  private static final Logger log = LoggerFactory.getLogger(TlsCredentials.class);

  private final OperationsSettings.Tls settings;
  private final ServerCredentials credentials;
  private final AdvancedTlsX509KeyManager keyManager;
  private final AdvancedTlsX509TrustManager trustManager; // null without client certificates
  private final Object lock = new Object();

  @GuardedBy("lock")
  private byte[] identityDigest = new byte[0];

  @GuardedBy("lock")
  private byte[] trustDigest = new byte[0];

  @GuardedBy("lock")
  private PeriodicTask scheduler;

  /**
   * Loads the files once (so that a bad file fails the start, naming it).
   *
   * @throws IllegalArgumentException if a file cannot be read or parsed
   */
  TlsCredentials(OperationsSettings.Tls settings) {
    this.settings = settings;
    if (!settings.enabled()) {
      credentials = InsecureServerCredentials.create();
      keyManager = null;
      trustManager = null;
      return;
    }
    keyManager = new AdvancedTlsX509KeyManager();
    TlsServerCredentials.Builder builder = TlsServerCredentials.newBuilder().keyManager(keyManager);
    if (settings.clientAuth() != OperationsSettings.ClientAuth.NONE) {
      try {
        trustManager = AdvancedTlsX509TrustManager.newBuilder()
            .setVerification(AdvancedTlsX509TrustManager.Verification.CERTIFICATE_ONLY_VERIFICATION)
            .build();
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("cannot create a trust manager: " + e, e);
      }
      builder.trustManager(trustManager).clientAuth(settings.clientAuth() == OperationsSettings.ClientAuth.REQUIRE
          ? TlsServerCredentials.ClientAuth.REQUIRE : TlsServerCredentials.ClientAuth.OPTIONAL);
    } else {
      trustManager = null;
    }
    credentials = builder.build();
    synchronized (lock) {
      try {
        reloadIfChanged(true);
      } catch (IOException | GeneralSecurityException e) {
        throw new IllegalArgumentException("idgen.grpc.tls: cannot load " + describeFiles() + ": " + e, e);
      }
    }
  }

  /** What the gRPC server is built with. */
  public ServerCredentials credentials() {
    return credentials;
  }

  /** Whether TLS is on ({@code idgen.grpc.tls.enabled}). */
  public boolean enabled() {
    return settings.enabled();
  }

  /** The server's certificate, reloaded in place; null without TLS. The HTTP port serves the same one. */
  @javax.annotation.Nullable
  public javax.net.ssl.X509ExtendedKeyManager keyManager() {
    return keyManager;
  }

  /** The client certificates' trust, reloaded in place; null without TLS or without client certificates. */
  @javax.annotation.Nullable
  public javax.net.ssl.X509ExtendedTrustManager trustManager() {
    return trustManager;
  }

  /** Whether client certificates are asked for ({@code idgen.grpc.tls.client-auth}). */
  public OperationsSettings.ClientAuth clientAuth() {
    return settings.clientAuth();
  }

  @Override
  public void start() {
    if (!settings.enabled()) {
      return;
    }
    synchronized (lock) {
      if (scheduler != null) {
        return;
      }
      scheduler = PeriodicTask.every(settings.refreshInterval(), "idgen-tls-reload", this::checkQuietly);
    }
  }

  /**
   * Loads the files that changed since the last check. Returns whether anything was reloaded.
   *
   * @throws IOException or GeneralSecurityException if a changed file cannot be loaded
   */
  boolean checkNow() throws IOException, GeneralSecurityException {
    if (!settings.enabled()) {
      return false;
    }
    synchronized (lock) {
      return reloadIfChanged(false);
    }
  }

  private void checkQuietly() {
    try {
      checkNow();
    } catch (IOException | GeneralSecurityException | RuntimeException e) {
      log.warn("tls=reload_failed files=\"{}\" error=\"{}\" (the previous certificates stay in use)",
          describeFiles(), e.toString());
    }
  }

  @GuardedBy("lock")
  private boolean reloadIfChanged(boolean first) throws IOException, GeneralSecurityException {
    boolean changed = false;
    Path chain = settings.certChain().orElseThrow();
    Path key = settings.privateKey().orElseThrow();
    byte[] identity = digest(chain, key);
    if (!Arrays.equals(identity, identityDigest)) {
      keyManager.updateIdentityCredentials(chain.toFile(), key.toFile());
      identityDigest = identity;
      changed = true;
      X509Certificate leaf;
      try (InputStream in = Files.newInputStream(chain)) {
        leaf = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificates(in).iterator().next();
      }
      log.info("tls={} cert_chain={} subject=\"{}\" serial={} not_after={}", first ? "loaded" : "reloaded",
          chain, leaf.getSubjectX500Principal(), leaf.getSerialNumber().toString(16), leaf.getNotAfter()
              .toInstant());
    }
    if (trustManager != null) {
      Path trust = settings.trustCerts().orElseThrow();
      byte[] trustNow = digest(trust);
      if (!Arrays.equals(trustNow, trustDigest)) {
        trustManager.updateTrustCredentials(trust.toFile());
        trustDigest = trustNow;
        changed = true;
        log.info("tls={} trust_certs={} cas={}", first ? "loaded" : "reloaded", trust,
            trustManager.getAcceptedIssuers().length);
      }
    }
    return changed;
  }

  private static byte[] digest(Path... files) throws IOException, GeneralSecurityException {
    MessageDigest md = MessageDigest.getInstance("SHA-256");
    for (Path file : files) {
      md.update(Files.readAllBytes(file));
      md.update((byte) 0);
    }
    return md.digest();
  }

  private String describeFiles() {
    return settings.certChain().map(Path::toString).orElse("") + ", " + settings.privateKey().map(Path::toString)
        .orElse("") + settings.trustCerts().map(p -> ", " + p).orElse("");
  }

  @Override
  public void close() {
    synchronized (lock) {
      PeriodicTask.closeIfStarted(scheduler);
    }
  }

  @Override
  public String toString() {
    return "tls certificate reloader";
  }
}
