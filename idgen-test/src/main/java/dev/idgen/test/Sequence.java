package dev.idgen.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Asks {@link IdgenDaemonExtension} for the {@code IdSource} of a sequence the test named, as a parameter of a
 * test method, a lifecycle method or the test class's constructor: {@code @Sequence("orders") IdSource orders}.
 */
@Target(ElementType.PARAMETER)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Sequence {
  /**
   * Returns the sequence's name: one of those in {@link IdgenDaemonTest#sequences()} or
   * {@link IdgenDaemonExtension#withSequences(String...)}.
   *
   * @return the sequence's name
   */
  String value();
}
