package dev.idgen.cli;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import javax.annotation.Nullable;

/**
 * The connection settings of one run, defaults applied: where to connect, how (plaintext, TLS, mutual
 * TLS), with which bearer token, and the deadline of each call.
 */
record Connection(
    String target,
    boolean plaintext,
    @Nullable Path caCert,
    @Nullable Path clientCert,
    @Nullable Path clientKey,
    @Nullable String token,
    Duration deadline) {

  /** What is wrong with this combination of options, for a usage error; null if nothing. */
  @Nullable
  String problem() {
    if (target.isBlank()) {
      return "--target: empty (expected: host:port, or a gRPC target such as dns:///name:port)";
    }
    if (plaintext && (caCert != null || clientCert != null || clientKey != null)) {
      return "--plaintext cannot be combined with --ca-cert, --client-cert or --client-key (they are TLS)";
    }
    if ((clientCert == null) != (clientKey == null)) {
      return "--client-cert and --client-key go together (mutual TLS needs both)";
    }
    for (Path file : new Path[] {caCert, clientCert, clientKey}) {
      if (file != null && !Files.isReadable(file)) {
        return "cannot read " + file + " (expected: a readable PEM file)";
      }
    }
    if (deadline.isNegative() || deadline.isZero()) {
      return "--deadline: " + deadline + " (expected: > 0)";
    }
    return null;
  }

  /**
   * The channel credentials: insecure with {@code --plaintext}; otherwise TLS, trusting {@code --ca-cert}
   * (else the JVM's CAs), presenting {@code --client-cert} for mutual TLS.
   *
   * @throws IOException if a certificate or key file cannot be read or parsed
   */
  ChannelCredentials credentials() throws IOException {
    if (plaintext) {
      return InsecureChannelCredentials.create();
    }
    TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder();
    if (caCert != null) {
      checkCertificates(caCert);
      tls.trustManager(caCert.toFile());
    }
    if (clientCert != null && clientKey != null) {
      checkCertificates(clientCert);
      String key = Files.readString(clientKey, StandardCharsets.US_ASCII);
      if (!key.contains("-----BEGIN") || !key.contains("PRIVATE KEY-----")) {
        throw new IOException(clientKey + " holds no PEM private key");
      }
      tls.keyManager(clientCert.toFile(), clientKey.toFile());
    }
    return tls.build();
  }

  /**
   * Parses a PEM certificate file now: grpc would only find a bad one when it connects, and report it as
   * UNAVAILABLE, which would send an operator looking at the server.
   */
  private static void checkCertificates(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
        throw new IOException(file + " holds no certificate");
      }
    } catch (CertificateException e) {
      throw new IOException(file + " holds no readable PEM certificate: " + e.getMessage(), e);
    }
  }
}
