package dev.idgen.server.transport;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Certificates made at test time with BouncyCastle: a CA, and leaf certificates it signs (EC P-256,
 * valid from an hour ago for a day), written as PEM files.
 */
public final class TestCertificates {

  /** A certificate with its key. */
  public record Issued(X509Certificate certificate, KeyPair keys) {
    /** Writes {@code <name>.crt} (PEM) and {@code <name>.key} (PKCS#8 PEM) into {@code dir}; returns the .crt. */
    public Path write(Path dir, String name) throws IOException, GeneralSecurityException {
      Path crt = dir.resolve(name + ".crt");
      Files.writeString(crt, pem("CERTIFICATE", certificate.getEncoded()), StandardCharsets.US_ASCII);
      Files.writeString(dir.resolve(name + ".key"), pem("PRIVATE KEY", keys.getPrivate().getEncoded()),
          StandardCharsets.US_ASCII);
      return crt;
    }
  }

  private TestCertificates() {}

  public static Issued ca(String cn) throws Exception {
    KeyPair keys = keys();
    X509v3CertificateBuilder b = builder(new X500Name("CN=" + cn), new X500Name("CN=" + cn), BigInteger.ONE, keys);
    b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
    b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
    return new Issued(sign(b, keys), keys);
  }

  /**
   * A leaf certificate with DNS/IP names. {@code subject} lists the RDNs in encoding order, most general
   * first as openssl does ("O=Acme,CN=orders-service", which RFC 2253 prints "CN=orders-service,O=Acme").
   */
  public static Issued leaf(Issued ca, String subject, long serial, String... dnsNames) throws Exception {
    KeyPair keys = keys();
    X500Name issuer = new X500Name(ca.certificate().getSubjectX500Principal().getName());
    X509v3CertificateBuilder b = builder(issuer, new X500Name(subject), BigInteger.valueOf(serial), keys);
    b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
    GeneralName[] names = new GeneralName[dnsNames.length + 1];
    for (int i = 0; i < dnsNames.length; i++) {
      names[i] = new GeneralName(GeneralName.dNSName, dnsNames[i]);
    }
    names[dnsNames.length] = new GeneralName(GeneralName.iPAddress, "127.0.0.1");
    b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names));
    return new Issued(sign(b, ca.keys()), keys);
  }

  static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }

  private static KeyPair keys() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"));
    return g.generateKeyPair();
  }

  private static X509v3CertificateBuilder builder(X500Name issuer, X500Name subject, BigInteger serial,
      KeyPair keys) {
    Instant now = Instant.now();
    return new JcaX509v3CertificateBuilder(issuer, serial, Date.from(now.minus(Duration.ofHours(1))),
        Date.from(now.plus(Duration.ofDays(1))), subject, keys.getPublic());
  }

  private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair signer)
      throws OperatorCreationException, GeneralSecurityException {
    return new JcaX509CertificateConverter().getCertificate(
        b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
  }
}
