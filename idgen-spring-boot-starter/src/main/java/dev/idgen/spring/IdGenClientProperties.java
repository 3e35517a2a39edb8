package dev.idgen.spring;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code idgen.client.*}: what {@link IdGenClientAutoConfiguration} gives the client builder. Unset values keep the
 * builder's defaults (docs/client.md, "Builder options"). A mutable JavaBean, as Spring's binder wants it; read
 * once, at start.
 */
@ConfigurationProperties(prefix = "idgen.client")
public class IdGenClientProperties {
  /** Whether to create the IdGenClient bean (and its sources, health indicator and metrics). */
  private boolean enabled = true;
  /**
   * The idgen servers: host:port, or dns:///name:port for every address a name resolves to. At least one, unless
   * an IdGenClientCustomizer adds channels.
   */
  private List<String> targets = new ArrayList<>();
  /** Sequences to create IdSource beans for, each named after its sequence and qualified @IdSequence("name"). */
  private List<String> sequences = new ArrayList<>();
  /** The client's name, in its thread names and in the client tag of its metrics. */
  private String name = "idgen";
  /** The deadline of each Allocate call; one that exceeds it is retried on another server. */
  private Duration callDeadline;
  /** The longest a caller waits when its source has nothing left; then IdGenClientException TIMED_OUT. */
  private Duration waitDeadline;
  /** How long a lease should last at the source's own rate. */
  private Duration leaseLifetime;
  /** The smallest lease, and the first one. */
  private Long minLeaseSize;
  /** The largest lease; at or below the servers' idgen.limits.max-ids-per-call. */
  private Long maxLeaseSize;
  /** The first retry back-off of a failed request (doubled per retry up to retry-backoff-max). */
  private Duration retryBackoffInitial;
  /** The longest retry back-off; also how long a failed server is avoided. */
  private Duration retryBackoffMax;
  /**
   * A file holding the bearer token sent with every call (a mounted secret), read again when it changes. Sent
   * over TLS only.
   */
  private Path bearerTokenFile;
  private final Tls tls = new Tls();

  /** How the client's channels to its targets connect. */
  public static class Tls {
    /** TLS (true) or plaintext (false). Plaintext only inside a trusted network: no bearer token is sent then. */
    private boolean enabled = true;
    /** PEM file of the CAs to trust instead of the JVM's (a private CA). */
    private Path caFile;
    /** PEM certificate chain of this client, for mutual TLS (with key-file). */
    private Path certFile;
    /** PEM private key (PKCS#8) of this client, for mutual TLS (with cert-file). */
    private Path keyFile;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Path getCaFile() {
      return caFile;
    }

    public void setCaFile(Path caFile) {
      this.caFile = caFile;
    }

    public Path getCertFile() {
      return certFile;
    }

    public void setCertFile(Path certFile) {
      this.certFile = certFile;
    }

    public Path getKeyFile() {
      return keyFile;
    }

    public void setKeyFile(Path keyFile) {
      this.keyFile = keyFile;
    }
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public List<String> getTargets() {
    return targets;
  }

  public void setTargets(List<String> targets) {
    this.targets = targets;
  }

  public List<String> getSequences() {
    return sequences;
  }

  public void setSequences(List<String> sequences) {
    this.sequences = sequences;
  }

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public Duration getCallDeadline() {
    return callDeadline;
  }

  public void setCallDeadline(Duration callDeadline) {
    this.callDeadline = callDeadline;
  }

  public Duration getWaitDeadline() {
    return waitDeadline;
  }

  public void setWaitDeadline(Duration waitDeadline) {
    this.waitDeadline = waitDeadline;
  }

  public Duration getLeaseLifetime() {
    return leaseLifetime;
  }

  public void setLeaseLifetime(Duration leaseLifetime) {
    this.leaseLifetime = leaseLifetime;
  }

  public Long getMinLeaseSize() {
    return minLeaseSize;
  }

  public void setMinLeaseSize(Long minLeaseSize) {
    this.minLeaseSize = minLeaseSize;
  }

  public Long getMaxLeaseSize() {
    return maxLeaseSize;
  }

  public void setMaxLeaseSize(Long maxLeaseSize) {
    this.maxLeaseSize = maxLeaseSize;
  }

  public Duration getRetryBackoffInitial() {
    return retryBackoffInitial;
  }

  public void setRetryBackoffInitial(Duration retryBackoffInitial) {
    this.retryBackoffInitial = retryBackoffInitial;
  }

  public Duration getRetryBackoffMax() {
    return retryBackoffMax;
  }

  public void setRetryBackoffMax(Duration retryBackoffMax) {
    this.retryBackoffMax = retryBackoffMax;
  }

  public Path getBearerTokenFile() {
    return bearerTokenFile;
  }

  public void setBearerTokenFile(Path bearerTokenFile) {
    this.bearerTokenFile = bearerTokenFile;
  }

  public Tls getTls() {
    return tls;
  }
}
