package dev.idgen.spring;

import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdGenClientBuilder;
import dev.idgen.client.IdGenClientMetrics;
import dev.idgen.client.IdSource;
import dev.idgen.hibernate.IdgenHibernate;
import io.grpc.TlsChannelCredentials;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.boot.hibernate.autoconfigure.HibernatePropertiesCustomizer;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * The idgen client for Spring Boot: an {@link IdGenClient} bean built from {@code idgen.client.*}
 * ({@link IdGenClientProperties}) and closed with the context, an {@link IdSource} bean per sequence of
 * {@code idgen.client.sequences} (inject {@code @IdSequence("orders") IdSource}), and, when the application
 * has them, a health indicator {@code idgen} (Spring Boot's health module, as Actuator brings it) and the
 * client's metrics ({@link IdGenClientMetrics}, bound to the application's registries by Spring Boot's
 * Micrometer support), and, with idgen-hibernate and Spring Boot's Hibernate, the client in Hibernate's
 * settings for {@code @IdgenId} entities. Off with {@code idgen.client.enabled=false}; an application's own {@code IdGenClient}
 * bean replaces the one built here (then without the call outcomes and failover counts, which need the
 * interceptors installed here).
 */
@AutoConfiguration
@ConditionalOnClass(IdGenClient.class)
@ConditionalOnProperty(prefix = "idgen.client", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(IdGenClientProperties.class)
@Import(IdSourceRegistrar.class)
public class IdGenClientAutoConfiguration {

  /** The outcomes of the client's calls, for the health indicator. */
  @Bean
  @ConditionalOnMissingBean
  public IdGenCallOutcomes idGenCallOutcomes() {
    return new IdGenCallOutcomes();
  }

  /**
   * The client: properties first, then the customizers (in their order).
   *
   * @throws IllegalArgumentException (failing the context's start) when a setting is invalid, naming it
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public IdGenClient idGenClient(IdGenClientProperties properties, IdGenCallOutcomes outcomes,
      ObjectProvider<IdGenClientCustomizer> customizers) {
    IdGenClientBuilder builder = IdGenClient.builder().name(properties.getName()).intercept(outcomes);
    apply(properties, builder);
    customizers.orderedStream().forEach(c -> c.customize(builder));
    try {
      return builder.build();
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new IllegalArgumentException("idgen.client: " + e.getMessage()
          + (properties.getTargets().isEmpty() ? " (set idgen.client.targets, e.g. dns:///idgen:7070)" : ""), e);
    }
  }

  static void apply(IdGenClientProperties p, IdGenClientBuilder builder) {
    builder.targets(p.getTargets());
    IdGenClientProperties.Tls tls = p.getTls();
    if (!tls.isEnabled()) {
      builder.usePlaintext();
    } else if (tls.getCaFile() != null || tls.getCertFile() != null || tls.getKeyFile() != null) {
      builder.credentials(tlsCredentials(tls));
    }
    PropertyMapper map = PropertyMapper.get();
    map.from(p.getBearerTokenFile()).to(builder::bearerTokenFile);
    map.from(p.getCallDeadline()).to(builder::callDeadline);
    map.from(p.getWaitDeadline()).to(builder::waitDeadline);
    map.from(p.getLeaseLifetime()).to(builder::leaseLifetime);
    map.from(p.getMinLeaseSize()).to(builder::minLeaseSize);
    map.from(p.getMaxLeaseSize()).to(builder::maxLeaseSize);
    if (p.getRetryBackoffInitial() != null || p.getRetryBackoffMax() != null) {
      builder.retryBackoff(
          p.getRetryBackoffInitial() != null ? p.getRetryBackoffInitial() : IdGenClientBuilder.DEFAULT_INITIAL_BACKOFF,
          p.getRetryBackoffMax() != null ? p.getRetryBackoffMax() : IdGenClientBuilder.DEFAULT_MAX_BACKOFF);
    }
  }

  private static TlsChannelCredentials.Builder trust(TlsChannelCredentials.Builder b, Path caFile) throws IOException {
    return caFile == null ? b : b.trustManager(caFile.toFile());
  }

  private static io.grpc.ChannelCredentials tlsCredentials(IdGenClientProperties.Tls tls) {
    if ((tls.getCertFile() == null) != (tls.getKeyFile() == null)) {
      throw new IllegalArgumentException("idgen.client.tls: cert-file and key-file go together (mutual TLS);"
          + " cert-file=" + tls.getCertFile() + ", key-file=" + tls.getKeyFile());
    }
    try {
      TlsChannelCredentials.Builder b = trust(TlsChannelCredentials.newBuilder(), tls.getCaFile());
      if (tls.getCertFile() != null) {
        b.keyManager(tls.getCertFile().toFile(), tls.getKeyFile().toFile());
      }
      return b.build();
    } catch (IOException | RuntimeException e) {
      throw new UncheckedIOException("idgen.client.tls: cannot read ca-file " + tls.getCaFile() + ", cert-file "
          + tls.getCertFile() + " or key-file " + tls.getKeyFile() + ": " + e.getMessage(),
          e instanceof IOException io ? io : new IOException(e));
    }
  }

  /**
   * The client's meters, when Micrometer is there: Spring Boot binds every {@link MeterBinder} bean to the
   * application's registries (and so to {@code /actuator/prometheus}).
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterBinder.class)
  static class Metrics {
    @Bean
    @ConditionalOnMissingBean
    IdGenClientMetrics idGenClientMetrics() {
      return new IdGenClientMetrics();
    }

    /** Calls by status and failovers: the binder's interceptor on the client built above. */
    @Bean
    IdGenClientCustomizer idGenClientMetricsInterceptor(IdGenClientMetrics metrics) {
      return builder -> builder.intercept(metrics.interceptor());
    }

    /** Once every singleton exists (the client too): the binder may have been bound before or after. */
    @Bean
    SmartInitializingSingleton idGenClientMetricsMonitor(IdGenClientMetrics metrics, ObjectProvider<IdGenClient> client) {
      return () -> client.ifAvailable(metrics::monitor);
    }
  }

  /** {@code idgen} in the health endpoint, when Spring Boot's health module is there. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(HealthIndicator.class)
  @ConditionalOnEnabledHealthIndicator("idgen")
  static class HealthIndicatorConfiguration {
    @Bean
    @ConditionalOnMissingBean(name = "idgenHealthIndicator")
    IdGenHealthIndicator idgenHealthIndicator(IdGenCallOutcomes outcomes, ObjectProvider<IdSource> sources) {
      return new IdGenHealthIndicator(outcomes, sources.orderedStream().toList());
    }
  }

  /**
   * {@code @IdgenId} entities under Spring Boot's Hibernate: the client goes into Hibernate's settings as
   * {@link IdgenHibernate#CLIENT}. A value the application set there (spring.jpa.properties or its own
   * customizer, ordered before) is kept.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass({IdgenHibernate.class, HibernatePropertiesCustomizer.class})
  static class HibernateConfiguration {
    @Bean
    HibernatePropertiesCustomizer idGenHibernatePropertiesCustomizer(ObjectProvider<IdGenClient> client) {
      return settings -> {
        if (!settings.containsKey(IdgenHibernate.CLIENT)) {
          client.ifAvailable(c -> settings.put(IdgenHibernate.CLIENT, c));
        }
      };
    }
  }

  /** Spring Data JDBC: {@code @Id @IdSequence("orders")} ids filled before an aggregate is saved. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.data.jdbc.core.JdbcAggregateTemplate")
  static class DataJdbcConfiguration {
    @Bean
    @ConditionalOnMissingBean(IdSequenceBeforeConvertCallback.class)
    org.springframework.data.relational.core.mapping.event.BeforeConvertCallback<Object> idSequenceBeforeConvertCallback(
        ObjectProvider<org.springframework.data.relational.core.mapping.RelationalMappingContext> mapping,
        ObjectProvider<IdGenClient> client) {
      return new IdSequenceBeforeConvertCallback(mapping, client);
    }
  }
}
