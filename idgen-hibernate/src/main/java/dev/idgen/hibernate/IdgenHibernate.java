package dev.idgen.hibernate;

/**
 * The Hibernate setting that {@link IdgenId} reads. Put the application's {@link dev.idgen.client.IdGenClient}
 * object (not a string) into the properties Hibernate starts with:
 * {@code settings.put(IdgenHibernate.CLIENT, client)}. The Spring Boot starter does it by itself.
 */
public final class IdgenHibernate {
  /**
   * {@value}: the {@link dev.idgen.client.IdGenClient} that entity IDs come from. A test may put a
   * {@code java.util.function.Function<String, IdSource>} instead, from a sequence's name to its source.
   */
  public static final String CLIENT = "idgen.hibernate.client";

  private IdgenHibernate() {}
}
