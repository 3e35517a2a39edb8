package dev.idgen.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurationPackage;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.jdbc.autoconfigure.DataJdbcRepositoriesAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.annotation.Id;
import org.springframework.data.jdbc.core.JdbcAggregateTemplate;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.jdbc.repository.config.EnableJdbcRepositories;
import org.springframework.data.relational.core.mapping.Table;
import org.springframework.data.repository.CrudRepository;
import org.springframework.jdbc.core.JdbcTemplate;

/** Spring Data JDBC aggregates (records) whose {@code @Id @IdSequence} comes from a real daemon. */
class IdSequenceDataJdbcTest {
  private static Daemon daemon;

  @BeforeAll
  static void startDaemon(@TempDir Path dir) {
    daemon = new Daemon(dir, "shipments");
  }

  @AfterAll
  static void stopDaemon() {
    daemon.close();
  }

  /** An immutable aggregate: the callback goes through the mapping context's accessor (withId). */
  @Table("shipments")
  record Shipment(@Id @IdSequence("shipments") Long id, String label) {
    Shipment withId(Long id) {
      return new Shipment(id, label);
    }
  }

  /** An aggregate whose annotated id is not a number: the callback refuses it, naming the field. */
  @Table("labels")
  record Label(@Id @IdSequence("shipments") String id, String text) {}

  /** A repository as an application declares it; Spring Data implements it. */
  interface Shipments extends CrudRepository<Shipment, Long> {}

  /** The application: its package is where Spring Data looks for repositories. */
  @Configuration(proxyBeanMethods = false)
  @AutoConfigurationPackage
  @EnableJdbcRepositories(considerNestedRepositories = true, basePackageClasses = IdSequenceDataJdbcTest.class)
  static class App {}

  private static ApplicationContextRunner application() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdGenClientAutoConfiguration.class,
            DataSourceAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
            DataSourceTransactionManagerAutoConfiguration.class, DataJdbcRepositoriesAutoConfiguration.class))
        .withUserConfiguration(App.class)
        .withPropertyValues("idgen.client.targets=" + daemon.target(), "idgen.client.tls.enabled=false");
  }

  @Test
  void should_fill_the_ids_of_aggregates_saved_through_a_repository() {
    application().run(context -> {
      assertThat(context).hasNotFailed();
      context.getBean(JdbcTemplate.class)
          .execute("CREATE TABLE \"shipments\" (id BIGINT PRIMARY KEY, label VARCHAR(40))");
      Shipments shipments = context.getBean(Shipments.class);

      Shipment first = shipments.save(new Shipment(null, "books"));
      Shipment second = shipments.save(new Shipment(null, "lamps"));

      assertThat(first.id()).isNotNull().isPositive();
      assertThat(second.id()).isNotNull().isNotEqualTo(first.id());
      assertThat(shipments.findById(second.id())).contains(second);
      assertThat(shipments.count()).isEqualTo(2);
    });
  }

  @Test
  void should_refuse_an_annotated_id_that_is_not_a_long_naming_the_field() {
    application().run(context -> {
      assertThat(context).hasNotFailed();
      context.getBean(JdbcTemplate.class)
          .execute("CREATE TABLE \"labels\" (id VARCHAR(40) PRIMARY KEY, text VARCHAR(40))");
      JdbcAggregateTemplate template = context.getBean(JdbcAggregateTemplate.class);

      assertThatThrownBy(() -> template.insert(new Label(null, "fragile")))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("Label.id")
          .hasMessageContaining("@IdSequence(\"shipments\") fills a long or Long id, not java.lang.String");
    });
  }

  @Test
  void should_fill_a_null_id_from_the_sequence_and_keep_a_set_one() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdGenClientAutoConfiguration.class,
            DataSourceAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
            DataSourceTransactionManagerAutoConfiguration.class, DataJdbcRepositoriesAutoConfiguration.class))
        .withUserConfiguration(App.class)
        .withPropertyValues("idgen.client.targets=" + daemon.target(), "idgen.client.tls.enabled=false")
        .run(context -> {
          assertThat(context).hasNotFailed();
          context.getBean(JdbcTemplate.class)
              .execute("CREATE TABLE \"shipments\" (id BIGINT PRIMARY KEY, label VARCHAR(40))");
          JdbcAggregateTemplate template = context.getBean(JdbcAggregateTemplate.class);

          Shipment saved = template.insert(new Shipment(null, "books"));
          Shipment kept = template.insert(new Shipment(424242L, "chairs"));

          assertThat(saved.id()).isNotNull().isPositive().isNotEqualTo(424242L);
          assertThat(template.findById(saved.id(), Shipment.class)).isEqualTo(saved);
          assertThat(kept.id()).isEqualTo(424242L);
          assertThat(template.findById(424242L, Shipment.class).label()).isEqualTo("chairs");
        });
  }
}
