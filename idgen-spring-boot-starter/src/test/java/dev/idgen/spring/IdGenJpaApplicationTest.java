package dev.idgen.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idgen.client.IdGenClient;
import dev.idgen.client.IdSource;
import dev.idgen.hibernate.IdgenId;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurationPackage;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/** An {@code @IdgenId} entity under Spring Boot's JPA (Hibernate, H2) with nothing but the starter's properties. */
class IdGenJpaApplicationTest {
  private static Daemon daemon;

  @BeforeAll
  static void startDaemon(@TempDir Path dir) {
    daemon = new Daemon(dir, "parcels");
  }

  @AfterAll
  static void stopDaemon() {
    daemon.close();
  }

  /** An entity as an application writes it. */
  @Entity
  @Table(name = "parcels")
  static class Parcel {
    @Id
    @IdgenId("parcels")
    Long id;

    String label;

    Parcel() {}

    Parcel(String label) {
      this.label = label;
    }
  }

  /** The application: its package is where Spring Boot looks for entities. */
  @Configuration(proxyBeanMethods = false)
  @AutoConfigurationPackage
  static class App {}

  @Test
  void should_persist_an_entity_with_an_id_from_the_sequence() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdGenClientAutoConfiguration.class,
            DataSourceAutoConfiguration.class, HibernateJpaAutoConfiguration.class))
        .withUserConfiguration(App.class)
        .withPropertyValues("idgen.client.targets=" + daemon.target(), "idgen.client.tls.enabled=false",
            "spring.jpa.hibernate.ddl-auto=create-drop")
        .run(context -> {
          assertThat(context).hasNotFailed();
          EntityManagerFactory emf = context.getBean(EntityManagerFactory.class);
          Parcel parcel = new Parcel("books");
          try (EntityManager em = emf.createEntityManager()) {
            em.getTransaction().begin();
            em.persist(parcel);
            em.getTransaction().commit();
          }
          IdSource parcels = context.getBean(IdGenClient.class).sequence("parcels");

          assertThat(parcel.id).isNotNull().isPositive();
          // The same sequence: the next ID from it is past the entity's (one client, one lease).
          assertThat(parcels.next()).isGreaterThan(parcel.id);
          try (EntityManager em = emf.createEntityManager()) {
            assertThat(em.find(Parcel.class, parcel.id).label).isEqualTo("books");
          }
        });
  }
}
