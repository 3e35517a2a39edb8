package dev.idgen.server.access;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.server.transport.TestCertificates;
import java.security.cert.X509Certificate;
import org.junit.jupiter.api.Test;

/** The identities of a client certificate (end to end over mutual TLS: {@code TlsTest}). */
class CertificateIdentitiesTest {

  @Test
  void should_identify_a_certificate_by_cn_subject_and_dns_names() throws Exception {
    TestCertificates.Issued ca = TestCertificates.ca("idgen-test-ca");
    X509Certificate cert = TestCertificates.leaf(ca, "O=Acme,CN=orders-service", 7, "orders.internal").certificate();
    javax.net.ssl.SSLSession session = (javax.net.ssl.SSLSession) java.lang.reflect.Proxy.newProxyInstance(
        getClass().getClassLoader(), new Class<?>[] {javax.net.ssl.SSLSession.class},
        (proxy, method, args) -> method.getName().equals("getPeerCertificates")
            ? new java.security.cert.Certificate[] {cert} : null);

    assertThat(AccessInterceptor.certificateIdentities(session))
        .containsExactly("orders-service", "CN=orders-service,O=Acme", "orders.internal");
  }
}
