package dev.idgen.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs an idgen daemon for the annotated test class, with the sequences it names, and injects what talks
 * to it: an {@code IdGenClient}, an {@code IdSource} per {@link Sequence @Sequence("name")} parameter, and the
 * daemon's address as an {@link IdgenTarget @IdgenTarget String}.
 *
 * <pre>{@code
 * @IdgenDaemonTest(sequences = {"orders", "invoices"})
 * class OrderServiceTest {
 *   @Test
 *   void should_number_orders(@Sequence("orders") IdSource orders) {
 *     assertThat(orders.next()).isPositive();
 *   }
 * }
 * }</pre>
 *
 * <p>The daemon starts once per class, before its first test, and stops after its last, with its temporary
 * directory. See {@link IdgenDaemonExtension} for what it runs.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(IdgenDaemonExtension.class)
public @interface IdgenDaemonTest {
  /**
   * Returns the sequences to create, each with the server's defaults (first ID 1, no max below
   * {@link Long#MAX_VALUE}). Names follow {@code IdGenClient.sequence}'s rule.
   *
   * @return the names of the sequences to create
   */
  String[] sequences();
}
