package dev.idgen.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.beans.factory.annotation.Qualifier;

/**
 * Injects the {@link dev.idgen.client.IdSource} of a sequence named in {@code idgen.client.sequences}:
 * {@code IdGenService(@IdSequence("orders") IdSource orders)}. A name not listed there has no bean: the context
 * then fails to start, naming the qualifier.
 */
@Target({ElementType.FIELD, ElementType.PARAMETER, ElementType.METHOD, ElementType.TYPE, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Qualifier
public @interface IdSequence {
  /**
   * The sequence's name.
   *
   * @return the sequence's name
   */
  String value();
}
