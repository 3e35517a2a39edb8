package dev.idgen.spring;

import dev.idgen.client.IdGenClientBuilder;

/**
 * A bean that adjusts the client builder after {@code idgen.client.*} was applied and before the client is built:
 * settings the properties lack (interceptors, an executor, call credentials), or channels the application builds
 * itself (an in-process channel in tests). Customizers run in their {@code @Order}.
 */
@FunctionalInterface
public interface IdGenClientCustomizer {
  /**
   * Adjusts the builder.
   *
   * @param builder the builder, with the properties applied
   */
  void customize(IdGenClientBuilder builder);
}
