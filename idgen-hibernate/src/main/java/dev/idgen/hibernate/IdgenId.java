package dev.idgen.hibernate;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.hibernate.annotations.IdGeneratorType;

/**
 * Gives an entity's {@code @Id} (a {@code long} or {@code Long}) a new ID of an idgen sequence at
 * {@code persist}: {@code @Id @IdgenId("orders") Long id;}. The ID comes from the sequence's
 * {@link dev.idgen.client.IdSource}, in memory, so inserts batch as with any pre-insert generator.
 *
 * <p>The generator finds its client in the Hibernate setting {@link IdgenHibernate#CLIENT}. The entity
 * factory fails to start when the setting is missing, the field is not a {@code long}, or the name is
 * malformed. A sequence the servers do not know fails the first insert, naming it.
 */
@IdGeneratorType(IdgenIdGenerator.class)
@Target({ElementType.FIELD, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface IdgenId {
  /**
   * The sequence's name, as created on the servers.
   *
   * @return the sequence's name
   */
  String value();
}
