package dev.idgen.core.store.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * TLS to Cassandra exactly as a server builds it — {@code idgen.cassandra.tls} mapped to the driver's
 * {@code advanced.ssl-engine-factory} ({@code DefaultSslEngineFactory}), the session opened by
 * {@link CassandraRangeStore#open} — against a stand-in that speaks TLS but not CQL: a plain
 * {@link SSLServerSocket} that records how each handshake ended, then hangs up. Certificates are made at test
 * time (one CA; node certificates that name the host the driver reaches, {@code 127.0.0.1}, or another host).
 */
@Execution(ExecutionMode.CONCURRENT) // waits on TLS handshakes; stand-ins on ports of their own
class CassandraTlsTest {

  private static final String PASSWORD = "changeit";

  private static Issued ca;
  private static Issued rightName;
  private static Issued wrongName;
  private static Issued client;

  @TempDir
  Path dir;

  private final List<AutoCloseable> toClose = new ArrayList<>();

  @BeforeAll
  static void certificates() throws Exception {
    ca = Issued.ca("cassandra-ca");
    rightName = Issued.leaf(ca, "CN=cassandra-node", List.of("localhost"), List.of("127.0.0.1"));
    wrongName = Issued.leaf(ca, "CN=cassandra-node", List.of("cassandra.example.org"), List.of());
    client = Issued.leaf(ca, "CN=idgen-server", List.of(), List.of());
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
  }

  @Test
  void should_refuse_a_node_whose_certificate_names_another_host() throws Exception {
    StandIn node = standIn(wrongName, false);

    Throwable failure = connect(node, tls(true, false));

    assertThat(node.handshake()).as("the stand-in's handshake").startsWith("failed:");
    assertThat(failure).hasMessageContaining("No subject alternative");
  }

  @Test
  void should_accept_a_node_whose_certificate_names_the_host() throws Exception {
    StandIn node = standIn(rightName, false);

    connect(node, tls(true, false));

    assertThat(node.handshake()).isEqualTo("ok");
  }

  @Test
  void should_accept_another_host_name_only_with_hostname_validation_off() throws Exception {
    StandIn node = standIn(wrongName, false);

    connect(node, tls(false, false));

    // The same certificate, trusted as before: what refused it above was the host name.
    assertThat(node.handshake()).isEqualTo("ok");
  }

  @Test
  void should_present_the_keystores_client_certificate_to_a_node_that_requires_one() throws Exception {
    StandIn node = standIn(rightName, true);

    connect(node, tls(true, true));

    assertThat(node.handshake()).isEqualTo("ok, client CN=idgen-server");
  }

  @Test
  void should_be_refused_by_a_node_that_requires_a_client_certificate_without_a_keystore() throws Exception {
    StandIn node = standIn(rightName, true);

    connect(node, tls(true, false));

    assertThat(node.handshake()).startsWith("failed:");
  }

  @Test
  void should_give_up_at_once_on_a_keystore_it_cannot_open_even_when_it_would_wait_for_cassandra() throws Exception {
    StandIn node = standIn(rightName, true);
    CassandraSettings.Tls good = tls(true, true);
    CassandraSettings.Tls wrongPassword = new CassandraSettings.Tls(true, good.truststore(),
        good.truststorePassword(), good.keystore(), Optional.of("not-the-password"), true);
    CassandraSettings settings = CassandraSettings.local(List.of("127.0.0.1:" + node.port()), "dc1", "idgen",
        Map.of("dc1", 1)).withTls(wrongPassword); // reconnect-on-init: idgen's default, true
    CassandraRangeStore store = CassandraRangeStore.open(settings, null);
    toClose.add(store);

    Throwable error = store.ready().toCompletableFuture().handle((ok, e) -> e).get(60, TimeUnit.SECONDS);

    // A configuration that waiting cannot mend: the driver builds the TLS engine before it connects.
    assertThat(error).isNotNull().hasMessageContaining("cannot connect to Cassandra");
  }

  /**
   * Opens the store on the stand-in, failing fast ({@code reconnect-on-init = false}): it cannot get past
   * the handshake (the stand-in speaks no CQL), so the connection always fails; returns why.
   */
  private Throwable connect(StandIn node, CassandraSettings.Tls tls) throws Exception {
    CassandraSettings settings = CassandraSettings.local(List.of("127.0.0.1:" + node.port()), "dc1", "idgen",
        Map.of("dc1", 1)).withTls(tls).withDriverConfig("advanced.reconnect-on-init = false");
    CassandraRangeStore store = CassandraRangeStore.open(settings, null);
    toClose.add(store);
    CompletableFuture<Throwable> failure = store.ready().toCompletableFuture().handle((ok, error) -> error);
    Throwable error = failure.get(60, TimeUnit.SECONDS);
    assertThat(error).as("a stand-in that speaks no CQL cannot be connected to").isNotNull();
    return error;
  }

  private CassandraSettings.Tls tls(boolean hostnameValidation, boolean clientCertificate) throws Exception {
    Path truststore = dir.resolve("truststore.p12");
    if (!Files.exists(truststore)) {
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      trust.setCertificateEntry("ca", ca.certificate());
      store(trust, truststore);
      store(client.keyStore(ca), dir.resolve("client.p12"));
    }
    return new CassandraSettings.Tls(true, Optional.of(truststore), Optional.of(PASSWORD),
        clientCertificate ? Optional.of(dir.resolve("client.p12")) : Optional.empty(),
        clientCertificate ? Optional.of(PASSWORD) : Optional.empty(), hostnameValidation);
  }

  private static void store(KeyStore ks, Path file) throws IOException, GeneralSecurityException {
    try (OutputStream out = Files.newOutputStream(file)) {
      ks.store(out, PASSWORD.toCharArray());
    }
  }

  private StandIn standIn(Issued certificate, boolean requireClientCertificate) throws Exception {
    StandIn s = new StandIn(certificate, requireClientCertificate);
    toClose.add(s);
    return s;
  }

  /**
   * A node that speaks TLS only: accepts on 127.0.0.1, completes (or fails) the handshake, records the
   * outcome, hangs up.
   */
  private static final class StandIn implements AutoCloseable {
    private final SSLServerSocket socket;
    private final BlockingQueue<String> handshakes = new LinkedBlockingQueue<>();
    private final Thread acceptor;

    StandIn(Issued certificate, boolean requireClientCertificate) throws Exception {
      KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keys.init(certificate.keyStore(ca), PASSWORD.toCharArray());
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      trust.setCertificateEntry("ca", ca.certificate());
      TrustManagerFactory trusted = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trusted.init(trust);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(keys.getKeyManagers(), trusted.getTrustManagers(), null);
      socket = (SSLServerSocket) context.getServerSocketFactory()
          .createServerSocket(0, 16, InetAddress.getByName("127.0.0.1"));
      socket.setNeedClientAuth(requireClientCertificate);
      acceptor = new Thread(this::accept, "tls-stand-in");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return socket.getLocalPort();
    }

    /** How the first handshake ended: "ok" (with the client's CN if it sent one) or "failed: why". */
    String handshake() throws InterruptedException {
      String outcome = handshakes.poll(60, TimeUnit.SECONDS);
      assertThat(outcome).as("a handshake with the stand-in").isNotNull();
      return outcome;
    }

    private void accept() {
      while (!socket.isClosed()) {
        try (SSLSocket s = (SSLSocket) socket.accept()) {
          s.setSoTimeout(30_000);
          try {
            s.startHandshake();
            Certificate[] peer = s.getSession().getPeerCertificates();
            handshakes.add("ok, client " + ((X509Certificate) peer[0]).getSubjectX500Principal().getName());
          } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
            handshakes.add("ok"); // no client certificate asked for, none sent
          } catch (IOException e) {
            handshakes.add("failed: " + e);
          }
        } catch (SocketException e) {
          return; // closed
        } catch (IOException e) {
          handshakes.add("failed: " + e);
        }
      }
    }

    @Override
    public void close() throws Exception {
      socket.close();
      acceptor.join(10_000);
    }
  }

  /** A certificate and its key, signed by a CA made here (EC P-256, valid from an hour ago for a day). */
  private record Issued(X509Certificate certificate, KeyPair keys) {

    static Issued ca(String cn) throws Exception {
      KeyPair keys = newKeys();
      X509v3CertificateBuilder b = builder(new X500Name("CN=" + cn), new X500Name("CN=" + cn), keys);
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
      return new Issued(sign(b, keys), keys);
    }

    static Issued leaf(Issued ca, String subject, List<String> dnsNames, List<String> addresses) throws Exception {
      KeyPair keys = newKeys();
      X509v3CertificateBuilder b = builder(
          new X500Name(ca.certificate().getSubjectX500Principal().getName()), new X500Name(subject), keys);
      b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      List<GeneralName> names = new ArrayList<>();
      dnsNames.forEach(n -> names.add(new GeneralName(GeneralName.dNSName, n)));
      addresses.forEach(a -> names.add(new GeneralName(GeneralName.iPAddress, a)));
      if (!names.isEmpty()) {
        b.addExtension(Extension.subjectAlternativeName, false,
            new GeneralNames(names.toArray(GeneralName[]::new)));
      }
      return new Issued(sign(b, ca.keys()), keys);
    }

    /** A PKCS#12 keystore with this certificate (chained to {@code ca}) and its key. */
    KeyStore keyStore(Issued ca) throws Exception {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      ks.setKeyEntry("key", keys.getPrivate(), PASSWORD.toCharArray(),
          new Certificate[] {certificate, ca.certificate()});
      return ks;
    }

    private static KeyPair newKeys() throws GeneralSecurityException {
      KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
      g.initialize(new ECGenParameterSpec("secp256r1"));
      return g.generateKeyPair();
    }

    private static X509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair keys) {
      Instant now = Instant.now();
      return new JcaX509v3CertificateBuilder(issuer, BigInteger.valueOf(now.toEpochMilli()),
          Date.from(now.minus(Duration.ofHours(1))), Date.from(now.plus(Duration.ofDays(1))), subject,
          keys.getPublic());
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair signer) throws Exception {
      return new JcaX509CertificateConverter().getCertificate(
          b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
    }
  }
}
