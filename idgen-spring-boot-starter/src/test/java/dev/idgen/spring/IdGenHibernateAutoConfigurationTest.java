package dev.idgen.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.client.IdGenClient;
import dev.idgen.hibernate.IdgenHibernate;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.hibernate.autoconfigure.HibernatePropertiesCustomizer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The client in Hibernate's settings, through Spring Boot's {@link HibernatePropertiesCustomizer}. */
class IdGenHibernateAutoConfigurationTest {
  private static Daemon daemon;

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdGenClientAutoConfiguration.class))
      .withPropertyValues("idgen.client.targets=" + daemon.target(), "idgen.client.tls.enabled=false");

  @BeforeAll
  static void startDaemon(@TempDir Path dir) {
    daemon = new Daemon(dir, "orders");
  }

  @AfterAll
  static void stopDaemon() {
    daemon.close();
  }

  @Test
  void should_put_the_client_into_hibernates_settings() {
    runner.run(context -> {
      Map<String, Object> settings = new HashMap<>();
      context.getBean(HibernatePropertiesCustomizer.class).customize(settings);

      assertThat(settings).containsOnlyKeys(IdgenHibernate.CLIENT);
      assertThat(settings.get(IdgenHibernate.CLIENT)).isSameAs(context.getBean(IdGenClient.class));
    });
  }

  @Test
  void should_keep_a_client_the_application_set() {
    runner.run(context -> {
      Object own = new Object();
      Map<String, Object> settings = new HashMap<>(Map.of(IdgenHibernate.CLIENT, own));
      context.getBean(HibernatePropertiesCustomizer.class).customize(settings);

      assertThat(settings.get(IdgenHibernate.CLIENT)).isSameAs(own);
    });
  }

  @Test
  void should_back_off_without_idgen_hibernate() {
    runner.withClassLoader(new FilteredClassLoader(IdgenHibernate.class))
        .run(context -> {
          assertThat(context).hasSingleBean(IdGenClient.class);
          assertThat(context).doesNotHaveBean(HibernatePropertiesCustomizer.class);
        });
  }
}
